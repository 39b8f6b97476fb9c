'use strict';

// The HTTP clients people plug a keep-alive agent into, each as
// get(url, agent) resolving with { status, body }. got and node-fetch 3 are
// ES modules only: loadClients() imports them (require() of an ES module
// works only from Node 20.19 and 22.12, and the suite runs on Node 18 too),
// so call it from a `before` hook.
const axios = require('axios');
const superagent = require('superagent');
const fetchV2 = require('node-fetch-2');
const { request } = require('./request');

async function loadClients() {
  const got = (await import('got')).default;
  const fetchV3 = (await import('node-fetch')).default;
  return {
    'http.request / https.request': async (url, agent) => {
      const { status, body } = await request(url, { agent });
      return { status, body };
    },
    // axios's own proxy handling off: the agent does it.
    'axios (httpAgent / httpsAgent, proxy: false)': async (url, agent) => {
      const res = await axios.get(url, {
        adapter: 'http',
        proxy: false,
        responseType: 'text',
        httpAgent: agent,
        httpsAgent: agent,
      });
      return { status: res.status, body: res.data };
    },
    'got (agent: { http, https })': async (url, agent) => {
      const res = await got(url, {
        agent: { http: agent, https: agent },
        http2: false,
        retry: { limit: 0 },
        throwHttpErrors: false,
      });
      return { status: res.statusCode, body: res.body };
    },
    'node-fetch v2': async (url, agent) => {
      const res = await fetchV2(url, { agent });
      return { status: res.status, body: await res.text() };
    },
    'node-fetch v3': async (url, agent) => {
      const res = await fetchV3(url, { agent });
      return { status: res.status, body: await res.text() };
    },
    'superagent (.agent())': async (url, agent) => {
      const res = await superagent.get(url).agent(agent).buffer(true);
      return { status: res.status, body: res.text };
    },
  };
}

/** The clients' names, known before loadClients() runs (mocha builds its tests first). */
const CLIENT_NAMES = Object.freeze([
  'http.request / https.request',
  'axios (httpAgent / httpsAgent, proxy: false)',
  'got (agent: { http, https })',
  'node-fetch v2',
  'node-fetch v3',
  'superagent (.agent())',
]);

module.exports = { loadClients, CLIENT_NAMES };
