// Types of the `steady-agent/fetch` subpath: Node's own fetch, its requests
// sent through steady-agent's transport. Node's types: see index.d.ts.
/// <reference types="node" />
import type { HttpsOptions, KeepAliveOptions, AgentStats } from './index.js';
export type { AgentStats, ReusedSocketError, ReusedSocketMarks, UnsupportedOptionError } from './index.js';

/**
 * The TLS and socket options the transport's connections take, as
 * `tls.connect` and `net.connect` read them (the TLS ones for https
 * requests only). `requestOCSP` and `pskIdentityHint` apply too; Node's
 * types do not declare them for an agent.
 */
export type ConnectionOptions = Pick<HttpsOptions,
  | 'ca' | 'cert' | 'key' | 'pfx' | 'passphrase' | 'rejectUnauthorized' | 'ciphers' | 'ecdhCurve' | 'crl' | 'sigalgs'
  | 'minVersion' | 'maxVersion' | 'secureOptions' | 'secureProtocol' | 'honorCipherOrder' | 'dhparam' | 'sessionIdContext'
  | 'privateKeyEngine' | 'privateKeyIdentifier' | 'checkServerIdentity' | 'clientCertEngine' | 'secureContext'
  | 'allowPartialTrustChain' | 'minDHSize' | 'session' | 'pskCallback' | 'maxCachedSessions'
  | 'family' | 'hints' | 'lookup' | 'localAddress' | 'servername' | 'autoSelectFamily' | 'autoSelectFamilyAttemptTimeout'>;

/**
 * What `createFetch` takes: every option of the agent (docs/options.md)
 * but `scheduling`, and the TLS and socket options. Another key (undici's
 * own, Node's agent's `scheduling`, a misspelling)
 * throws `ERR_STEADY_UNSUPPORTED_OPTION` when the fetch is made. `timeout`
 * is off unless given.
 */
export interface FetchOptions extends KeepAliveOptions, ConnectionOptions {}

/** `getStats()` of a fetch: the agent's counters, and the transport in use. */
export interface FetchStats extends AgentStats {
  /**
   * Not enumerable (the counters keep the agent's shape).
   * `'undici (bundled)'`: a subclass of the bundled undici's Agent;
   * `'undici (npm)'`: of the npm undici's Agent the bundled fetch dispatches
   * through; `'agent'`: through HttpAgent / HttpsAgent, where the global
   * dispatcher is no Agent. The options, guarantees and events are the same.
   */
  transport: 'undici (bundled)' | 'undici (npm)' | 'agent';
}

/** A `fetch` with connections of its own: the global fetch's signature and `Response`. */
export interface SteadyFetch {
  (input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /** The per-origin counters, http and https together, and the transport in use. */
  getStats(): FetchStats;
  /** Closes gracefully: requests in flight complete, then every socket closes. */
  close(): Promise<void>;
  /** The dispatcher its events name as `agent`: what steady-agent/otel's `observeAgent` takes. */
  readonly dispatcher: { getStats(): AgentStats };
}

/**
 * The global fetch through the module's shared connections, made at the first
 * call. Resends, once and at once, a request lost to a connection the server
 * had closed while idle, when it is idempotent (or keyed) and its body can
 * be sent again. Errors stay `TypeError('fetch failed')`, the agent's marked
 * error as `cause`.
 */
export const fetch: SteadyFetch;

/** A `fetch` with connections of its own, made from the agent's options. */
export function createFetch(options?: FetchOptions): SteadyFetch;

/** The shared fetch's counters (`{ origins: {} }` before its first call). */
export function getStats(): AgentStats;

/** Closes the shared fetch's connections; a later call makes new ones. */
export function close(): Promise<void>;
