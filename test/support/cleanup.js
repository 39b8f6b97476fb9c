'use strict';

// What a test opens, closed after each test even when an assertion fails.
// Call from inside a `describe`: it registers the `afterEach` there.

/**
 * @returns {{ keep: <T extends { close(): unknown }>(handle: T) => T, agentOf: (Agent: any, options?: object) => any }}
 *   keep(handle): closes a server or proxy handle after the test (last kept, first closed);
 *   agentOf(Agent, options): a new agent, destroyed after the test, before the servers close.
 */
function closeAfterEach() {
  const closers = [];
  const agents = [];
  afterEach(async () => {
    for (const agent of agents.splice(0)) agent.destroy();
    for (const close of closers.splice(0).reverse()) await close();
  });
  return {
    keep(handle) {
      closers.push(() => handle.close());
      return handle;
    },
    agentOf(Agent, options) {
      const agent = new Agent(options);
      agents.push(agent);
      return agent;
    },
  };
}

module.exports = { closeAfterEach };
