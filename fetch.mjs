// ES module entry of steady-agent/fetch: the CommonJS module's own
// functions, so that `import` and `require` share one set of agents.
import steadyFetch from './lib/fetch/index.js';

export const { fetch, createFetch, getStats, close } = steadyFetch;
