'use strict';

// Deprecation warnings go through process.emitWarning, once per code per
// process, so they reach the user's warning handlers and never stdout.
const warned = new Set();

function deprecate(code, message) {
  if (warned.has(code)) return;
  warned.add(code);
  process.emitWarning(message, { type: 'DeprecationWarning', code });
}

const DEPRECATIONS = Object.freeze({
  keepAliveTimeout: ['STEADY_AGENT_DEP_KEEPALIVETIMEOUT',
    'The "keepAliveTimeout" option (agentkeepalive 3\'s name, and undici\'s for the same setting) is deprecated; it sets "freeSocketTimeout": use that instead.'],
  freeSocketKeepAliveTimeout: ['STEADY_AGENT_DEP_FREESOCKETKEEPALIVETIMEOUT',
    'The "freeSocketKeepAliveTimeout" option is deprecated; use "freeSocketTimeout" instead.'],
  getFreeSocketKeepAliveTimeout: ['STEADY_AGENT_DEP_GETTER_FREESOCKETKEEPALIVETIMEOUT',
    'agent.freeSocketKeepAliveTimeout is deprecated; read agent.options.freeSocketTimeout instead.'],
  getTimeout: ['STEADY_AGENT_DEP_GETTER_TIMEOUT',
    'agent.timeout is deprecated; read agent.options.timeout instead.'],
  getSocketActiveTTL: ['STEADY_AGENT_DEP_GETTER_SOCKETACTIVETTL',
    'agent.socketActiveTTL is deprecated; read agent.options.socketActiveTTL instead.'],
});

/** Warns once for one of the named deprecations above. */
function warnDeprecated(name) {
  const [code, message] = DEPRECATIONS[name];
  deprecate(code, message);
}

module.exports = { warnDeprecated };
