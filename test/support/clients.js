'use strict';

// The HTTP clients people plug a keep-alive agent into, each as
// get(url, agent) resolving with { status, body }, each at its current major
// (axios 1, got 14, node-fetch 3, superagent 10) and the older majors users
// still run (got 13, the newest for Node 18; node-fetch 2). got and
// node-fetch 3 are ES modules only: loadClients() imports them (require() of
// an ES module works only from Node 20.19 and 22.12, and the suite runs on
// Node 18 too), so call it from a `before` hook. got 14 needs Node 20: on
// Node 18 its entry is null, and the test says it is skipped.
const axios = require('axios');
const superagent = require('superagent');
const fetchV2 = require('node-fetch-2');
const { request } = require('./request');
const { got14Runs, importGot13 } = require('./got');

function gotClient(got) {
  return async (url, agent) => {
    const res = await got(url, {
      agent: { http: agent, https: agent },
      http2: false,
      retry: { limit: 0 },
      throwHttpErrors: false,
    });
    return { status: res.statusCode, body: res.body };
  };
}

async function loadClients() {
  const got14 = got14Runs() ? (await import('got')).default : null;
  const got13 = await importGot13();
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
    'got 14 (agent: { http, https })': got14 && gotClient(got14),
    'got 13 (agent: { http, https })': gotClient(got13),
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
  'got 14 (agent: { http, https })',
  'got 13 (agent: { http, https })',
  'node-fetch v2',
  'node-fetch v3',
  'superagent (.agent())',
]);

module.exports = { loadClients, CLIENT_NAMES };
