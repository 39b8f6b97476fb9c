'use strict';

// TLS session resumption on the transport's own connections, as Node's
// https.Agent does it: a second connection to an origin offers the session
// the first one got, and the server resumes it (no full handshake). Seen from
// both ends, on real TLS with the fixture certificates: the client socket's
// isSessionReused() (the socket:create event hands it over) and the server's.
// maxCachedSessions: 0 keeps none; a bad value is refused by name.
const assert = require('node:assert/strict');
const dc = require('node:diagnostics_channel');
const { frontDoors, tlsOptions } = require('./support/fetch');
const { createHttpsServer } = require('./support/servers');


const DOORS = frontDoors();

for (const door of DOORS) {
  describe(`${door.title}: TLS sessions resume on new connections`, function () {
    this.timeout(20000);
    const handles = [];
    afterEach(async () => {
      for (const handle of handles.splice(0)) await handle.close();
    });

    /** An https server that closes every connection after its response, and what each end saw of resumption. */
    async function setup(options) {
      const server = await createHttpsServer((req, res) => {
        res.setHeader('connection', 'close');
        res.end('ok');
      });
      const serverReused = [];
      server.server.on('secureConnection', (socket) => serverReused.push(socket.isSessionReused()));
      const client = door.make({ ...tlsOptions('https:'), ...options });
      const clientReused = [];
      const onCreate = (event) => {
        if (event.agent === client.dispatcher) clientReused.push(event.socket.isSessionReused());
      };
      dc.subscribe('steady-agent:socket:create', onCreate);
      handles.push(client, server, { close: async () => dc.unsubscribe('steady-agent:socket:create', onCreate) });
      return { url: server.url('/'), client, clientReused, serverReused };
    }

    it('the second connection to an origin is a resumed handshake', async () => {
      const { url, client, clientReused, serverReused } = await setup();
      for (let i = 0; i < 3; i++) assert.equal(await client.get(url), 'ok');
      assert.deepEqual(clientReused, [false, true, true]);
      assert.deepEqual(serverReused, [false, true, true]);
    });

    it('maxCachedSessions: 0 keeps no session: every connection is a full handshake', async () => {
      const { url, client, clientReused, serverReused } = await setup({ maxCachedSessions: 0 });
      for (let i = 0; i < 3; i++) assert.equal(await client.get(url), 'ok');
      assert.deepEqual(clientReused, [false, false, false]);
      assert.deepEqual(serverReused, [false, false, false]);
    });

    it('a bad maxCachedSessions is refused, naming the option and the value', () => {
      assert.throws(() => door.make({ maxCachedSessions: -1 }), (err) => err instanceof RangeError && /maxCachedSessions/.test(err.message) && /-1/.test(err.message));
      assert.throws(() => door.make({ maxCachedSessions: 'many' }), (err) => err instanceof TypeError && /maxCachedSessions/.test(err.message));
    });
  });
}
