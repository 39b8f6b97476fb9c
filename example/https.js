'use strict';

// HttpsAgent is an https.Agent: TLS options such as `ca` go to the agent and
// every pooled socket is verified once, when it connects.
// Run: node example/https.js
//
// The server uses the test fixture certificate for 127.0.0.1, signed by the
// fixture CA; point `ca` at your own CA (or leave it out for public sites).
const fs = require('node:fs');
const https = require('node:https');
const path = require('node:path');
const { HttpsAgent } = require('steady-agent');

const fixtures = path.join(__dirname, '..', 'test', 'fixtures');
const read = (name) => fs.readFileSync(path.join(fixtures, name));

const agent = new HttpsAgent({
  ca: read('ca.pem'),
  freeSocketTimeout: '4s',
  maxSockets: 10,
});

function get(url) {
  return new Promise((resolve, reject) => {
    https.get(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => { body += chunk; });
      res.on('end', () => resolve({ status: res.statusCode, body, reused: res.req.reusedSocket }));
    }).on('error', reject);
  });
}

async function main() {
  const server = https.createServer({ key: read('server-key.pem'), cert: read('server-cert.pem') },
    (req, res) => res.end(`secure hello from ${req.url}`));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `https://127.0.0.1:${server.address().port}`;

  try {
    console.log(`agent instanceof https.Agent: ${agent instanceof https.Agent}`);
    for (let i = 1; i <= 5; i++) {
      const { status, body, reused } = await get(`${origin}/${i}`);
      console.log(`GET /${i} -> ${status} "${body}" (${reused ? 'reused socket' : 'new TLS socket'})`);
    }
    const status = agent.getCurrentStatus();
    console.log(`TLS handshakes: ${status.createSocketCount}, requests: ${status.requestCount}`);
  } finally {
    agent.destroy();
    server.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
