'use strict';

// Core's private fields the agent reads or writes, each behind one function
// named for what it means. Checked on Node 18, 20, 22, 24 and 26
// (test/core-seam.test.js runs on each).

/**
 * The pool name core recorded in the options its createSocket made a socket
 * with (lib/_http_agent.js, Agent.prototype.createSocket: `options._agentKey
 * = name`); undefined on options core did not make.
 */
function agentKeyOf(options) {
  return options._agentKey;
}

/**
 * The request a socket serves (lib/_http_client.js, tickOnSocket sets
 * `socket._httpMessage`; responseOnEnd and the agent's 'free' path keep it
 * until the next request or the socket's close); null or undefined if none.
 */
function requestOf(socket) {
  return socket._httpMessage;
}

/**
 * The header ClientRequest has already built (lib/_http_outgoing.js,
 * OutgoingMessage.prototype._storeHeader, run by the constructor when the
 * headers came as an array or with `Expect`), or undefined.
 */
function builtHeader(req) {
  return req._header;
}

/**
 * Replaces the header `builtHeader` gave with `rewritten`, before anything
 * is sent. With `Expect`, the header is also queued for sending
 * (OutgoingMessage.prototype._send pushes it to `outputData`, flushed once a
 * socket comes): the queued copy is edited too. False when it can no longer
 * be rewritten (a socket has it, or the queue holds something else).
 */
function replaceBuiltHeader(req, header, rewritten) {
  if (req._headerSent) {
    const first = req.outputData?.[0];
    if (req.socket != null || typeof first?.data !== 'string' || !first.data.startsWith(header)) return false;
    first.data = rewritten + first.data.slice(header.length);
    req.outputSize += rewritten.length - header.length;
  }
  req._header = rewritten;
  return true;
}

/** Options naming `pool` as core's createSocket would have (agentKeyOf reads it), for a socket core did not make. */
function poolOptions(pool) {
  return { _agentKey: pool };
}

module.exports = { agentKeyOf, requestOf, poolOptions, builtHeader, replaceBuiltHeader };
