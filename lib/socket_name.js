'use strict';

// agentkeepalive's public socket name, `sock[<id>#<pool>]`, made once per
// socket and kept on every idle one, so its size counts: one flat string,
// one byte a character where it can be. A template or `+` makes a tree of
// three or four strings where one will do (30 to 70 bytes more on every
// socket); join makes one string, but on Node 20 a two-byte one (36 bytes
// more for a typical name) once the pool name has been a key of core's maps
// (V8 then reads it through a forwarding "thin" string). normalize() returns
// a one-byte string flat, as it is; a name it would change (decomposed
// characters in a host name) stays as it was.

/** The name of the agent's socket number `id` in `pool`. */
function socketName(id, pool) {
  const name = 'sock[' + id + '#' + pool + ']';
  const flat = name.normalize();
  return flat === name ? flat : name;
}

module.exports = { socketName };
