// Compiled (never run) by `npm run test:types`: the steady-agent/fetch and
// steady-agent/undici subpaths, with undici's own types.
import * as undici from 'undici';
import { fetch, createFetch, getStats, close } from 'steady-agent/fetch';
import type { SteadyFetch, FetchOptions, FetchStats, AgentStats, UnsupportedOptionError } from 'steady-agent/fetch';
import { createDispatcher } from 'steady-agent/undici';
import type { DispatcherOptions } from 'steady-agent/undici';
import { isReplayable } from 'steady-agent/retry';

const options: FetchOptions = { freeSocketTimeout: '4s', maxSockets: 10, connectTimeout: 1000, learnServerTimeout: true };
const own: SteadyFetch = createFetch(options);
const res: Response = await own('http://127.0.0.1:3000/', { method: 'POST', body: 'x', headers: { 'Idempotency-Key': 'k' } });
const text: string = await res.text();
const viaUrl: Promise<Response> = fetch(new URL('http://127.0.0.1:3000/'));
const stats: FetchStats = own.getStats();
const transport: 'undici (bundled)' | 'undici (npm)' | 'agent' = stats.transport;
// Every option the transport applies; the TLS and socket ones too.
const every: FetchOptions = {
  keepAlive: true, keepAliveMsecs: 1000, tcpKeepAlive: true, freeSocketTimeout: '4s', timeout: '30s', connectTimeout: 1000,
  socketActiveTTL: '1m', serverTimeoutMargin: 1000, learnServerTimeout: 'true', maxSockets: 10, maxFreeSockets: 2,
  maxTotalSockets: 100, maxQueue: 10, queueTimeout: '5s', proxy: 'http://127.0.0.1:8080', noProxy: 'localhost',
  proxyEnv: process.env, dns: { minTtl: 1000 }, ca: 'pem', rejectUnauthorized: true, localAddress: '127.0.0.1', family: 4,
  servername: 'example.com', autoSelectFamily: true,
};
// @ts-expect-error: undici's option, createDispatcher's
createFetch({ connections: 1 });
// @ts-expect-error: the transport picks the connection: no scheduling
createFetch({ scheduling: 'lifo' });
createFetch({ maxCachedSessions: 10 });
try {
  createFetch({ maxSockets: 1 });
} catch (err) {
  const refused = err as UnsupportedOptionError;
  const named: string = refused.option;
  const where: 'createFetch' | 'createDispatcher' = refused.entry;
  void [named, where];
}
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
// undici's own options, with undici's meaning.
const undiciOptions: DispatcherOptions = { connections: 1, headersTimeout: 200, bodyTimeout: 1000, keepAliveTimeout: 4000, keepAliveMaxTimeout: 600000, proxy: 'http://127.0.0.1:8080', timeout: 500 };
// @ts-expect-error: steady-agent makes the sockets
createDispatcher(undici, { connect: { rejectUnauthorized: false } });
// @ts-expect-error: HTTP/1.1 only
createDispatcher(undici, { allowH2: true });
const asDispatcher: undici.Dispatcher = dispatcher;
const { statusCode, body } = await undici.request('http://127.0.0.1:3000/', { dispatcher });
const fromUndici = await undici.fetch('http://127.0.0.1:3000/', { dispatcher });
undici.setGlobalDispatcher(dispatcher);
const undiciStats: AgentStats = dispatcher.getStats();
// @ts-expect-error: no inner agents: getStats() and observeAgent(dispatcher) are the way in
void dispatcher.agents;
await dispatcher.close();
// @ts-expect-error: the module, not a string
createDispatcher('undici');

void [text, viaUrl, learned, shared, asGlobal, asDispatcher, statusCode, body, fromUndici, undiciStats, transport, every, undiciOptions];
