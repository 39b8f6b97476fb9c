'use strict';

// The clients of steady-agent/retry, shared with benchmark/race.js: see
// benchmark/lib/retry_clients.js. Call loadRetryClients() from a `before`
// hook (got and node-fetch 3 are loaded with import()).
module.exports = require('../../benchmark/lib/retry_clients');
