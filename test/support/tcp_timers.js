'use strict';

// The operating system's view of a TCP connection: Linux lists a
// keep-alive timer (timer code 2) for each connection that has
// SO_KEEPALIVE set, in /proc/net/tcp, as `ss -tino` shows it
// ("timer:(keepalive,...)").
const fs = require('node:fs');
const { waitFor } = require('./request');

// /proc/net/tcp "tr": the timer pending on the connection. While sent bytes
// wait for their ACK (delayed up to 40 ms on loopback), the retransmit timer
// shows instead of the keep-alive one.
const RETRANSMIT_TIMER = 1;
const KEEPALIVE_TIMER = 2;

const hexPort = (port) => port.toString(16).toUpperCase().padStart(4, '0');

/**
 * The timer of the established TCP connection from `localPort` to
 * `remotePort` (both on loopback; a local port may serve connections to
 * several remote ones): { code, ticks } from /proc/net/tcp, where `ticks`
 * (clock ticks) is the time left on it.
 */
function tcpTimer(localPort, remotePort) {
  const local = `:${hexPort(localPort)}`;
  const remote = `:${hexPort(remotePort)}`;
  for (const line of fs.readFileSync('/proc/net/tcp', 'latin1').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    // sl local_address rem_address st ... tr:tm->when
    if (fields[1]?.endsWith(local) && fields[2]?.endsWith(remote) && fields[3] === '01') {
      const [code, when] = fields[5].split(':');
      return { code: parseInt(code, 16), ticks: parseInt(when, 16) };
    }
  }
  throw new Error(`no established connection from port ${localPort} to port ${remotePort}`);
}

/** The timer of a connection once every byte sent on it is acknowledged. */
async function idleTimer(localPort, remotePort) {
  let timer;
  await waitFor(() => (timer = tcpTimer(localPort, remotePort)).code !== RETRANSMIT_TIMER);
  return timer;
}

/** The same, for `socket`'s connection (the TCP one under TLS). */
const timerOf = (socket) => idleTimer(socket.localPort, socket.remotePort);

module.exports = { tcpTimer, idleTimer, timerOf, RETRANSMIT_TIMER, KEEPALIVE_TIMER };
