'use strict';

// The clients of steady-agent/retry, each as send(url, options) resolving
// with { status, body }: plain http(s).request through the retry module's
// request(), axios with axios-retry, got (14, or 13 on Node 18), node-fetch 2 and 3. options:
// { agent, method, headers, body, retry } where `retry` is the helpers'
// settings ({ retries, delay, onRetry }). race.js and the tests
// (test/retry.test.js, test/retry-race.test.js) drive them alike. got and
// node-fetch 3 are ES modules only, loaded by loadRetryClients() with
// import(): require() of an ES module works only from Node 20.19 and 22.12.
const axios = require('axios');
const axiosRetry = require('axios-retry').default;
const fetchV2 = require('node-fetch-2');
const { importGot } = require('./got');
const { axiosRetryOptions, gotRetryOptions, wrapFetch, request } = require('steady-agent/retry');

async function readBody(res) {
  const chunks = [];
  for await (const chunk of res) chunks.push(chunk);
  return Buffer.concat(chunks).toString();
}

function fetchClient(fetch) {
  return async (url, { agent, method, headers, body, retry }) => {
    const res = await wrapFetch(fetch, retry)(url, { agent, method, headers, body });
    return { status: res.status, body: await res.text() };
  };
}

async function loadRetryClients() {
  const got = await importGot();
  const fetchV3 = (await import('node-fetch')).default;
  return {
    'http.request (request())': async (url, { agent, method, headers, body, retry }) => {
      const res = await request(url, { agent, method, headers, body, retry });
      return { status: res.statusCode, body: await readBody(res) };
    },
    'axios + axios-retry': async (url, { agent, method, headers, body, retry }) => {
      const client = axios.create({ httpAgent: agent, httpsAgent: agent, proxy: false, timeout: 15000 });
      axiosRetry(client, axiosRetryOptions(retry));
      const res = await client.request({ url, method, headers, data: body, responseType: 'text', validateStatus: null });
      return { status: res.status, body: res.data };
    },
    got: async (url, { agent, method, headers, body, retry }) => {
      const res = await got(url, {
        ...gotRetryOptions(retry),
        agent: { http: agent, https: agent },
        method,
        headers,
        body,
        throwHttpErrors: false,
      });
      return { status: res.statusCode, body: res.body };
    },
    'node-fetch v2': fetchClient(fetchV2),
    'node-fetch v3': fetchClient(fetchV3),
  };
}

const RETRY_CLIENT_NAMES = Object.freeze([
  'http.request (request())',
  'axios + axios-retry',
  'got',
  'node-fetch v2',
  'node-fetch v3',
]);

module.exports = { loadRetryClients, RETRY_CLIENT_NAMES };
