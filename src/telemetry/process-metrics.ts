// The process's own metrics (CPU, memory, heap, start time), read only when /metrics is scraped:
// nothing runs between scrapes. Written instead of prom-client's collectDefaultMetrics, whose GC
// observer (a callback per garbage collection) and 10 ms event-loop monitor run all the time in
// every process: with them, the distributed kill -9 test (2 s leases, a 2-core machine at load
// 12-20) saw live workers lose leases in 4 of 5 runs; with these scrape-time gauges instead, in 1
// of 7 (the code before telemetry: 0 of 9).
import { Counter, Gauge, type Registry } from 'prom-client';

export function registerProcessMetrics(registry: Registry): void {
  const r = [registry];
  let lastCpuMicros = 0;
  new Counter({
    name: 'process_cpu_seconds_total',
    help: 'User and system CPU time spent by this process, in seconds.',
    registers: r,
    collect() {
      const { user, system } = process.cpuUsage();
      this.inc(Math.max(0, user + system - lastCpuMicros) / 1e6);
      lastCpuMicros = user + system;
    },
  });
  new Gauge({
    name: 'process_resident_memory_bytes',
    help: 'Resident memory size in bytes.',
    registers: r,
    collect() {
      this.set(process.memoryUsage.rss());
    },
  });
  new Gauge({
    name: 'process_start_time_seconds',
    help: 'Start time of the process since the Unix epoch, in seconds.',
    registers: r,
    collect() {
      this.set(Math.round(Date.now() / 1000 - process.uptime()));
    },
  });
  new Gauge({
    name: 'nodejs_heap_size_used_bytes',
    help: 'V8 heap in use, in bytes.',
    registers: r,
    collect() {
      this.set(process.memoryUsage().heapUsed);
    },
  });
  new Gauge({
    name: 'nodejs_heap_size_total_bytes',
    help: 'V8 heap allocated, in bytes.',
    registers: r,
    collect() {
      this.set(process.memoryUsage().heapTotal);
    },
  });
}
