// ES module entry of steady-agent/undici: the CommonJS module's own
// function, so that `import` and `require` share one dispatcher class per undici.
import steadyUndici from './lib/undici/index.js';

export const { createDispatcher } = steadyUndici;
