// Types of the `steady-agent/retry` subpath. Nothing here needs axios,
// axios-retry, got or node-fetch to be installed: the helpers' types are
// written so that they fit those libraries' own (test/types/retry.mts checks
// them against axios-retry 4 and got 13). Node's types: see index.d.ts.
/// <reference types="node" />
import type * as http from 'node:http';
import type * as https from 'node:https';
export type { ReusedSocketError, ReusedSocketMarks } from './index.js';

/** Every helper's settings. */
export interface RetryOptions {
  /** How many times a request is sent again. Default `1`. A count, as the agent's options take it. */
  retries?: number | string | undefined;
  /** How long to wait before each retry, in ms or a duration string. Default `0`: at once. */
  delay?: number | string | undefined;
  /** Called before each retry with the error and the retry's number (1 for the first). */
  onRetry?: ((error: unknown, attempt: number) => void | Promise<void>) | undefined;
}

/**
 * True when the agent marked `err`, or an error along its `cause` chain, as a
 * request lost to a connection the server had closed while idle
 * (`staleSocket`) and safe to send again (`replayable`). False for anything
 * else, non-objects and cycles of causes included.
 */
export function isReplayable(err: unknown): boolean;

/**
 * axios-retry's `retryCondition`: a replayable error (axios keeps the agent's
 * error as the AxiosError's `cause`) whose request body can be sent again.
 */
export function axiosRetryCondition(error: unknown): boolean;

/** What `axiosRetryOptions()` returns, for `axiosRetry(client, options)`. */
export interface AxiosRetryOptions {
  retries: number;
  retryCondition: (error: unknown) => boolean;
  retryDelay: () => number;
  onRetry?: (retryCount: number, error: unknown) => void | Promise<void>;
}

/**
 * Options for axios-retry: retry only what `axiosRetryCondition` accepts,
 * `retries` times, after `delay` ms. Unlike axios-retry's own default, never
 * a POST or PATCH without an idempotency key.
 */
export function axiosRetryOptions(options?: RetryOptions): AxiosRetryOptions;

/** The part of got's retry object `calculateDelay` reads. */
export interface GotRetryObject {
  attemptCount: number;
  error: unknown;
  computedValue: number;
}

/** What `gotRetryOptions()` returns, for `got.extend(options)` or a request's options. */
export interface GotRetryOptions {
  retry: {
    limit: number;
    calculateDelay: (retryObject: GotRetryObject) => number;
  };
  hooks: {
    beforeRequest: Array<(options: object) => void>;
    beforeError: Array<<E>(error: E) => E>;
    beforeRetry?: Array<(error: unknown, retryCount: number) => void | Promise<void>>;
  };
}

/**
 * Options for got: retry replayable errors whose body got can send again
 * (never a stream), `retries` times, after `delay` ms (got's shortest wait,
 * 1 ms, when `delay` is 0); nothing else is retried. The error the caller
 * gets has the agent's error as its `cause`.
 */
export function gotRetryOptions(options?: RetryOptions): GotRetryOptions;

/**
 * node-fetch (v2 or v3) that sends a request again when it failed on a stale
 * socket and is replayable. The agent comes from `init.agent` (an agent, or
 * a function of the URL). A FetchError of a failure has the agent's error as
 * its `cause`.
 */
export function wrapFetch<F extends (input: any, init?: any) => Promise<unknown>>(fetch: F, options?: RetryOptions): F;

/** `http.request`/`https.request` options, plus a body and retry settings. */
export interface RequestOptions extends https.RequestOptions {
  /** A string, a Buffer or typed array, or a readable stream (sent once, never resent). */
  body?: string | NodeJS.ArrayBufferView | NodeJS.ReadableStream | undefined;
  retry?: RetryOptions | undefined;
}

/**
 * `http.request` or `https.request` (by the URL's protocol, or
 * `options.protocol`) as a promise of the response, sent again when it
 * failed on a stale socket and is replayable. Resolves when the response's
 * headers came; its body is the caller's to read.
 */
export function request(url: string | URL, options?: RequestOptions): Promise<http.IncomingMessage>;
export function request(options: RequestOptions): Promise<http.IncomingMessage>;
