// Compiled (never run) by `npm run test:types`: the steady-agent/otel subpath.
import { metrics } from '@opentelemetry/api';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { HttpAgent, HttpsAgent } from 'steady-agent';
import { observeAgent } from 'steady-agent/otel';
import type { ObserveAgentOptions } from 'steady-agent/otel';

const stop: () => void = observeAgent(new HttpAgent());
const options: ObserveAgentOptions = { meterProvider: new MeterProvider() };
observeAgent(new HttpsAgent(), options)();
observeAgent(new HttpsAgent(), { meterProvider: metrics.getMeterProvider() });
stop();

// @ts-expect-error an agent is required
observeAgent();
// @ts-expect-error the provider is an OpenTelemetry MeterProvider
observeAgent(new HttpAgent(), { meterProvider: 'console' });

export { options };
