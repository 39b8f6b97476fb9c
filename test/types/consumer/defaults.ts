// Compiled (never run) by `npm run test:types` in a project that depends on
// steady-agent and sets no compiler option besides strictness: no "types"
// (TypeScript 6+ then loads no @types package by itself), no "module" (each
// compiler's default module system and resolution). Only named imports, the
// form every default accepts. Nothing else here imports Node's types, so
// index.d.ts must bring them in itself.
import { HttpAgent, HttpsAgent, constants } from 'steady-agent';
import type { AgentStatus, HttpsOptions } from 'steady-agent';
import { observeAgent } from 'steady-agent/otel';
import { isReplayable } from 'steady-agent/retry';

const options: HttpsOptions = { freeSocketTimeout: '4s', timeout: 60000, ca: '', rejectUnauthorized: true };
const httpsAgent = new HttpsAgent(options);
const httpAgent = new HttpAgent({ keepAlive: true, serverTimeoutMargin: '1s' });
const status: AgentStatus = httpAgent.getCurrentStatus();
const total: number = status.requestCount + httpsAgent.getStats().origins['127.0.0.1:443:']!.requests;
const id: symbol = constants.SOCKET_NAME;
const stop: () => void = observeAgent(httpsAgent);
const replayable: boolean = isReplayable(new Error('socket hang up'));

// Members inherited from Node's http.Agent: @types/node was loaded.
const maxSockets: number = httpsAgent.maxSockets + httpAgent.maxFreeSockets;
httpAgent.destroy();

// Bounded queues and a graceful close (Symbol.asyncDispose comes from @types/node or the lib).
const bounded = new HttpAgent({ maxQueue: 100, queueTimeout: '2s' });
const closed: Promise<void> = bounded.close();
const disposed: Promise<void> = bounded[Symbol.asyncDispose]();

// What the README shows: the protocol, a write in the constructor's forms, booleans from the environment.
const protocol: 'https:' = httpsAgent.protocol;
httpsAgent.options.freeSocketTimeout = '2s';
new HttpAgent({ keepAlive: process.env.KEEP_ALIVE, maxSockets: process.env.MAX_SOCKETS });

// @ts-expect-error a duration is a number or a string
new HttpAgent({ timeout: true });
// Under exactOptionalPropertyTypes, an explicit undefined needs `| undefined` in the declaration.
new HttpAgent({ timeout: undefined, proxy: undefined });

export { total, id, stop, maxSockets, closed, disposed, protocol, replayable };
