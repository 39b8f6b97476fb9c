// Types of the `steady-agent/fetch` subpath: Node's own fetch, its requests
// sent through steady-agent's agents. Node's types: see index.d.ts.
/// <reference types="node" />
import type { HttpsOptions, AgentStats } from './index.js';
export type { AgentStats, ReusedSocketError, ReusedSocketMarks } from './index.js';

/**
 * The agent's options (as `new HttpsAgent(options)` takes them; TLS options
 * apply to https requests only), validated when the fetch is made.
 */
export type FetchOptions = HttpsOptions;

/** A `fetch` with agents of its own: the global fetch's signature and `Response`. */
export interface SteadyFetch {
  (input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /** The agents' per-origin counters, http and https merged. */
  getStats(): AgentStats;
  /** Closes the agents gracefully: requests in flight complete, then every socket closes. */
  close(): Promise<void>;
  /** The dispatcher its events name as `agent`: what steady-agent/otel's `observeAgent` takes. */
  readonly dispatcher: { getStats(): AgentStats };
}

/**
 * The global fetch through the module's shared agents, made at the first
 * call. Resends, once and at once, a request lost to a connection the server
 * had closed while idle, when it is idempotent (or keyed) and its body can
 * be sent again. Errors stay `TypeError('fetch failed')`, the agent's marked
 * error as `cause`.
 */
export const fetch: SteadyFetch;

/** A `fetch` with agents of its own, made from the agent's options. */
export function createFetch(options?: FetchOptions): SteadyFetch;

/** The shared fetch's counters (`{ origins: {} }` before its first call). */
export function getStats(): AgentStats;

/** Closes the shared fetch's agents; a later call makes new ones. */
export function close(): Promise<void>;
