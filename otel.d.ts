// Types of the `steady-agent/otel` subpath. @opentelemetry/api is an optional
// peer dependency: install it to use this entry. Node's types: see index.d.ts.
/// <reference types="node" />
import type { MeterProvider } from '@opentelemetry/api';
import type * as http from 'node:http';

export interface ObserveAgentOptions {
  /** Where the metrics go. Default: the global meter provider (`metrics.getMeterProvider()`). */
  meterProvider?: MeterProvider | undefined;
}

/**
 * Records OpenTelemetry's HTTP client connection metrics for a steady-agent
 * `HttpAgent` or `HttpsAgent`: `http.client.open_connections`,
 * `http.client.connection.duration` and `http.client.request.time_in_queue`.
 * Returns a function that stops observing.
 */
export function observeAgent(
  agent: http.Agent & { getStats(): unknown },
  options?: ObserveAgentOptions,
): () => void;
