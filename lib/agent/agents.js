'use strict';

// The two public agent classes: the keep-alive mixin over core's agents.
const http = require('node:http');
const https = require('node:https');
const { keepAlive } = require('./keep_alive');
const { tlsSafeName } = require('./tls_name');
const { CREATE_HTTPS_CONNECTION } = require('../constants');

/** A keep-alive http.Agent. */
const HttpAgent = keepAlive(http.Agent, { name: 'HttpAgent' });

/** A keep-alive https.Agent (instanceof https.Agent), pools named without TLS secrets. */
const HttpsAgent = keepAlive(https.Agent, { name: 'HttpsAgent', getName: tlsSafeName });

// agentkeepalive 4.x exposes core's https createConnection under this symbol.
HttpsAgent.prototype[CREATE_HTTPS_CONNECTION] = function createHttpsConnection(options, callback) {
  return https.Agent.prototype.createConnection.call(this, options, callback);
};

module.exports = { HttpAgent, HttpsAgent };
