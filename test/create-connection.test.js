'use strict';

// agent.createConnection() called directly, in every argument form core's
// agents accept: https's `(port[, host][, options][, callback])` as well as
// `(options[, callback])`. Nothing is lost on the way: the options reach TLS,
// a TLS failure reaches the caller's listener, and the caller's options are
// not written to.
const assert = require('node:assert/strict');
const { once } = require('node:events');
const { HttpAgent, HttpsAgent, constants } = require('..');
const { createServer, fixtures } = require('./support/servers');

/** Sends one request by hand and resolves with the raw answer. */
async function exchange(socket) {
  socket.setEncoding('latin1');
  let answer = '';
  socket.on('data', (chunk) => { answer += chunk; });
  socket.write('GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
  await once(socket, 'end');
  return answer;
}

describe('HttpsAgent#createConnection argument forms', () => {
  let server;
  let agent;
  before(async () => { server = await createServer('https:', (req, res) => res.end('hello')); });
  after(() => server.close());
  beforeEach(() => { agent = new HttpsAgent(); });
  afterEach(() => agent.destroy());

  const forms = {
    '(options)': (port) => [{ port, host: '127.0.0.1', servername: 'localhost', ca: fixtures.ca }],
    '(port, options)': (port) => [port, { host: '127.0.0.1', servername: 'localhost', ca: fixtures.ca }],
    '(port, host, options)': (port) => [port, '127.0.0.1', { servername: 'localhost', ca: fixtures.ca }],
    '(port, host, options, callback)': (port) => [port, '127.0.0.1', { servername: 'localhost', ca: fixtures.ca }, () => {}],
  };
  for (const [form, args] of Object.entries(forms)) {
    it(`${form}: the options reach TLS and the socket is the agent's`, async () => {
      const given = args(server.port);
      const snapshot = JSON.stringify(given);
      const socket = agent.createConnection(...given);
      assert.match(await exchange(socket), /^HTTP\/1\.1 200 OK[\s\S]*hello$/);
      assert.equal(JSON.stringify(given), snapshot, 'the caller\'s arguments are not written to');
      assert.match(socket[constants.SOCKET_NAME], /^sock\[0#/);
      assert.equal(agent.createSocketCount, 1);
    });
  }

  for (const options of [null, undefined]) {
    it(`(port, host, ${options}): the certificate failure reaches the caller`, async () => {
      // No CA: the fixture certificate cannot be verified.
      const socket = agent.createConnection(server.port, '127.0.0.1', options);
      const [err] = await once(socket, 'error');
      assert.match(err.code, /^(UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|ERR_TLS_CERT_ALTNAME_INVALID)$/);
      assert.equal(agent.createSocketErrorCount, 1, 'counted as a failed connection');
    });
  }
});

describe('HttpAgent#createConnection argument forms', () => {
  let server;
  let agent;
  before(async () => { server = await createServer('http:', (req, res) => res.end('hello')); });
  after(() => server.close());
  beforeEach(() => { agent = new HttpAgent(); });
  afterEach(() => agent.destroy());

  it('(options) and (port, host) both connect, tagged by the agent', async () => {
    for (const args of [[{ port: server.port, host: '127.0.0.1' }], [server.port, '127.0.0.1']]) {
      const socket = agent.createConnection(...args);
      assert.match(await exchange(socket), /^HTTP\/1\.1 200 OK[\s\S]*hello$/);
      assert.match(socket[constants.SOCKET_NAME], new RegExp(`#127\\.0\\.0\\.1:${server.port}:\\]$`));
    }
    assert.equal(agent.createSocketCount, 2);
  });
});
