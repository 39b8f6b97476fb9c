'use strict';

// Five sequential requests through one keep-alive agent: the first opens a
// socket, the other four reuse it. Run: node example/http.js
// (add DEBUG=steady-agent to see the agent's own log).
const http = require('node:http');
const { HttpAgent } = require('steady-agent');

const agent = new HttpAgent({
  freeSocketTimeout: '4s', // close a socket idle in the pool for 4 s
  timeout: '30s', // close a socket inactive for 30 s while serving a request
});

function get(url) {
  return new Promise((resolve, reject) => {
    http.get(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => { body += chunk; });
      res.on('end', () => resolve({ status: res.statusCode, body, reused: res.req.reusedSocket }));
    }).on('error', reject);
  });
}

async function main() {
  const server = http.createServer((req, res) => res.end(`hello from ${req.url}`));
  server.keepAliveTimeout = 5000; // announced to the client as Keep-Alive: timeout=5
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;

  try {
    for (let i = 1; i <= 5; i++) {
      const { status, body, reused } = await get(`${origin}/${i}`);
      console.log(`GET /${i} -> ${status} "${body}" (${reused ? 'reused socket' : 'new socket'})`);
    }
    const status = agent.getCurrentStatus();
    console.log(`sockets created: ${status.createSocketCount}, requests: ${status.requestCount}`);
    console.log('status:', JSON.stringify(status));
  } finally {
    agent.destroy();
    server.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
