// Types of the `steady-agent/undici` subpath. undici is not a dependency:
// the dispatcher's type is the caller's own undici's Dispatcher, with
// steady-agent's members. Node's types: see index.d.ts.
/// <reference types="node" />
import type { AgentStats } from './index.js';
import type { FetchOptions } from './fetch.js';
export type { AgentStats, ReusedSocketError, ReusedSocketMarks, UnsupportedOptionError } from './index.js';

/**
 * undici's own Agent options createDispatcher applies, with undici's
 * meaning. `connections`, `keepAliveTimeout` and `keepAliveTimeoutThreshold`
 * are undici's names of `maxSockets`, `freeSocketTimeout` and
 * `serverTimeoutMargin` (give one name of each). The rest go to undici's
 * Agent as they are. `allowH2` and `pipelining` take only the value that
 * asks for what the transport does (HTTP/1.1, one request per connection at
 * a time); `connect`, `factory`, `socketPath` and the HTTP/2 options throw.
 */
export interface UndiciAgentOptions {
  connections?: number | null | undefined;
  keepAliveTimeout?: number | undefined;
  keepAliveTimeoutThreshold?: number | undefined;
  keepAliveMaxTimeout?: number | undefined;
  headersTimeout?: number | undefined;
  bodyTimeout?: number | undefined;
  maxHeaderSize?: number | undefined;
  maxResponseSize?: number | undefined;
  strictContentLength?: boolean | undefined;
  maxRequestsPerClient?: number | undefined;
  clientTtl?: number | null | undefined;
  /** undici 6 only: undici 7 and 8 throw, naming the redirect interceptor. */
  maxRedirections?: number | undefined;
  /** undici 6 only. */
  interceptors?: object | undefined;
  maxOrigins?: number | undefined;
  allowH2?: false | undefined;
  pipelining?: 1 | undefined;
}

/**
 * What `createDispatcher` takes: createFetch's options (the agent's, and
 * the TLS and socket options), and undici's own Agent options. Another key
 * throws `ERR_STEADY_UNSUPPORTED_OPTION`.
 */
export interface DispatcherOptions extends Omit<FetchOptions, 'keepAliveTimeout'>, UndiciAgentOptions {}

/** What the dispatcher adds to undici's Dispatcher. */
export interface SteadyDispatcherMembers {
  /** The per-origin counters, http and https together. */
  getStats(): AgentStats;
}

/** The part of an undici module createDispatcher needs: `require('undici')` (6, 7 or 8). */
export interface UndiciModule {
  Dispatcher: new (...args: any[]) => object;
}

/**
 * A Dispatcher of `undici` (its `Dispatcher`'s subclass: for `request`,
 * `stream`, `pipeline`, `fetch` and `setGlobalDispatcher`) whose requests go
 * through steady-agent's transport. Throws `ERR_STEADY_UNSUPPORTED_UNDICI`
 * for anything but undici 6, 7 or 8, `ERR_STEADY_UNSUPPORTED_OPTION` for an
 * option it cannot apply, and the agent's option errors.
 */
export function createDispatcher<U extends UndiciModule>(
  undici: U,
  options?: DispatcherOptions,
): InstanceType<U['Dispatcher']> & SteadyDispatcherMembers;
