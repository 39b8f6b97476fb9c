// Types of the `steady-agent/undici` subpath. undici is not a dependency:
// the dispatcher's type is the caller's own undici's Dispatcher, with
// steady-agent's members. Node's types: see index.d.ts.
/// <reference types="node" />
import type { HttpsOptions, AgentStats, HttpAgent, HttpsAgent } from './index.js';
export type { AgentStats, ReusedSocketError, ReusedSocketMarks } from './index.js';

/** The agent's options (as `new HttpsAgent(options)` takes them). */
export type DispatcherOptions = HttpsOptions;

/** What the dispatcher adds to undici's Dispatcher. */
export interface SteadyDispatcherMembers {
  /** The HttpAgent and HttpsAgent its requests go through. */
  readonly agents: { http: HttpAgent; https: HttpsAgent };
  /** The agents' per-origin counters, http and https merged. */
  getStats(): AgentStats;
}

/** The part of an undici module createDispatcher needs: `require('undici')` (6, 7 or 8). */
export interface UndiciModule {
  Dispatcher: new (...args: any[]) => object;
}

/**
 * A Dispatcher of `undici` (its `Dispatcher`'s subclass: for `request`,
 * `stream`, `pipeline`, `fetch` and `setGlobalDispatcher`) whose requests go
 * through steady-agent's agents. Throws `ERR_STEADY_UNSUPPORTED_UNDICI` for
 * anything but undici 6, 7 or 8, and the agent's option errors.
 */
export function createDispatcher<U extends UndiciModule>(
  undici: U,
  options?: DispatcherOptions,
): InstanceType<U['Dispatcher']> & SteadyDispatcherMembers;
