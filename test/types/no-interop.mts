// Compiled (never run) by `npm run test:types` (TypeScript 5.x) with
// tsconfig.no-interop.json: an ES module under module nodenext WITHOUT
// esModuleInterop. Node's own interop applies to an .mts importing
// CommonJS whatever the flag: the default import is module.exports.
import type { Agent as HttpsBase } from 'node:https';
import Agent, { HttpAgent, HttpsAgent, constants } from 'steady-agent';
import * as namespace from 'steady-agent';
import { observeAgent } from 'steady-agent/otel';

const agent: HttpAgent = new Agent({ timeout: '1s' });
const secure: HttpsBase = new HttpsAgent({ ca: '' });
const sameClass: typeof HttpAgent = namespace.HttpAgent;
const stop: () => void = observeAgent(new namespace.HttpsAgent());
const id: symbol = constants.CREATE_ID;

// @ts-expect-error scheduling is 'fifo' or 'lifo'
new namespace.HttpAgent({ scheduling: 'random' });

export { agent, secure, sameClass, stop, id };
