'use strict';

// OpenTelemetry's SDK with an in-memory exporter, read back on demand: what
// steady-agent/otel records, as a backend would receive it.
const {
  MeterProvider,
  PeriodicExportingMetricReader,
  InMemoryMetricExporter,
  AggregationTemporality,
} = require('@opentelemetry/sdk-metrics');

/** A meter provider whose metrics a test reads with collect(). */
function inMemoryMetrics() {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // Exports only when asked (forceFlush): no timer runs on its own.
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3600000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    meterProvider,
    /** { [metric name]: { descriptor, points } } of the last export. */
    async collect() {
      exporter.reset();
      await reader.forceFlush();
      const found = {};
      for (const resourceMetrics of exporter.getMetrics()) {
        for (const scope of resourceMetrics.scopeMetrics) {
          for (const metric of scope.metrics) found[metric.descriptor.name] = { descriptor: metric.descriptor, points: metric.dataPoints };
        }
      }
      return found;
    },
    shutdown: () => meterProvider.shutdown(),
  };
}

module.exports = { inMemoryMetrics };
