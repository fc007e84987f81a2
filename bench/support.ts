// Shared setup for the benchmarks: an embedded Keel (SQLite file in a fresh temp dir, orchestrator,
// optionally the HTTP API on an ephemeral port) in this process, the benchmark agents, completion
// signals from store.onChange, latency summaries from node:perf_hooks histograms, and the machine
// facts printed with the results. It measures nothing by itself and never asserts on a timing:
// figures are reported, not judged, here.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { FastifyInstance } from 'fastify';
import { generateApiKey, hashApiKey } from '../src/api/auth.ts';
import { buildApi } from '../src/api/server.ts';
import { newRunId } from '../src/domain/ids.ts';
import type { AgentHost } from '../src/engine/agent-host.ts';
import { Orchestrator } from '../src/engine/orchestrator.ts';
import { AgentRegistry } from '../src/engine/registry.ts';
import { ModelGateway } from '../src/models/gateway.ts';
import { defineAgent } from '../src/sdk/define.ts';
import type { AgentDefinition, Json } from '../src/sdk/types.ts';
import type { NewRun } from '../src/domain/records.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';

/**
 * Sequential durable steps per run in the throughput and latency scenarios (the shape of the
 * reference figures).
 */
export const STEPS_PER_RUN = 5;
export const DB_FILE_NAME = 'keel.db';
const TEMP_DIR_PREFIX = 'keel-bench-';
const FSYNC_PROBE_FILE_NAME = 'fsync-probe.db';
const ENDED_EARLY_MAX_RUNS = 10_000;

/**
 * Committed steps seen by agent code: a `ctx.step` promise resolves only once its commit is
 * durable.
 */
export const committed = { steps: 0 };

/**
 * Five sequential steps with trivial bodies; counts each step after its commit was acknowledged.
 */
export const fiveSteps = defineAgent({
  name: 'bench-five-steps',
  version: '1',
  async run(ctx) {
    for (let i = 0; i < STEPS_PER_RUN; i++) {
      await ctx.step(`step-${i}`, () => i);
      committed.steps++;
    }
    return STEPS_PER_RUN;
  },
});

/** Parks at once on an input that never comes: the shape of a run waiting for a human. */
export const waitsForInput = defineAgent({
  name: 'bench-waits-for-input',
  version: '1',
  async run(ctx) {
    return ctx.waitForInput('go');
  },
});

export interface BenchKeel {
  dir: string;
  dbPath: string;
  store: SqliteStore;
  orchestrator: Orchestrator;
  tenantId: string;
  /** Set when started with `http: true`. */
  api: { app: FastifyInstance; url: string; apiKey: string } | undefined;
  /** A run of `agent` ready for store.createRun, as POST /v1/runs would build it. */
  newRun(agent: AgentDefinition, input?: Json): NewRun;
  /**
   * Resolves when the run reaches a terminal status (store.onChange 'ended': no polling delay),
   * even if it already has.
   */
  ended(runId: string): Promise<void>;
  close(): Promise<void>;
}

export interface StartOptions {
  agents: AgentDefinition[];
  /** Where agent code runs (default: this thread). */
  agentHost?: AgentHost;
  http?: boolean;
  /** Keep the temp dir after close (the caller reads the file size first, then removes it). */
  dir?: string;
}

/**
 * Starts an embedded Keel with the default durability ('fsync': every commit fsync'd before it is
 * acknowledged).
 */
export async function startKeel(options: StartOptions): Promise<BenchKeel> {
  const dir = options.dir ?? makeTempDir();
  const dbPath = join(dir, DB_FILE_NAME);
  const store = new SqliteStore({ path: dbPath });
  await store.migrate();
  const registry = new AgentRegistry();
  for (const agent of options.agents) registry.register(agent);
  const orchestrator = new Orchestrator({
    store,
    registry,
    gateway: new ModelGateway([]),
    ...(options.agentHost === undefined ? {} : { agentHost: options.agentHost }),
  });
  await store.expireForeignLeases(orchestrator.owner);
  const apiKey = generateApiKey();
  const tenant = await store.ensureTenant('bench', hashApiKey(apiKey));
  orchestrator.start();
  let api: BenchKeel['api'];
  if (options.http === true) {
    const app = await buildApi({ store, registry });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    api = { app, url, apiKey };
  }
  const waiters = new Map<string, () => void>();
  // Runs that ended before anyone asked (a POST answered after its run already finished); bounded,
  // oldest dropped.
  const endedEarly = new Set<string>();
  const unsubscribe = store.onChange((changes) => {
    for (const change of changes) {
      if (change.signal !== 'ended') continue;
      const resolve = waiters.get(change.runId);
      if (resolve === undefined) {
        endedEarly.add(change.runId);
        if (endedEarly.size > ENDED_EARLY_MAX_RUNS)
          endedEarly.delete(endedEarly.values().next().value!);
        continue;
      }
      waiters.delete(change.runId);
      resolve();
    }
  });
  return {
    dir,
    dbPath,
    store,
    orchestrator,
    tenantId: tenant.id,
    api,
    newRun: (agent, input = null) => ({
      id: newRunId(),
      tenantId: tenant.id,
      agent: agent.name,
      agentVersion: agent.version,
      input,
      priority: 'interactive',
      budget: {},
      metadata: null,
      parentRunId: null,
      idempotencyKey: null,
      requestHash: null,
    }),
    ended: (runId) =>
      endedEarly.delete(runId)
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiters.set(runId, resolve)),
    async close() {
      unsubscribe();
      await api?.app.close();
      await orchestrator.stop();
      await store.close();
      if (options.dir === undefined) removeDir(dir);
    },
  };
}

/**
 * Samples this disk's fsync latency while a scenario runs, on its own file next to Keel's: one
 * single-row transaction with synchronous=FULL per sample. Scenarios sample between their
 * measurements, never during one.
 */
export class FsyncProbe {
  readonly #db: DatabaseSync;
  readonly #insert: StatementSync;
  readonly histogram = createHistogram();

  constructor(dir: string) {
    this.#db = new DatabaseSync(join(dir, FSYNC_PROBE_FILE_NAME));
    this.#db.exec(
      'PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; CREATE TABLE IF NOT EXISTS probe (id INTEGER PRIMARY KEY, at INTEGER NOT NULL) STRICT;',
    );
    this.#insert = this.#db.prepare('INSERT INTO probe (at) VALUES (?)');
  }

  sample(count = 1): void {
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      this.#db.exec('BEGIN IMMEDIATE');
      this.#insert.run(Date.now());
      this.#db.exec('COMMIT');
      recordMs(this.histogram, performance.now() - started);
    }
  }

  close(): void {
    this.#db.close();
  }
}

export function makeTempDir(): string {
  return mkdtempSync(join(tmpdir(), TEMP_DIR_PREFIX));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export interface LatencySummary {
  count: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
}

/** Percentiles of a histogram recorded in nanoseconds, in milliseconds. */
export function summarize(histogram: RecordableHistogram): LatencySummary {
  const ms = (ns: number) => Math.round(ns / 1e3) / 1e3;
  if (histogram.count === 0) return { count: 0, p50Ms: 0, p90Ms: 0, p99Ms: 0, maxMs: 0, meanMs: 0 };
  return {
    count: histogram.count,
    p50Ms: ms(histogram.percentile(50)),
    p90Ms: ms(histogram.percentile(90)),
    p99Ms: ms(histogram.percentile(99)),
    maxMs: ms(histogram.max),
    meanMs: ms(histogram.mean),
  };
}

/**
 * Records a duration measured with performance.now() (milliseconds) into a nanosecond histogram.
 */
export function recordMs(histogram: RecordableHistogram, ms: number): void {
  histogram.record(Math.max(1, Math.round(ms * 1e6)));
}

export function progress(message: string): void {
  process.stdout.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/**
 * Resolves after `ms` without holding the process open past it; scenarios use it only to pace a
 * measurement window.
 */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * RSS after a full garbage collection (needs --expose-gc; without it the figure includes garbage
 * and says so).
 */
export async function settledRss(): Promise<{
  rssBytes: number;
  heapUsedBytes: number;
  gcForced: boolean;
}> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc !== undefined) {
    for (let i = 0; i < 3; i++) {
      gc();
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  const usage = process.memoryUsage();
  return { rssBytes: usage.rss, heapUsedBytes: usage.heapUsed, gcForced: gc !== undefined };
}

export function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

export interface MachineInfo {
  nproc: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  dataDir: string;
  filesystem: string;
  kernel: string;
  /** 1-minute load average when the bench started: other work on the machine shows up here. */
  loadAverage1m: number;
}

/** What the figures were measured on: CPU, memory, Node, and the disk the SQLite files live on. */
export function machineInfo(): MachineInfo {
  const cpuinfo = safe(() => readFileSync('/proc/cpuinfo', 'utf8'), '');
  const cpuModel =
    /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? cpus()[0]?.model ?? 'unknown';
  const dataDir = tmpdir();
  const df = safe(
    () => execFileSync('df', ['-hT', dataDir], { encoding: 'utf8' }).trim().split('\n')[1] ?? '',
    '',
  );
  const [device = '?', fsType = '?', size = '?'] = df.split(/\s+/);
  return {
    nproc: safe(() => Number(execFileSync('nproc', { encoding: 'utf8' }).trim()), cpus().length),
    cpuModel,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    dataDir,
    filesystem: `${fsType} on ${device} (${size})`,
    kernel: safe(() => execFileSync('uname', ['-r'], { encoding: 'utf8' }).trim(), 'unknown'),
    loadAverage1m: Math.round(loadavg()[0]! * 100) / 100,
  };
}

function safe<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}

/** Replaces the section between the `start` and `end` marker lines of a report (or appends it): scenarios that keep
 * their own part of RESULTS.md. */
export function spliceSection(report: string, start: string, end: string, body: string): string {
  const section = `${start}\n${body}${end}\n`;
  const from = report.indexOf(start);
  const to = report.indexOf(end);
  if (from >= 0 && to > from)
    return report.slice(0, from) + section + report.slice(to + end.length + 1);
  return report === '' ? section : `${report.trimEnd()}\n\n${section}`;
}

/** The commit the bench ran on, and whether src/ had uncommitted changes. */
export function gitDescription(): string {
  try {
    const head = execGit(['rev-parse', '--short', 'HEAD']);
    const dirty = execGit(['status', '--porcelain', '--', 'src']).length > 0;
    return `${head}${dirty ? ' (src/ has uncommitted changes)' : ''}`;
  } catch {
    return 'unknown';
  }
}

function execGit(gitArgs: string[]): string {
  return execFileSync('git', gitArgs, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  }).trim();
}
