// TypeScript 6 and later load no @types package unless a tsconfig lists it
// ("types" defaults to []), so the declarations ask for Node's types themselves.
// @types/node is an optional peer dependency: a TypeScript project installs it.
/// <reference types="node" />
import * as dns from 'node:dns';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';

/**
 * A keep-alive `http.Agent`: reuses idle sockets, closes them before the
 * server does, and counts what happens to them.
 *
 * This class is the package's default export and is also available as
 * `HttpAgent`; `HttpsAgent` is the same behaviour over `https.Agent`.
 */
declare class HttpAgent extends http.Agent {
  constructor(options?: HttpAgent.HttpOptions);

  /** The normalised options: defaults applied, durations in milliseconds. */
  readonly options: Readonly<Omit<http.AgentOptions, keyof HttpAgent.ResolvedOptions>> & HttpAgent.ResolvedOptions;
  /** `'http:'`, as on Node's agent. */
  readonly protocol: 'http:';
}

// The status and deprecated members, shared with HttpsAgent.
interface HttpAgent extends HttpAgent.KeepAliveMembers {}

declare namespace HttpAgent {
  /** Milliseconds, or a string of them (`'3000'`) or a humanized one such as `'30s'` or `'2m'`. */
  type Duration = number | string;
  /** A whole number or Infinity, or a string of decimal digits (`'10'`) or `'Infinity'`. */
  type Count = number | string;
  /**
   * A boolean, 1 or 0, or the strings `'true'`, `'false'` (any case), `'1'`,
   * `'0'`. Any string compiles, so that `process.env.KEEP_ALIVE` does; another
   * string throws when the agent is made.
   */
  type Flag = boolean | 0 | 1 | 'true' | 'false' | '1' | '0' | (string & {});

  interface KeepAliveOptions {
    /** Keep sockets open between requests. Default `true`. */
    keepAlive?: Flag | undefined;
    /** Initial delay of TCP keep-alive probes on a socket. Default `1000`. */
    keepAliveMsecs?: Duration | undefined;
    /**
     * TCP keep-alive probes on every socket from the moment it connects,
     * https included, while it serves a request too. `false`: no probes,
     * for the socket's whole life (free included). Default `true`.
     */
    tcpKeepAlive?: Flag | undefined;
    /** How long a socket may stay idle in the pool. Default `4000`. */
    freeSocketTimeout?: Duration | undefined;
    /**
     * How long an active socket may stay inactive.
     * Default `max(freeSocketTimeout * 2, 8000)`.
     */
    timeout?: Duration | undefined;
    /**
     * How long a new socket may take to be ready for its request (TCP
     * connect, TLS handshake, a proxy's answer to CONNECT); then it is
     * destroyed with a `ConnectTimeoutError` (`code` `'ETIMEDOUT'`). `0`: off.
     * Default `0`.
     */
    connectTimeout?: Duration | undefined;
    /**
     * Happy Eyeballs (RFC 8305): race a host name's addresses, the families
     * interleaved; `false` connects to one address. Default: Node's
     * (`net.getDefaultAutoSelectFamily()`: `true` from Node 20).
     */
    autoSelectFamily?: Flag | undefined;
    /**
     * The Connection Attempt Delay: how long an attempt goes on alone before
     * the next address is tried too (not a deadline: no attempt is given up).
     * At least 1; under 10 is read as 10. Default: Node's (250).
     */
    autoSelectFamilyAttemptTimeout?: Duration | undefined;
    /** Maximum lifetime of a socket; `0` means no limit. Default `0`. */
    socketActiveTTL?: Duration | undefined;
    /**
     * How long before the server's announced idle limit an idle socket is
     * closed; before a learned limit, at most a quarter of that limit.
     * Default `1000`.
     */
    serverTimeoutMargin?: Duration | undefined;
    /**
     * Learn the idle limit of servers that send no Keep-Alive hint (and check
     * it with probes; see the README's "The keep-alive race"). Default `true`.
     */
    learnServerTimeout?: Flag | undefined;
    /** Sockets per origin, at least 1. Default `Infinity`. */
    maxSockets?: Count | undefined;
    /** Free sockets kept per origin, at least 1. Default `256`. */
    maxFreeSockets?: Count | undefined;
    /** Sockets over all origins, at least 1. Default `Infinity`. */
    maxTotalSockets?: Count | undefined;
    /**
     * How many requests of one origin may wait for a socket behind
     * `maxSockets`; one more fails at once with `ERR_AGENT_QUEUE_FULL`.
     * `0`: a request never waits. Default `Infinity`.
     */
    maxQueue?: Count | undefined;
    /**
     * How long a request may wait for a socket behind `maxSockets` before it
     * leaves the queue and fails with `ERR_AGENT_QUEUE_TIMEOUT`, never sent.
     * `0`: no limit. Default `0`.
     */
    queueTimeout?: Duration | undefined;
    /**
     * A proxy for every request of the agent except those `noProxy` matches:
     * `'http://proxy:3128'`, `'https://user:pass@proxy:8443'` or a `URL`.
     * Credentials are sent as `Proxy-Authorization: Basic`.
     */
    proxy?: string | URL | undefined;
    /**
     * Hosts that bypass the proxy, in NO_PROXY syntax as Node 24 reads it:
     * `'localhost,.internal.example,10.0.0.0-10.0.0.255'` or an array of entries.
     */
    noProxy?: string | readonly string[] | undefined;
    /**
     * Proxy settings from an environment (usually `process.env`), as Node 24's
     * option of the same name: HttpAgent reads HTTP_PROXY, HttpsAgent
     * HTTPS_PROXY (lower case first), both NO_PROXY. `proxy` and `noProxy` win.
     */
    proxyEnv?: ProxyEnv | undefined;
    /**
     * Resolve host names in the agent and keep its pools true to DNS: cached
     * answers with their record TTLs, hosts in use resolved again as their
     * answer expires, sockets to an address that left the answer retired
     * (close reason `'dns'`), the last answer kept when DNS fails. `true`
     * for the defaults, or settings. Off by default.
     */
    dns?: Flag | DnsOptions | undefined;
    /** @deprecated Use `freeSocketTimeout`. */
    keepAliveTimeout?: Duration | undefined;
    /** @deprecated Use `freeSocketTimeout`. */
    freeSocketKeepAliveTimeout?: Duration | undefined;
  }

  /** The `dns` option's settings; every one optional. */
  interface DnsOptions {
    /**
     * Asked for A and AAAA records with their TTLs (`resolve4`/`resolve6`
     * with `{ ttl: true }`): a `dns.Resolver` or `dns.promises.Resolver` set
     * up by the caller (`setServers`, `timeout`, `tries`). Default: a new
     * `dns.promises.Resolver()`, which asks the system's DNS servers.
     */
    resolver?: dns.Resolver | DnsResolver | undefined;
    /** The shortest time an answer is kept, whatever its TTL; at least 1 ms. Default `1000`. */
    minTtl?: Duration | undefined;
    /** The longest time an answer is kept, whatever its TTL. Default `300000` (5 min). */
    maxTtl?: Duration | undefined;
    /** How long an answer of `dns.lookup` (which gives no TTL) is kept. Default `10000`. */
    lookupTtl?: Duration | undefined;
    /** How long past its expiry the last answer is served while queries fail. Default `300000`. */
    staleTtl?: Duration | undefined;
    /** Spread new sockets over the answer's addresses, round robin within a family. Default `false`. */
    spread?: Flag | undefined;
  }

  /** What the `dns` option asks of a promise-style resolver (`dns.promises.Resolver` is one). */
  interface DnsResolver {
    resolve4(hostname: string, options: { ttl: true }): Promise<dns.RecordWithTtl[]>;
    resolve6(hostname: string, options: { ttl: true }): Promise<dns.RecordWithTtl[]>;
  }

  /** One host's cached answer in `getStats().dns`. */
  interface DnsHostStats {
    addresses: DnsAddress[];
    /** `'dns'`: the resolver's answer; `'lookup'`: dns.lookup's (a name the resolver cannot answer). */
    source: 'dns' | 'lookup';
    /** How long the answer is kept (its TTL, clamped). */
    ttlMs: number;
    /** Until it is asked for again. */
    expiresInMs: number;
    /** Served past its TTL because queries fail. */
    stale: boolean;
    /** Sockets of the agent connected through it. */
    sockets: number;
  }

  /** The variables `proxyEnv` reads; any other keys (all of process.env) are ignored. */
  interface ProxyEnv {
    HTTP_PROXY?: string | undefined;
    http_proxy?: string | undefined;
    HTTPS_PROXY?: string | undefined;
    https_proxy?: string | undefined;
    NO_PROXY?: string | undefined;
    no_proxy?: string | undefined;
    [name: string]: string | undefined;
  }

  // Core's declarations replaced by ours: the same options, taking strings
  // too; proxyEnv is Node 24's, with the same meaning.
  type ReplacedFields = 'timeout' | 'keepAliveMsecs' | 'proxyEnv' | 'keepAlive' | 'maxSockets' | 'maxFreeSockets' | 'maxTotalSockets'
    | 'autoSelectFamily' | 'autoSelectFamilyAttemptTimeout';

  interface HttpOptions extends Omit<http.AgentOptions, ReplacedFields>, KeepAliveOptions {}
  interface HttpsOptions extends Omit<https.AgentOptions, ReplacedFields>, KeepAliveOptions {}

  /**
   * What `agent.options` holds for the keep-alive settings once normalised.
   * `timeout`, `freeSocketTimeout` and `socketActiveTTL` may be written, in
   * any form the constructor takes (`'2s'`; `undefined` for the default), and
   * read back in milliseconds: the next socket that goes active or free uses
   * the new value.
   */
  interface ResolvedOptions {
    readonly keepAlive: boolean;
    readonly keepAliveMsecs: number;
    get freeSocketTimeout(): number;
    set freeSocketTimeout(value: Duration | null | undefined);
    get timeout(): number;
    set timeout(value: Duration | null | undefined);
    get socketActiveTTL(): number;
    set socketActiveTTL(value: Duration | null | undefined);
    readonly serverTimeoutMargin: number;
    readonly learnServerTimeout: boolean;
    readonly maxQueue: number;
    readonly queueTimeout: number;
    readonly connectTimeout: number;
    readonly tcpKeepAlive: boolean;
  }

  /**
   * Every attempt of a Happy Eyeballs race failed: an AggregateError with
   * each address and its own error, in the order they were tried.
   */
  interface ConnectAttemptsError extends Error {
    name: 'ConnectAttemptsError';
    /** Each attempt's error (it is an `AggregateError`). */
    errors: Error[];
    /** The first attempt's code (`'ECONNREFUSED'`...), as Node's autoSelectFamily error has it. */
    code: string;
    host: string;
    port: number;
    attempts: Array<{ address: string; family: 4 | 6; error: Error & { code?: string } }>;
  }

  /**
   * A Happy Eyeballs race given up because `agent.destroy()` ended it or its
   * request was aborted: what Node's agent gives when it destroys a
   * connecting socket.
   */
  interface SocketHangUpError extends Error {
    name: 'SocketHangUpError';
    message: 'socket hang up';
    code: 'ECONNRESET';
    reason: 'destroyed' | 'aborted';
  }

  /**
   * The error of a new socket not ready within `connectTimeout` (or whose
   * every address the system gave up on, with autoSelectFamily).
   */
  interface ConnectTimeoutError extends Error {
    name: 'ConnectTimeoutError';
    code: 'ETIMEDOUT';
    /** What was still awaited: the TCP connection, the TLS handshake, or the proxy's answer to CONNECT. */
    phase: 'connect' | 'tls' | 'proxy';
    /** `connectTimeout`, in ms. */
    timeout: number;
  }

  /**
   * The error of a connection to the proxy that failed before it was up
   * (refused, unreachable, no address; for an https: proxy, its handshake).
   * `code`, `errno`, `syscall`, `address` and `port` are the system error's,
   * which is the `cause`.
   */
  interface ProxyConnectionError extends Error {
    name: 'ProxyConnectionError';
    code?: string;
    errno?: number;
    syscall?: string;
    address?: string;
    port?: number;
    /** The proxy's origin (`http://host:port`), without credentials. */
    proxy: string;
    cause: Error;
  }

  /**
   * The error of an option steady-agent/fetch's `createFetch` or
   * steady-agent/undici's `createDispatcher` cannot apply: thrown when the
   * fetch or dispatcher is made, never ignored.
   */
  interface UnsupportedOptionError extends TypeError {
    name: 'UnsupportedOptionError';
    code: 'ERR_STEADY_UNSUPPORTED_OPTION';
    /** The option, as given. */
    option: string;
    /** The function given it. */
    entry: 'createFetch' | 'createDispatcher';
  }

  /** agentkeepalive's counters. */
  interface Counters {
    createSocketCount: number;
    createSocketErrorCount: number;
    closeSocketCount: number;
    errorSocketCount: number;
    timeoutSocketCount: number;
    /** Requests finished, counted when the socket returns to the agent (its `'free'` event). */
    requestCount: number;
  }

  interface AgentStatus extends Counters {
    /** Idle sockets per origin (`agent.getName()` keys). */
    freeSockets: Record<string, number>;
    /** Active sockets per origin. */
    sockets: Record<string, number>;
    /** Queued requests per origin. */
    requests: Record<string, number>;
  }

  /** Why a socket closed, as `steady-agent:socket:close` and `getStats()` report it (see the README). */
  type CloseReason =
    | 'free-timeout'
    | 'ttl'
    | 'keep-alive-max'
    | 'server-close'
    | 'error'
    | 'active-timeout'
    | 'not-kept'
    | 'unusable'
    | 'total-limit'
    | 'destroy'
    | 'agent-close'
    | 'upgrade'
    | 'stale-peer'
    | 'aborted'
    | 'dns';

  /** The counters of one origin in `getStats()`. */
  interface OriginStats {
    /** Sockets serving a request now. */
    active: number;
    /** Idle sockets in the pool now. */
    free: number;
    /** Requests waiting behind `maxSockets` now. */
    queued: number;
    socketsCreated: number;
    socketsClosed: number;
    /** Requests finished. */
    requests: number;
    /** Requests that got a socket which had served a request before. */
    reusedRequests: number;
    /** Socket errors, failed connections included. */
    errors: number;
    /** Socket timeouts, free and active. */
    timeouts: number;
    /** How many sockets closed for each reason. */
    closeReasons: Partial<Record<CloseReason, number>>;
    /** The server's idle limit in ms: announced (Keep-Alive: timeout) and learned, or null. */
    serverIdleTimeout: {
      announced: number | null;
      learned: number | null;
      /** How sure the agent is of the learned limit; null without one. */
      confidence: 'tentative' | 'confirmed' | null;
      /**
       * The counts behind the estimate, shortest idle time first: how often
       * a socket survived about `idleMs` of idle time (a reuse that got its
       * response, a probe still open) and how often one died there (closed
       * by the server, or a request failing on it). Weights: older counts
       * fade, so they need not be whole numbers.
       */
      evidence: Array<{ idleMs: number; survived: number; died: number }>;
    };
    /** Over every wait behind `maxSockets` that ended (with a socket, by queueTimeout, aborted, destroyed), in ms. */
    queueWaitMs: { count: number; sum: number; max: number };
    /** Requests refused at once by `maxQueue`. */
    queueFull: number;
    /** Requests failed by `queueTimeout` (their waits are in `queueWaitMs`). */
    queueTimeouts: number;
    /** Requests refused after `close()`. */
    refusedAfterClose: number;
    /** Requests that left the queue without a socket otherwise: aborted, or failed by `destroy()` during `close()`. */
    leftQueue: number;
    /** Happy Eyeballs attempts begun, by the address's family. */
    connectAttempts: { ipv4: number; ipv6: number };
    /** Happy Eyeballs races won, by the winning address's family. */
    connectWins: { ipv4: number; ipv6: number };
  }

  /** What `getStats()` returns: a new object on every call. */
  interface AgentStats {
    /** Keyed by origin (pool name), as in `getCurrentStatus()`. */
    origins: Record<string, OriginStats>;
    /** With the `dns` option: each host's cached answer. */
    dns?: Record<string, DnsHostStats>;
  }

  /**
   * What published an event: an agent, or the dispatcher of
   * `steady-agent/fetch` (`fetch.dispatcher`) or `steady-agent/undici`.
   */
  type EventPublisher = HttpAgent | HttpsAgent | { getStats(): AgentStats };
  /** A request of `steady-agent/fetch` or `steady-agent/undici`: the options undici's dispatcher was given. */
  interface DispatchRequest {
    origin?: string | URL;
    path: string;
    method: string;
  }
  /** Fields of every message on the agent's `diagnostics_channel` channels. */
  interface ChannelMessage {
    agent: EventPublisher;
    /** The pool name, as in `getCurrentStatus()`. */
    origin: string;
    host: string;
    port: number;
  }
  interface SocketMessage extends ChannelMessage {
    socket: net.Socket;
  }
  /** `steady-agent:socket:reuse` */
  interface SocketReuseMessage extends SocketMessage {
    /** Time in the pool in ms: 0 when handed straight on, null if it entered the pool unwatched. */
    idleMs: number | null;
  }
  /** `steady-agent:socket:free` */
  interface SocketFreeMessage extends SocketMessage {
    /** The free timeout the agent chose, in ms; Infinity for none. */
    freeTimeoutMs: number;
    limitedBy: 'freeSocketTimeout' | 'hint' | 'learned' | 'ttl';
  }
  /** `steady-agent:socket:close` */
  interface SocketCloseMessage extends SocketMessage {
    reason: CloseReason;
    /** Requests the socket finished. */
    requests: number;
    lifetimeMs: number;
  }
  /** `steady-agent:server-idle-limit` */
  interface ServerIdleLimitMessage extends ChannelMessage {
    /** The limit the agent now holds, in whole ms; null when gone. */
    ms: number | null;
    source: 'announced' | 'learned';
    /** Learned limits only: how sure the agent is of the limit it holds. */
    confidence?: 'tentative' | 'confirmed' | null;
    /** Learned limits only: what the close the agent weighed did. */
    outcome?: 'learned' | 'confirmed' | 'raised' | 'lowered' | 'held' | 'refused' | 'burst' | 'restart' | 'refuted' | 'evicted';
    /** Learned limits only: why, in words ('a request failed after 201 ms idle, where reuses survived as long 9 times and sockets died 1 time: a fault'). */
    why?: string;
  }
  /** `steady-agent:request:queued` */
  interface RequestQueuedMessage extends ChannelMessage {
    /** The agent's request; for fetch and undici, the dispatch options. */
    request: http.ClientRequest | DispatchRequest;
  }
  /** `steady-agent:request:dequeued` */
  interface RequestDequeuedMessage extends RequestQueuedMessage {
    socket: net.Socket;
    waitedMs: number;
  }
  /** `steady-agent:request:no-socket` */
  interface RequestNoSocketMessage extends RequestQueuedMessage {
    /** How it ended: refused by `maxQueue`, after `close()`, timed out in the queue, or gone from it (aborted, `destroy()` during `close()`). */
    outcome: 'queue-full' | 'agent-closed' | 'queue-timeout' | 'left-queue';
    /** Its wait in the queue; 0 for the two refused at once. */
    waitedMs: number;
  }
  /**
   * `steady-agent:request:resend`: `steady-agent/fetch` or `steady-agent/undici`
   * sends a request once more after it met a connection the server had
   * closed while idle (the agent itself never resends).
   */
  interface RequestResendMessage extends ChannelMessage {
    method: string;
    path: string;
    /** The failure of the first attempt, marked as the agent marks its errors. */
    error: Error;
    /** The socket the first attempt failed on, where the dispatcher knows it. */
    socket?: net.Socket;
  }
  /** `steady-agent:socket:listeners` */
  interface SocketListenersMessage extends SocketMessage {
    /** The event whose listeners passed the socket's limit (MaxListenersExceededWarning). */
    event: string | symbol;
    /** Its listeners. */
    count: number;
    /** Requests the socket has served, the one in progress included. */
    requests: number;
  }
  /**
   * Fields of every message on the `steady-agent:dns:*` channels (the `dns`
   * option): one host, whatever pools it has, so no `origin` or `port`.
   */
  interface DnsMessage {
    agent: EventPublisher;
    host: string;
  }
  interface DnsAddress {
    address: string;
    family: 4 | 6;
  }
  /** `steady-agent:dns:lookup` */
  interface DnsLookupMessage extends DnsMessage {
    /** `'dns'`: the resolver; `'lookup'`: dns.lookup (a name the resolver cannot answer). */
    source: 'dns' | 'lookup';
    /** The answer; null when the query failed. */
    addresses: DnsAddress[] | null;
    /** How long the answer is kept (its TTL, clamped); null when the query failed. */
    ttlMs: number | null;
    error: Error | null;
    durationMs: number;
  }
  /** `steady-agent:dns:change` */
  interface DnsChangeMessage extends DnsMessage {
    /** Addresses that left the answer. */
    removed: string[];
    /** Addresses that came into it. */
    added: string[];
    /** The new answer. */
    addresses: DnsAddress[];
  }
  /** `steady-agent:dns:stale` */
  interface DnsStaleMessage extends DnsMessage {
    /** The last good answer, served on. */
    addresses: DnsAddress[];
    /** Why the query failed. */
    error: Error;
    /** How long past its expiry the answer is. */
    staleMs: number;
    /** How long it may still be served (staleTtl). */
    remainingMs: number;
  }
  /** `steady-agent:dns:retire` */
  interface DnsRetireMessage extends DnsMessage {
    /** The socket's remote address, which left the answer. */
    address: string;
    socket: net.Socket;
    /** Closed at once (it was free), or not kept after its response. */
    free: boolean;
  }
  /** `steady-agent:connect:attempt`: one step of a Happy Eyeballs attempt. */
  interface ConnectAttemptMessage extends ChannelMessage {
    address: string;
    family: 4 | 6;
    /** 1 for the first address tried. */
    attempt: number;
    outcome: 'started' | 'won' | 'lost' | 'failed';
    /**
     * started: 'first', 'delay' or 'failure'; won: 'connected'; lost:
     * 'another-won', 'connect-timeout' or 'destroyed'; failed: the error's code.
     */
    why: string;
    /** Since the race began (its lookup included). */
    elapsedMs: number;
    /** The attempt's TCP socket. */
    socket: net.Socket;
    /** Why it failed (outcome 'failed'). */
    error?: Error;
  }
  /** The message each channel publishes, by channel name. */
  interface ChannelMessages {
    'steady-agent:socket:create': SocketMessage;
    'steady-agent:socket:reuse': SocketReuseMessage;
    'steady-agent:socket:free': SocketFreeMessage;
    'steady-agent:socket:close': SocketCloseMessage;
    'steady-agent:server-idle-limit': ServerIdleLimitMessage;
    'steady-agent:request:queued': RequestQueuedMessage;
    'steady-agent:request:dequeued': RequestDequeuedMessage;
    'steady-agent:request:no-socket': RequestNoSocketMessage;
    'steady-agent:request:resend': RequestResendMessage;
    'steady-agent:socket:listeners': SocketListenersMessage;
    'steady-agent:dns:lookup': DnsLookupMessage;
    'steady-agent:dns:change': DnsChangeMessage;
    'steady-agent:dns:stale': DnsStaleMessage;
    'steady-agent:dns:retire': DnsRetireMessage;
    'steady-agent:connect:attempt': ConnectAttemptMessage;
  }

  /**
   * The fields the agent adds to the error of a request that failed on a
   * reused socket before any byte of its response: an OS error such as
   * `ECONNRESET` or `EPIPE`, or Node's `'socket hang up'`. Its `code` and
   * `message` stay as they were. `steady-agent/retry` reads them.
   */
  interface ReusedSocketMarks {
    /** The socket had served a request before this one. */
    reusedSocket: true;
    /** How long the socket sat idle before this request, in whole ms (0: handed straight on from the previous request). */
    socketIdleMs: number;
    /** How many requests the socket served before this one. */
    socketRequests: number;
    /**
     * The agent's judgement that the server had closed the connection while
     * it sat idle and never saw the request: the failure came within a few
     * round trips of the request being written, never a second or more.
     */
    staleSocket: boolean;
    /**
     * `staleSocket`, and the request is idempotent (GET, HEAD, OPTIONS, TRACE,
     * PUT, DELETE) or carries an `Idempotency-Key` or `X-Idempotency-Key` header.
     */
    replayable: boolean;
  }

  /** A request's error as the agent marked it (`err.reusedSocket === true` tells one). */
  type ReusedSocketError = NodeJS.ErrnoException & ReusedSocketMarks;

  /** The keep-alive behaviour over `https.Agent`; instances are `https.Agent`s. */
  class HttpsAgent extends https.Agent {
    constructor(options?: HttpsOptions);

    /** The normalised options: defaults applied, durations in milliseconds. */
    readonly options: Readonly<Omit<https.AgentOptions, keyof ResolvedOptions>> & ResolvedOptions;
    /** `'https:'`, as on Node's agent. */
    readonly protocol: 'https:';
  }
  interface HttpsAgent extends KeepAliveMembers {}

  /** What both agents add to core's agent: the counters (plain numbers a monitoring loop may reset, as agentkeepalive's), status and deprecated getters. */
  interface KeepAliveMembers extends Counters {
    /** True when a counter changed since `statusChanged` was last read. */
    readonly statusChanged: boolean;
    /**
     * A snapshot of the counters and of the socket pools, per origin: agentkeepalive's keys.
     * A request is counted, and its socket listed as free, on the agent's `'free'` event,
     * which follows the response's `'end'`: read it a turn later (`setImmediate`), not
     * inside `res.on('end')`, where the request is still uncounted and its socket active.
     */
    getCurrentStatus(): AgentStatus;
    /**
     * The idle limits (ms) learned per origin: a new object on each read. Limits the
     * server announces (`Keep-Alive: timeout`) are not here; `getStats()` has them.
     */
    readonly serverIdleTimeouts: Record<string, number>;
    /** Per-origin counters: sockets, requests, reuse, close reasons, queue waits. */
    getStats(): AgentStats;
    /**
     * Closes the agent gracefully: from the call on, new requests fail with
     * `ERR_AGENT_CLOSED`; idle sockets close at once; requests in flight and
     * queued ones complete, and each socket closes as soon as it is free.
     * Resolves when the agent holds no socket. Every call returns the same
     * promise; `destroy()` ends what is left and resolves it.
     */
    close(): Promise<void>;
    /** `close()`, for `await using agent = new HttpAgent()`. */
    [Symbol.asyncDispose](): Promise<void>;

    /** The counters' values at the last read of `statusChanged`. */
    createSocketCountLastCheck: number;
    createSocketErrorCountLastCheck: number;
    closeSocketCountLastCheck: number;
    errorSocketCountLastCheck: number;
    timeoutSocketCountLastCheck: number;
    requestCountLastCheck: number;

    /** @deprecated Read `options.freeSocketTimeout` instead. */
    readonly freeSocketKeepAliveTimeout: number;
    /** @deprecated Read `options.timeout` instead. */
    readonly timeout: number;
    /** @deprecated Read `options.socketActiveTTL` instead. */
    readonly socketActiveTTL: number;
  }

  // The default export itself, under its name: `Agent.HttpAgent === Agent`.
  export import HttpAgent = _HttpAgent;

  /** Symbols the agent stores on sockets, same names as agentkeepalive's. */
  namespace constants {
    const CURRENT_ID: unique symbol;
    const CREATE_ID: unique symbol;
    const INIT_SOCKET: unique symbol;
    const CREATE_HTTPS_CONNECTION: unique symbol;
    const SOCKET_CREATED_TIME: unique symbol;
    const SOCKET_NAME: unique symbol;
    const SOCKET_REQUEST_COUNT: unique symbol;
    const SOCKET_REQUEST_FINISHED_COUNT: unique symbol;
  }
}

// A second name for the class, so the namespace can re-export it without
// the alias resolving to itself.
import _HttpAgent = HttpAgent;

export = HttpAgent;
