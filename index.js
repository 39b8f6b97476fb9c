'use strict';

// steady-agent: a keep-alive HTTP/HTTPS agent, a drop-in for agentkeepalive 4.x.
// `require('steady-agent')` is HttpAgent; HttpsAgent and constants hang off it.
const { HttpAgent, HttpsAgent } = require('./lib/agent/agents');
const constants = require('./lib/constants');

module.exports = HttpAgent;
module.exports.HttpAgent = HttpAgent;
module.exports.HttpsAgent = HttpsAgent;
module.exports.constants = constants;
