// Keel on Postgres, the same shape as the DBOS reference (five sequential durable steps, 50 in
// flight), with 1, 2 and 4 worker processes. With one, Keel runs in the bench process (store +
// orchestrator, runs created through the store). With more, `keel worker` child processes do the
// work and the bench process only creates runs and hears them end through LISTEN/NOTIFY. Each
// configuration gets a fresh database, dropped after.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { newRunId } from '../../src/domain/ids.ts';
import { Orchestrator } from '../../src/engine/orchestrator.ts';
import { AgentRegistry } from '../../src/engine/registry.ts';
import { ModelGateway } from '../../src/models/gateway.ts';
import {
  PostgresStore,
  PG_POOL_MAX_CONNECTIONS_DEFAULT,
} from '../../src/store/postgres/postgres-store.ts';
import { gapObservers, pgFiveSteps } from '../pg-agents.ts';
import { measureShape, ShapeCounters, type PostgresShapeResult } from '../postgres-shape.ts';
import {
  benchDatabaseUrl,
  createFreshDatabase,
  dropDatabase,
  PostgresMeter,
  postgresAvailability,
} from '../postgres-support.ts';
import { makeTempDir, progress, recordMs, summarize, type LatencySummary } from '../support.ts';

const DATABASE = 'keel_bench_keel';
const WORKER_COUNTS = [1, 2, 4] as const;
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const AGENTS = fileURLToPath(new URL('../pg-agents.ts', import.meta.url));
const WORKER_START_TIMEOUT_MS = 30_000;

export interface KeelPostgresResult extends PostgresShapeResult {
  workerProcesses: number;
  /** In-process only: the engine's own measure, effect committed → next effect dispatched. */
  dispatchLatency: LatencySummary | null;
  /**
   * In-process only: the step gap of runs executed one at a time on an otherwise idle Keel (one
   * commit's latency).
   */
  stepGapAlone: LatencySummary | null;
}

/** Lone runs measured after the loaded window, one at a time. */
const LONE_RUNS = { quick: 20, full: 100 } as const;

export async function runKeelPostgres(options: { quick: boolean }): Promise<KeelPostgresResult[]> {
  const server = await postgresAvailability();
  if (!server.ok) throw new Error(server.reason);
  const results: KeelPostgresResult[] = [];
  for (const workers of WORKER_COUNTS) {
    await createFreshDatabase(DATABASE);
    try {
      const measured =
        workers === 1
          ? await inProcess(options.quick)
          : await withWorkerProcesses(options.quick, workers);
      results.push({
        ...measured,
        serverVersion: server.serverVersion,
        synchronousCommit: server.synchronousCommit,
      });
      progress(
        `Keel on Postgres, ${workers} worker process(es): ${measured.stepsPerSec} durable steps/s, ` +
          `step gap p50 ${measured.stepGap.p50Ms} ms p99 ${measured.stepGap.p99Ms} ms, ${measured.postgres.transactionsPerStep} Postgres transactions per step`,
      );
    } finally {
      await dropDatabase(DATABASE);
    }
  }
  return results;
}

type Measured = Omit<KeelPostgresResult, 'serverVersion' | 'synchronousCommit'>;

async function inProcess(quick: boolean): Promise<Measured> {
  const store = new PostgresStore({ connectionString: benchDatabaseUrl(DATABASE) });
  await store.migrate();
  const registry = new AgentRegistry();
  registry.register(pgFiveSteps);
  const orchestrator = new Orchestrator({ store, registry, gateway: new ModelGateway() });
  const counters = new ShapeCounters();
  const observe = (ms: number) => recordMs(counters.stepGap, ms);
  gapObservers.push(observe);
  const tenant = await store.ensureTenant('bench', 'bench-key-hash');
  orchestrator.start();
  const meter = await PostgresMeter.open(DATABASE);
  try {
    const runWorkflow = submitter(store, tenant.id, counters);
    const measured = await measureShape({
      quick,
      label: 'Keel on Postgres, 1 worker (in-process)',
      counters,
      meter,
      runWorkflow: runWorkflow.run,
    });
    counters.stepGap.reset();
    for (let i = 0; i < (quick ? LONE_RUNS.quick : LONE_RUNS.full); i++) await runWorkflow.run();
    const stepGapAlone = summarize(counters.stepGap);
    progress(
      `Keel on Postgres, lone runs: step gap p50 ${stepGapAlone.p50Ms} ms p99 ${stepGapAlone.p99Ms} ms`,
    );
    return {
      stepGapAlone,
      system: 'Keel (embedded orchestrator, Postgres store)',
      poolSize: PG_POOL_MAX_CONNECTIONS_DEFAULT,
      workerProcesses: 1,
      // Over the whole scenario, warm-up included: the orchestrator's histogram is not reset at the
      // window's start.
      dispatchLatency: summarize(orchestrator.dispatchLatency),
      ...measured,
    };
  } finally {
    gapObservers.splice(gapObservers.indexOf(observe), 1);
    await meter.close();
    await orchestrator.stop();
    await store.close();
  }
}

async function withWorkerProcesses(quick: boolean, workers: number): Promise<Measured> {
  const store = new PostgresStore({ connectionString: benchDatabaseUrl(DATABASE) });
  await store.migrate();
  const tenant = await store.ensureTenant('bench', 'bench-key-hash');
  const dir = makeTempDir();
  const children: ChildProcess[] = [];
  const counters = new ShapeCounters();
  const meter = await PostgresMeter.open(DATABASE);
  try {
    for (let i = 0; i < workers; i++) children.push(await startWorker(join(dir, `gaps-${i}.json`)));
    const runWorkflow = submitter(store, tenant.id, counters);
    const measured = await measureShape({
      quick,
      label: `Keel on Postgres, ${workers} worker processes`,
      counters,
      meter,
      runWorkflow: runWorkflow.run,
    });
    await Promise.all(children.map(stopWorker));
    // Worker step gaps come from the workers' own files and include their warm-up.
    const gaps = children.flatMap(
      (_, i) => JSON.parse(readFileSync(join(dir, `gaps-${i}.json`), 'utf8')) as number[],
    );
    for (const gap of gaps) recordMs(counters.stepGap, gap);
    return {
      system: 'Keel (keel worker processes, Postgres store)',
      poolSize: PG_POOL_MAX_CONNECTIONS_DEFAULT * workers,
      workerProcesses: workers,
      dispatchLatency: null,
      stepGapAlone: null,
      ...measured,
      stepGap: summarize(counters.stepGap),
    };
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await meter.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Creates a run through the store and resolves when the store reports it ended (heard via
 * LISTEN/NOTIFY too).
 */
function submitter(
  store: PostgresStore,
  tenantId: string,
  counters: ShapeCounters,
): { run: () => Promise<void> } {
  const waiting = new Map<string, () => void>();
  store.onChange((changes) => {
    for (const change of changes) {
      if (change.signal !== 'ended') continue;
      const done = waiting.get(change.runId);
      if (done !== undefined) {
        waiting.delete(change.runId);
        counters.steps += 5;
        done();
      }
    }
  });
  return {
    async run() {
      const id = newRunId();
      const ended = new Promise<void>((resolve) => waiting.set(id, resolve));
      await store.createRun({
        id,
        tenantId,
        agent: pgFiveSteps.name,
        agentVersion: pgFiveSteps.version,
        input: null,
        priority: 'interactive',
        budget: {},
        metadata: null,
        parentRunId: null,
        idempotencyKey: null,
        requestHash: null,
      });
      await ended;
    },
  };
}

function startWorker(gapFile: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [MAIN, 'worker', '--agents', AGENTS], {
    env: {
      ...process.env,
      KEEL_DATABASE_URL: benchDatabaseUrl(DATABASE),
      KEEL_LOG_LEVEL: 'warn',
      BENCH_STEP_GAP_FILE: gapFile,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('keel worker did not start in time')),
      WORKER_START_TIMEOUT_MS,
    );
    child.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('keel worker:')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.once('exit', (code) => reject(new Error(`keel worker exited with ${code}`)));
  });
}

function stopWorker(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
