'use strict';

// Preloaded by test/fetch-import-order.test.js before every fetch test:
// npm's undici (the one STEADY_UNDICI_FIRST names) loads first and installs
// its global dispatcher before anything loads steady-agent/fetch.
const path = require('node:path');

const name = process.env.STEADY_UNDICI_FIRST;
if (!name) throw new Error('STEADY_UNDICI_FIRST names the undici package to load first');
const fetchDir = path.join(__dirname, '..', '..', 'lib', 'fetch');
if (Object.keys(require.cache).some((file) => file.startsWith(fetchDir))) throw new Error('steady-agent/fetch loaded before npm\'s undici');
require(name);
