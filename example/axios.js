'use strict';

// axios with steady-agent: pass the agents once, to an axios instance.
// Run: node example/axios.js
const http = require('node:http');
const axios = require('axios');
const { HttpAgent, HttpsAgent } = require('steady-agent');

const client = axios.create({
  httpAgent: new HttpAgent({ freeSocketTimeout: '4s' }),
  httpsAgent: new HttpsAgent({ freeSocketTimeout: '4s' }),
  proxy: false, // an HTTP(S)_PROXY from the environment would bypass the agents
  timeout: 10000, // axios's own: without it axios sets the socket timeout to 0, the agent's timeout off
});

async function main() {
  const server = http.createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ path: req.url }));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  const { httpAgent } = client.defaults;

  try {
    // Sequential requests share one socket.
    for (let i = 1; i <= 3; i++) {
      const { status, data } = await client.get(`${origin}/items/${i}`);
      console.log(`GET /items/${i} -> ${status} ${JSON.stringify(data)}`);
    }
    // Concurrent requests open more sockets (up to maxSockets), then reuse them.
    const results = await Promise.all([1, 2, 3].map((i) => client.get(`${origin}/batch/${i}`)));
    console.log(`3 concurrent requests -> ${results.map((res) => res.status).join(', ')}`);
    const status = httpAgent.getCurrentStatus();
    console.log(`sockets created: ${status.createSocketCount}, requests: ${status.requestCount}`);
  } finally {
    client.defaults.httpAgent.destroy();
    client.defaults.httpsAgent.destroy();
    server.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
