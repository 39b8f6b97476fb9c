// ES module entry. It wraps the CommonJS build instead of duplicating it, so
// `import` and `require` share one set of classes (instanceof works across
// module systems) and one set of socket symbols.
import Agent from './index.js';

export default Agent;
export const { HttpAgent, HttpsAgent, constants } = Agent;
