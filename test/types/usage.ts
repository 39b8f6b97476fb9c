// Compiled (never run) by `npm run test:types` under strict and
// exactOptionalPropertyTypes, with esModuleInterop: the default import and
// named imports of a CommonJS consumer.
import * as http from 'node:http';
import * as https from 'node:https';
import Agent, { HttpAgent, HttpsAgent, constants } from 'steady-agent';
import type { AgentStats, AgentStatus, ChannelMessages, CloseReason, ConnectAttemptsError, ConnectTimeoutError, DnsHostStats, DnsOptions, HttpOptions, HttpsOptions, OriginStats, ProxyConnectionError } from 'steady-agent';
import * as dns from 'node:dns';
import axios from 'axios';

// The default export is HttpAgent itself.
const byDefault: HttpAgent = new Agent();
const sameClass: typeof HttpAgent = Agent;
const defaults = new Agent.HttpAgent();

// Humanized durations and numbers, every documented option.
const httpOptions: HttpOptions = {
  keepAlive: true,
  keepAliveMsecs: 1000,
  freeSocketTimeout: '4s',
  timeout: '60s',
  socketActiveTTL: 0,
  serverTimeoutMargin: '1s',
  learnServerTimeout: false,
  maxSockets: 10,
  maxFreeSockets: 5,
  maxTotalSockets: 100,
  scheduling: 'lifo',
};
const httpAgent = new HttpAgent(httpOptions);
new HttpAgent({ timeout: 30000, freeSocketTimeout: undefined });
new HttpAgent({ keepAliveTimeout: '15s', freeSocketKeepAliveTimeout: 15000 });
// Counts and durations from the environment; booleans as strings.
new HttpAgent({ maxSockets: process.env.MAX_SOCKETS, maxFreeSockets: '5', maxTotalSockets: 'Infinity', timeout: process.env.TIMEOUT });
new HttpsAgent({ keepAlive: 'false', learnServerTimeout: 0, maxSockets: '10' });
new HttpAgent({ keepAlive: process.env.KEEP_ALIVE, learnServerTimeout: process.env.LEARN });

// https.AgentOptions (TLS settings) pass through.
const httpsOptions: HttpsOptions = {
  timeout: '1m',
  ca: '-----BEGIN CERTIFICATE-----',
  rejectUnauthorized: true,
  maxCachedSessions: 10,
  servername: 'localhost',
};
const httpsAgent = new HttpsAgent(httpsOptions);

// The types match the runtime's class hierarchy.
const asHttp: http.Agent = httpAgent;
const asHttps: https.Agent = httpsAgent;
const asNamespaced: Agent.HttpsAgent = new Agent.HttpsAgent({ keepAlive: true });

// Status.
const status: AgentStatus = httpsAgent.getCurrentStatus();
const counts: number[] = [
  status.createSocketCount,
  status.createSocketErrorCount,
  status.closeSocketCount,
  status.errorSocketCount,
  status.timeoutSocketCount,
  status.requestCount,
  httpAgent.createSocketCount,
  httpsAgent.requestCount,
];
const perOrigin: Record<string, number>[] = [
  status.freeSockets,
  status.sockets,
  status.requests,
  httpAgent.serverIdleTimeouts,
];
const changed: boolean = httpAgent.statusChanged;

// Per-origin stats.
const stats: AgentStats = httpsAgent.getStats();
for (const [origin, o] of Object.entries(stats.origins)) {
  const numbers: number[] = [o.active, o.free, o.queued, o.socketsCreated, o.socketsClosed, o.requests,
    o.reusedRequests, o.errors, o.timeouts, o.queueWaitMs.count, o.queueWaitMs.sum, o.queueWaitMs.max,
    o.queueFull, o.queueTimeouts, o.refusedAfterClose, o.leftQueue];
  const learned: number | null = o.serverIdleTimeout.learned ?? o.serverIdleTimeout.announced;
  const deaths: number = o.serverIdleTimeout.evidence.reduce((n, row) => n + row.died, 0);
  // @ts-expect-error an idle time is a number of ms
  o.serverIdleTimeout.evidence[0].idleMs = '5 s';
  const byFreeTimeout: number | undefined = o.closeReasons['free-timeout'];
  console.log(origin, numbers, learned, byFreeTimeout, deaths);
}
const reason: CloseReason = 'server-close';
const retired: CloseReason = 'dns';

// The dns option: true, or settings with either kind of resolver.
const promiseResolver = new dns.promises.Resolver({ timeout: 1000, tries: 2 });
promiseResolver.setServers(['127.0.0.1:5353']);
const dnsOptions: DnsOptions = { resolver: promiseResolver, minTtl: '1s', maxTtl: 300000, lookupTtl: '10s', staleTtl: '5m', spread: true };
new HttpAgent({ dns: true });
new HttpAgent({ dns: 'false' });
new HttpsAgent({ dns: dnsOptions });
new HttpsAgent({ dns: { resolver: new dns.Resolver() } });
const hosts: Record<string, DnsHostStats> | undefined = httpAgent.getStats().dns;
for (const [host, answer] of Object.entries(hosts ?? {})) {
  const first: string | undefined = answer.addresses[0]?.address;
  const from: 'dns' | 'lookup' = answer.source;
  console.log(host, first, from, answer.ttlMs, answer.expiresInMs, answer.stale, answer.sockets, retired);
}
const roomMade: CloseReason = 'total-limit';
const perOriginStats: OriginStats | undefined = httpAgent.getStats().origins['127.0.0.1:80:'];
// @ts-expect-error not a close reason
const badReason: CloseReason = 'timeout';

// The normalised options: durations are numbers once the agent holds them.
const freeMs: number = httpAgent.options.freeSocketTimeout + httpsAgent.options.timeout;
const tlsCa = httpsAgent.options.ca;

// Each constant is its own unique symbol.
const currentId: typeof constants.CURRENT_ID = constants.CURRENT_ID;
const socketName: symbol = Agent.constants.SOCKET_NAME;
const allSymbols: symbol[] = [
  constants.CREATE_ID,
  constants.INIT_SOCKET,
  constants.CREATE_HTTPS_CONNECTION,
  constants.SOCKET_CREATED_TIME,
  constants.SOCKET_REQUEST_COUNT,
  constants.SOCKET_REQUEST_FINISHED_COUNT,
];

// Subclassing works like agentkeepalive's.
class TracingAgent extends HttpsAgent {
  override createConnection(...args: Parameters<https.Agent['createConnection']>) {
    return super.createConnection(...args);
  }
}
new TracingAgent({ timeout: '10s' });

// Usable wherever clients take an http.Agent / https.Agent.
http.request('http://127.0.0.1/', { agent: httpAgent });
https.request('https://127.0.0.1/', { agent: httpsAgent });
axios.create({ httpAgent, httpsAgent });

httpAgent.destroy();
httpsAgent.destroy();

// Bounded queues and a graceful close.
const bounded = new HttpsAgent({ maxSockets: 10, maxQueue: 100, queueTimeout: '2s' });
const limits: [number, number] = [bounded.options.maxQueue, bounded.options.queueTimeout];
const closed: Promise<void> = bounded.close();
const disposed: Promise<void> = new HttpAgent({ maxQueue: 0, queueTimeout: 500 })[Symbol.asyncDispose]();

// Connection health: a connect timeout, TCP keep-alive (on unless false).
const healthy = new HttpsAgent({ connectTimeout: '3s', tcpKeepAlive: true });
const health: [number, boolean] = [healthy.options.connectTimeout, healthy.options.tcpKeepAlive];
new HttpAgent({ connectTimeout: 3000, tcpKeepAlive: 'false' });
// @ts-expect-error a duration, not a boolean
new HttpAgent({ connectTimeout: true });
function onConnectError(err: Error): string | undefined {
  if (err.name !== 'ConnectTimeoutError') return undefined;
  const timedOut = err as ConnectTimeoutError;
  const code: 'ETIMEDOUT' = timedOut.code;
  return `${code} in phase ${timedOut.phase} after ${timedOut.timeout} ms`;
}
console.log(health, onConnectError(new Error('x')));

// Happy Eyeballs: options as Node names them, taking strings too; the error
// of a race every address lost; the attempt event; the stats by family.
new HttpsAgent({ autoSelectFamily: 'true', autoSelectFamilyAttemptTimeout: '100ms' });
new HttpAgent({ autoSelectFamily: false, autoSelectFamilyAttemptTimeout: 250 });
// @ts-expect-error a duration, not a boolean
new HttpAgent({ autoSelectFamilyAttemptTimeout: true });
function onAttempts(err: Error): string[] {
  if (err.name !== 'ConnectAttemptsError') return [];
  const failed = err as ConnectAttemptsError;
  const family: 4 | 6 | undefined = failed.attempts[0]?.family;
  return [String(family), ...failed.attempts.map(({ address, error }) => `${address} ${error.code ?? error.message}`), ...failed.errors.map(String)];
}
function onAttempt(message: ChannelMessages['steady-agent:connect:attempt']): string {
  return `${message.origin} ${message.address} (IPv${message.family}) ${message.outcome}: ${message.why} after ${message.elapsedMs} ms`;
}
const wins: number = healthy.getStats().origins['localhost:443:']?.connectWins.ipv6 ?? 0;
console.log(onAttempts(new Error('x')), onAttempt, wins);

// Proxies: a URL string or URL, NO_PROXY as a string or array, process.env.
const proxied = new HttpsAgent({ proxy: 'http://user:pass@proxy.internal:3128', noProxy: ['localhost', '.internal'] });
new HttpAgent({ proxy: new URL('https://proxy.internal:8443'), noProxy: 'localhost,127.0.0.1' });
new HttpsAgent({ proxyEnv: process.env });
function onProxyError(err: Error): string | undefined {
  if (err.name !== 'ProxyConnectionError') return undefined;
  const refused = err as ProxyConnectionError;
  return `${refused.code ?? 'unknown'} from ${refused.proxy}: ${refused.cause.message}`;
}
console.log(onProxyError(new Error('x')));
new HttpAgent({ proxyEnv: { HTTP_PROXY: 'http://proxy:3128', NO_PROXY: '*' } });
proxied.destroy();

// Negative checks: each line must fail to compile.
// @ts-expect-error maxQueue is a number
new HttpAgent({ maxQueue: true });
// @ts-expect-error proxy is a string or a URL
new HttpAgent({ proxy: { host: 'proxy', port: 3128 } });
// @ts-expect-error noProxy entries are strings
new HttpsAgent({ noProxy: [3128] });
// @ts-expect-error a duration is a number or a string
new HttpAgent({ timeout: true });
// @ts-expect-error a duration is not an object
new HttpsAgent({ freeSocketTimeout: { seconds: 4 } });
// Any string compiles as a boolean option (process.env gives strings); 'yes' throws at run time.
new HttpAgent({ learnServerTimeout: 'yes' });
// @ts-expect-error a boolean option is not an object
new HttpAgent({ learnServerTimeout: {} });
// @ts-expect-error keepAlive is a boolean, 1 or 0 (or their strings), not any number
new HttpsAgent({ keepAlive: 2 });
// @ts-expect-error a count is a number or a string
new HttpAgent({ maxSockets: true });
// @ts-expect-error scheduling is 'fifo' or 'lifo'
new HttpAgent({ scheduling: 'random' });
// @ts-expect-error no such status field
status.socketCount;
// The counters are plain numbers a monitoring loop may reset, as agentkeepalive's.
httpAgent.createSocketCount = 0;
// timeout, freeSocketTimeout and socketActiveTTL may be written, in the
// constructor's forms, and read back as numbers; the rest is read-only.
httpAgent.options.timeout = 1;
httpsAgent.options.freeSocketTimeout = 1000;
httpsAgent.options.freeSocketTimeout = '2s';
httpAgent.options.timeout = process.env.TIMEOUT;
httpAgent.options.socketActiveTTL = '1h';
httpAgent.options.socketActiveTTL = null;
const writtenBack: number = httpsAgent.options.freeSocketTimeout;
// @ts-expect-error a duration is a number or a string
httpAgent.options.timeout = true;
// agent.protocol, as on Node's agents.
const protocols: ['http:', 'https:'] = [httpAgent.protocol, httpsAgent.protocol];
// @ts-expect-error an HttpAgent's protocol is 'http:'
const wrongProtocol: 'https:' = httpAgent.protocol;
// Channel messages, by channel name.
const onClose = (message: Agent.ChannelMessages['steady-agent:socket:close']): string =>
  `${message.origin} ${message.reason} ${message.requests} ${message.lifetimeMs} ${message.socket.remotePort}`;
const onDequeued = (message: Agent.RequestDequeuedMessage): number => message.waitedMs + message.port;
const onNoSocket = (message: Agent.ChannelMessages['steady-agent:request:no-socket']): string =>
  `${message.outcome} after ${message.waitedMs} ms, ${message.request.path}`;
const onListeners = (message: Agent.SocketListenersMessage): string =>
  `${String(message.event)}: ${message.count} listeners after ${message.requests} requests on ${message.socket.remotePort}`;
const onDnsChange = (message: Agent.ChannelMessages['steady-agent:dns:change']): string =>
  `${message.host}: ${message.removed.join(' ')} left, ${message.added.join(' ')} came, now ${message.addresses.map((a) => `${a.address}/${a.family}`).join(' ')}`;
const onDnsLookup = (message: Agent.ChannelMessages['steady-agent:dns:lookup']): string =>
  `${message.host} from ${message.source}: ${message.addresses?.length ?? message.error?.message} (${message.ttlMs ?? 'no'} ms, took ${message.durationMs})`;
const onDnsStale = (message: Agent.DnsStaleMessage): string => `${message.error.message}: ${message.staleMs} / ${message.remainingMs}`;
const onDnsRetire = (message: Agent.ChannelMessages['steady-agent:dns:retire']): string =>
  `${message.address} ${message.free ? 'closed' : 'not kept'} on ${message.socket.remotePort}`;
// @ts-expect-error the other normalised options are read-only
httpAgent.options.keepAlive = false;
// @ts-expect-error the learned limits are read-only
httpAgent.serverIdleTimeouts = {};
// @ts-expect-error statusChanged is read-only
httpAgent.statusChanged = false;
// @ts-expect-error constants are distinct unique symbols
const mixedUp: typeof constants.CURRENT_ID = constants.CREATE_ID;
// @ts-expect-error keepAliveMargin is not an option (it is serverTimeoutMargin)
const badOptions: HttpOptions = { keepAliveMargin: 1000 };

export {
  byDefault, sameClass, defaults, asHttp, asHttps, asNamespaced, counts, perOrigin, changed, freeMs, tlsCa,
  currentId, socketName, allSymbols, mixedUp, badOptions, reason, perOriginStats, badReason,
  writtenBack, protocols, wrongProtocol, onClose, onDequeued,
  onDnsChange, onDnsLookup, onDnsStale, onDnsRetire,
};
