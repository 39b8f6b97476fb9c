// Compiled (never run) by `npm run test:types`: the steady-agent/fetch and
// steady-agent/undici subpaths, with undici's own types.
import * as undici from 'undici';
import { fetch, createFetch, getStats, close } from 'steady-agent/fetch';
import type { SteadyFetch, FetchOptions, AgentStats } from 'steady-agent/fetch';
import { createDispatcher } from 'steady-agent/undici';
import { isReplayable } from 'steady-agent/retry';

const options: FetchOptions = { freeSocketTimeout: '4s', maxSockets: 10, connectTimeout: 1000, learnServerTimeout: true };
const own: SteadyFetch = createFetch(options);
const res: Response = await own('http://127.0.0.1:3000/', { method: 'POST', body: 'x', headers: { 'Idempotency-Key': 'k' } });
const text: string = await res.text();
const viaUrl: Promise<Response> = fetch(new URL('http://127.0.0.1:3000/'));
const stats: AgentStats = own.getStats();
const learned: number | null | undefined = stats.origins['127.0.0.1:3000:']?.serverIdleTimeout.learned;
const shared: AgentStats = getStats();
await own.close();
await close();
// A drop-in for the global fetch where one is taken.
const asGlobal: typeof globalThis.fetch = fetch;
try {
  await fetch('http://127.0.0.1:3000/');
} catch (err) {
  const again: boolean = isReplayable(err);
  void again;
}

const dispatcher = createDispatcher(undici, { maxSockets: 4, queueTimeout: 1000 });
const asDispatcher: undici.Dispatcher = dispatcher;
const { statusCode, body } = await undici.request('http://127.0.0.1:3000/', { dispatcher });
const fromUndici = await undici.fetch('http://127.0.0.1:3000/', { dispatcher });
undici.setGlobalDispatcher(dispatcher);
const undiciStats: AgentStats = dispatcher.getStats();
const httpAgent = dispatcher.agents.http;
await dispatcher.close();
// @ts-expect-error: the module, not a string
createDispatcher('undici');

void [text, viaUrl, learned, shared, asGlobal, asDispatcher, statusCode, body, fromUndici, undiciStats, httpAgent];
