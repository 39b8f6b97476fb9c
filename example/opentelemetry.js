'use strict';

// OpenTelemetry metrics for an agent: `steady-agent/otel` records the HTTP
// client connection metrics of the semantic conventions
// (http.client.open_connections, http.client.connection.duration,
// http.client.request.time_in_queue). Here they go to the console; in a
// service, to whatever exporter the MeterProvider has (OTLP, Prometheus, ...).
//
//   npm install @opentelemetry/api @opentelemetry/sdk-metrics
//   node example/opentelemetry.js
const http = require('node:http');
const { metrics } = require('@opentelemetry/api');
const {
  MeterProvider,
  PeriodicExportingMetricReader,
  ConsoleMetricExporter,
} = require('@opentelemetry/sdk-metrics');
const { HttpAgent } = require('steady-agent');
const { observeAgent } = require('steady-agent/otel');

// Exports every 10 s in a service; this demo exports once, on shutdown.
const reader = new PeriodicExportingMetricReader({ exporter: new ConsoleMetricExporter(), exportIntervalMillis: 10000 });
const meterProvider = new MeterProvider({ readers: [reader] });
metrics.setGlobalMeterProvider(meterProvider);

const agent = new HttpAgent({ maxSockets: 2 });
const stopObserving = observeAgent(agent); // the global provider; or observeAgent(agent, { meterProvider })

function get(url) {
  return new Promise((resolve, reject) => {
    http.get(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    }).on('error', reject);
  });
}

async function main() {
  const server = http.createServer((req, res) => setTimeout(() => res.end('ok'), 10));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/`;
  try {
    // 6 at once over 2 sockets: 4 requests wait in the queue.
    const statuses = await Promise.all(Array.from({ length: 6 }, () => get(url)));
    console.log(`6 requests -> ${statuses.join(', ')}`);
    agent.destroy(); // closes both sockets: their durations are recorded on 'close'
    while (agent.closeSocketCount < 2) await new Promise((resolve) => setTimeout(resolve, 5));
  } finally {
    stopObserving();
    await meterProvider.shutdown(); // exports what was recorded, once
    server.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
