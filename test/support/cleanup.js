'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createAgent } = require('./agents');

// What a test opens, closed after each test even when an assertion fails.
// Call from inside a `describe`: it registers the `afterEach` there.

/**
 * @param {{ inOrder?: boolean }} [order] inOrder: close handles in the order kept
 * @returns {{ keep: <T extends { close(): unknown }>(handle: T) => T, agentOf: (Agent: any, options?: object) => any, agentFor: (protocol: string, options?: object) => any }}
 *   keep(handle): closes a server or proxy handle after the test (last kept, first closed);
 *   agentOf(Agent, options): a new agent, destroyed after the test, before the servers close;
 *   agentFor(protocol, options): the same, a steady-agent for 'http:' or 'https:' (support/agents.js).
 */
function closeAfterEach({ inOrder = false } = {}) {
  const closers = [];
  const agents = [];
  afterEach(async () => {
    for (const agent of agents.splice(0)) agent.destroy();
    // inOrder: first kept, first closed (servers before the dispatcher they
    // hold requests of, so that the dispatcher's close() can end).
    const closing = closers.splice(0);
    for (const close of inOrder ? closing : closing.reverse()) await close();
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
    agentFor(protocol, options) {
      const agent = createAgent(protocol, options);
      agents.push(agent);
      return agent;
    },
  };
}

/**
 * A fresh temporary directory for each test, removed after it even when an
 * assertion fails. Returns a getter: `const dir = tempDirEach('name-'); ... dir()`.
 */
function tempDirEach(prefix) {
  let current = null;
  beforeEach(() => {
    current = fs.mkdtempSync(path.join(os.tmpdir(), `steady-agent-${prefix}`));
  });
  afterEach(() => {
    fs.rmSync(current, { recursive: true, force: true });
    current = null;
  });
  return () => current;
}

module.exports = { closeAfterEach, tempDirEach };
