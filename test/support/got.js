'use strict';

// got 14 where Node allows it (20 and later), got 13 on Node 18: shared with
// the benchmarks, see benchmark/lib/got.js.
module.exports = require('../../benchmark/lib/got');
