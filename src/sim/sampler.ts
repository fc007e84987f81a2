// Samples the Keel processes a simulation drives, once a second, from their own /metrics: each
// process's resident memory and CPU time, every effect pool's running, queued and limit, and the
// live runs by state (from the store, read from the first process). Also the machine's busy CPU
// share from /proc/stat (Linux; NaN elsewhere). Measures only; metrics.ts turns the samples into
// the report's capacity figures.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { metric, parseSamples, type Sample } from '../telemetry/exposition.ts';

const SAMPLE_INTERVAL_MS = 1_000;

export interface MetricsSource {
  name: string;
  url: string;
  headers?: Record<string, string>;
}

export interface PoolSample {
  running: number;
  queued: number;
  /** The largest limit any process reports (a cluster-scoped pool's is the cluster's). */
  limit: number;
}

export interface ProcessSample {
  name: string;
  rssBytes: number;
  cpuSeconds: number;
}

export interface LoadSample {
  /** Seconds after the scenario's t = 0. */
  at: number;
  processes: ProcessSample[];
  /** Busy share of all the machine's cores since the previous sample (0–1). */
  machineBusy: number;
  pools: Record<string, PoolSample>;
  /** Live runs by state (queued, running, waiting, cancelling), all tenants. */
  runs: Record<string, number>;
}

export interface Sampler {
  stop(): Promise<LoadSample[]>;
}

export function startSampler(sources: readonly MetricsSource[], startAtMs: number): Sampler {
  const samples: LoadSample[] = [];
  const stopping = new AbortController();
  let previousCpu = machineCpu();
  const loop = (async () => {
    while (!stopping.signal.aborted) {
      const read = await Promise.all(sources.map((s) => scrape(s)));
      const cpu = machineCpu();
      const busy =
        cpu === undefined || previousCpu === undefined
          ? Number.NaN
          : (cpu.busy - previousCpu.busy) / Math.max(1, cpu.total - previousCpu.total);
      previousCpu = cpu;
      if (read.every((r) => r !== undefined))
        samples.push(
          loadSample(sources, read as Sample[][], (Date.now() - startAtMs) / 1_000, busy),
        );
      await sleep(SAMPLE_INTERVAL_MS, undefined, { signal: stopping.signal }).catch(() => {});
    }
  })();
  return {
    async stop() {
      stopping.abort();
      await loop;
      return samples;
    },
  };
}

/** A scrape that fails (the process busy past the timeout, or gone) leaves the sample out. */
async function scrape(source: MetricsSource): Promise<Sample[] | undefined> {
  try {
    const response = await fetch(source.url, {
      headers: source.headers,
      signal: AbortSignal.timeout(5_000),
    });
    return response.ok ? parseSamples(await response.text()) : undefined;
  } catch {
    return undefined;
  }
}

function loadSample(
  sources: readonly MetricsSource[],
  read: Sample[][],
  at: number,
  machineBusy: number,
): LoadSample {
  const pools: Record<string, PoolSample> = {};
  for (const samples of read)
    for (const s of samples) {
      if (s.name !== 'keel_pool_limit') continue;
      const name = s.labels.pool!;
      pools[name] ??= { running: 0, queued: 0, limit: 0 };
      const pool = pools[name];
      pool.limit = Math.max(pool.limit, s.value);
      pool.running += metric(samples, 'keel_pool_running', { pool: name });
      pool.queued += metric(samples, 'keel_pool_queue_depth', { pool: name });
    }
  const runs: Record<string, number> = {};
  for (const s of read[0]!)
    if (s.name === 'keel_tenant_runs')
      runs[s.labels.state!] = (runs[s.labels.state!] ?? 0) + s.value;
  return {
    at,
    processes: read.map((samples, i) => ({
      name: sources[i]!.name,
      rssBytes: metric(samples, 'process_resident_memory_bytes'),
      cpuSeconds: metric(samples, 'process_cpu_seconds_total'),
    })),
    machineBusy,
    pools,
    runs,
  };
}

/** Jiffies busy and in all from the first line of /proc/stat; undefined where there is none. */
function machineCpu(): { busy: number; total: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]!
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const total = fields.reduce((a, b) => a + b, 0);
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
}
