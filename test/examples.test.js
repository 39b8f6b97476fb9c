'use strict';

// Every program in example/ runs to completion against the local server it
// starts, exits 0, writes nothing to stderr and prints the lines below.
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const path = require('node:path');

const dir = path.join(__dirname, '..', 'example');

function run(file) {
  return new Promise((resolve) => {
    const env = { ...process.env };
    delete env.DEBUG; // the examples' own output only
    execFile(process.execPath, ['--throw-deprecation', path.join(dir, file)], {
      cwd: dir,
      env,
      timeout: 30000,
    }, (err, stdout, stderr) => {
      resolve({ code: err ? err.code ?? err.signal : 0, stdout, stderr });
    });
  });
}

const examples = {
  'http.js': [
    /^GET \/1 -> 200 "hello from \/1" \(new socket\)$/m,
    /^GET \/5 -> 200 "hello from \/5" \(reused socket\)$/m,
    /^sockets created: 1, requests: 5$/m,
  ],
  'https.js': [
    /^agent instanceof https\.Agent: true$/m,
    /^GET \/5 -> 200 "secure hello from \/5" \(reused socket\)$/m,
    /^TLS handshakes: 1, requests: 5$/m,
  ],
  'axios.js': [
    /^GET \/items\/3 -> 200 \{"path":"\/items\/3"\}$/m,
    /^3 concurrent requests -> 200, 200, 200$/m,
    /^sockets created: \d+, requests: 6$/m,
  ],
  'monitoring.js': [
    /^\[monitor\] status changed: created=\d+ closed=\d+ requests=\d+/m,
    /^\[load\] sent \d+ requests; now idle$/m,
    /^\[event\] 127\.0\.0\.1:\d+: socket closed: free-timeout after \d+ requests \(\d+ ms\)$/m,
    /^\[stats\] 127\.0\.0\.1:\d+: requests=\d+ reused=\d+ created=\d+ closed=\d+ closeReasons=\{"free-timeout":\d+\} waited=[1-9]\d*/m,
    /^\[event\] [1-9]\d* requests waited for a socket$/m,
  ],
  'opentelemetry.js': [
    /^6 requests -> 200, 200, 200, 200, 200, 200$/m,
    /name: 'http\.client\.open_connections'/,
    /name: 'http\.client\.connection\.duration'/,
    /name: 'http\.client\.request\.time_in_queue'/,
    /'server\.port': \d+,/,
  ],
  'proxy.js': [
    /^GET https \/1 -> 200 "secure hello from \/1" \(new tunnel\)$/m,
    /^GET https \/3 -> 200 "secure hello from \/3" \(reused tunnel\)$/m,
    /^GET http \/2 -> 200 "hello from \/2" \(reused connection to the proxy\)$/m,
    /^GET http:\/\/localhost\/direct -> 200 \(no proxy\)$/m,
    /^tunnels opened: 1, https requests: 3$/m,
    /^the proxy saw: CONNECT 127\.0\.0\.1:PORT \| GET http:\/\/127\.0\.0\.1:PORT\/1 \| GET http:\/\/127\.0\.0\.1:PORT\/2$/m,
  ],
  'graceful-shutdown.js': [
    /^SIGTERM: closing the agent with 3 requests in flight and 1 queued$/m,
    /^a new request: ERR_AGENT_CLOSED$/m,
    /^response: done \/d$/m,
    /^agent closed: no socket left$/m,
    /^server closed$/m,
    /^exit 0: 4 requests served, 3\/3 sockets closed$/m,
  ],
};

describe('examples', () => {
  for (const [file, expected] of Object.entries(examples)) {
    it(`example/${file} runs and exits 0`, async () => {
      const { code, stdout, stderr } = await run(file);
      assert.equal(code, 0, `exit ${code}\n${stdout}\n${stderr}`);
      assert.equal(stderr, '');
      for (const line of expected) assert.match(stdout, line);
    });
  }
});
