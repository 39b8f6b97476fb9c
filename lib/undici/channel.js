'use strict';

// The one `diagnostics_channel` the transport subscribes to,
// `undici:client:sendHeaders`, shared by every transport of the process: it
// names the socket undici writes a request on, which no handler callback
// does. undici calls the handler's onConnect / onRequestStart and then,
// synchronously and on the same socket, publishes sendHeaders; the wrapper
// leaves itself in `starting` in between (checked on undici 5.28 to 8), and
// the subscriber hands it to the socket's state. Also here: the sockets we
// made, each to its state, so that the subscriber knows ours from others'.
// Module state, reached through functions: one subscription for many
// transports, counted.
const dc = require('node:diagnostics_channel');

// Held: on Node 18 a channel nobody holds may be collected with its subscribers.
const sendHeaders = dc.channel('undici:client:sendHeaders');
const states = new WeakMap(); // our sockets -> SocketState
let subscribers = 0;
// The wrapper whose request undici is about to write (set in its onConnect).
let starting = null;

function onSendHeaders(message) {
  const state = states.get(message.socket);
  if (state === undefined) return;
  const exchange = starting;
  starting = null;
  if (exchange !== null) state.started(exchange);
}

/** A transport starts: the first subscribes. */
function subscribe() {
  if (subscribers++ === 0) dc.subscribe(sendHeaders.name, onSendHeaders);
}

/** A transport stopped: the last unsubscribes. */
function unsubscribe() {
  if (--subscribers === 0) dc.unsubscribe(sendHeaders.name, onSendHeaders);
}

/** `exchange`'s request is the next undici writes. */
function willStart(exchange) {
  starting = exchange;
}

/** `socket` is ours, with `state`. */
function track(socket, state) {
  states.set(socket, state);
}

/** The state of our `socket`. */
function stateOf(socket) {
  return states.get(socket);
}

module.exports = { subscribe, unsubscribe, willStart, track, stateOf };
