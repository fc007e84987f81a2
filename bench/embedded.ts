// `npx node bench/embedded.ts [--quick] [--record]`: Keel as a library (keel/embedded, issue 26)
// beside the in-process libraries a user would compare it with, in one run on one machine: Keel on
// SQLite and on Postgres, DBOS Transact and LangGraph.js (a 5-node sequential graph checkpointed by
// PostgresSaver with durability "sync": each node's checkpoint is committed before the next node
// starts; LangGraph's SQLite checkpointer needs the better-sqlite3 native addon, not usable here,
// so LangGraph runs on Postgres only). Keel is driven only through its public API
// (startKeel, keel.runs.create, keel.runs.wait), never through store calls.
// Two measurements per system, each system in its own child process: the lone-run latency (one
// 5-step workflow at a time, submit → result) and the throughput shape of postgres-shape.ts
// (workflows of 5 sequential durable steps, 50 in flight). `--record` splices the table into
// bench/RESULTS.md's embedded section, leaving every other section as it is.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { createHistogram } from 'node:perf_hooks';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import pg from 'pg';
import { startKeel } from '../src/embedded/index.ts';
import { defineAgent } from '../src/index.ts';
import { measureLoad, ShapeCounters, type LoadMeasurement } from './postgres-shape.ts';
import { dbosVersion, registerFiveSteps } from './scenarios/dbos-reference.ts';
import {
  benchDatabaseUrl,
  createFreshDatabase,
  dropDatabase,
  PostgresMeter,
  postgresAvailability,
  type PostgresFigures,
  type PostgresSample,
} from './postgres-support.ts';
import {
  machineInfo,
  makeTempDir,
  progress,
  recordMs,
  removeDir,
  spliceSection,
  STEPS_PER_RUN,
  summarize,
  type LatencySummary,
} from './support.ts';

const SYSTEMS = ['keel-sqlite', 'keel-postgres', 'dbos', 'langgraph'] as const;
type SystemName = (typeof SYSTEMS)[number];
const DATABASE = 'keel_bench_embedded';
/** The connections DBOS and LangGraph may hold (DBOS's own default); Keel uses its own default. */
const POOL_SIZE = 10;
const LATENCY_RUNS = { quick: 30, full: 200 } as const;
const LATENCY_WARMUP = { quick: 5, full: 30 } as const;
const CHILD_TIMEOUT_MS = 180_000;
const SECTION_START = '<!-- embedded section: written by bench/embedded.ts --record -->';
const SECTION_END = '<!-- end of embedded section -->';
const RESULTS_PATH = join(fileURLToPath(new URL('.', import.meta.url)), 'RESULTS.md');

interface SystemResult {
  system: string;
  store: string;
  /** The machine's 1-minute load average as this system's measurement began (2 cores: 2 is full). */
  loadAtStart: number;
  latency: LatencySummary;
  throughput: LoadMeasurement;
  postgres: PostgresFigures | undefined;
}

/** What one system under test offers the two measurements. */
interface UnderTest {
  label: string;
  store: string;
  counters: ShapeCounters;
  runWorkflow(): Promise<unknown>;
  meter: PostgresMeter | undefined;
  close(): Promise<void>;
}

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    record: { type: 'boolean', default: false },
    system: { type: 'string' },
    out: { type: 'string' },
  },
});
const quick = values.quick === true;

if (values.system !== undefined) await runChild(values.system as SystemName, values.out!);
else await runAll();

async function runAll(): Promise<void> {
  const started = Date.now();
  const machine = machineInfo();
  const server = await postgresAvailability();
  const dir = makeTempDir();
  const results: Array<SystemResult | { system: SystemName; skipped: string }> = [];
  try {
    for (const system of SYSTEMS) {
      if (system !== 'keel-sqlite' && !server.ok) {
        results.push({ system, skipped: server.reason });
        continue;
      }
      const out = join(dir, `${system}.json`);
      await runInChild(system, out);
      results.push(JSON.parse(readFileSync(out, 'utf8')) as SystemResult);
    }
  } finally {
    removeDir(dir);
  }
  const postgres = server.ok
    ? `PostgreSQL ${server.serverVersion} (synchronous_commit=${server.synchronousCommit}) on the same machine`
    : 'no PostgreSQL';
  const body = render(results, {
    date: new Date().toISOString(),
    seconds: Math.round((Date.now() - started) / 1000),
    machine: `${machine.nproc} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, ${machine.filesystem}, Node ${machine.node}, load ${machine.loadAverage1m} at start; ${postgres}`,
  });
  process.stdout.write(`\n${body}\n`);
  if (values.record && !quick) {
    writeFileSync(
      RESULTS_PATH,
      spliceSection(readFileSync(RESULTS_PATH, 'utf8'), SECTION_START, SECTION_END, body),
    );
    progress(`recorded in ${RESULTS_PATH}`);
  }
}

function runInChild(system: SystemName, out: string): Promise<void> {
  const args = [fileURLToPath(import.meta.url), '--system', system, '--out', out];
  if (quick) args.push('--quick');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: 'inherit' });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${system} took longer than ${CHILD_TIMEOUT_MS} ms`));
    }, CHILD_TIMEOUT_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${system} exited with ${code}`));
    });
  });
}

async function runChild(system: SystemName, out: string): Promise<void> {
  const loadAtStart = Math.round(loadavg()[0]! * 100) / 100;
  const underTest = await open(system);
  try {
    const latency = await loneRunLatency(underTest);
    progress(`${underTest.label}: lone run p50 ${latency.p50Ms} ms, p99 ${latency.p99Ms} ms`);
    let startPg: PostgresSample | undefined;
    let endPg: PostgresSample | undefined;
    const meter = underTest.meter;
    const throughput = await measureLoad({
      quick,
      label: underTest.label,
      counters: underTest.counters,
      runWorkflow: () => underTest.runWorkflow(),
      atWindowStart: async () => {
        startPg = await meter?.sample();
      },
      atWindowEnd: async () => {
        endPg = await meter?.sample();
      },
    });
    progress(
      `${underTest.label}: ${throughput.stepsPerSec} durable steps/s, ${throughput.workflowsPerSec} workflows/s`,
    );
    const postgres =
      meter === undefined ? undefined : meter.figures(startPg!, endPg!, throughput.steps);
    const result: SystemResult = {
      system: underTest.label,
      store: underTest.store,
      loadAtStart,
      latency,
      throughput,
      postgres,
    };
    writeFileSync(out, JSON.stringify(result));
  } finally {
    await underTest.close();
  }
}

/** One workflow at a time on an otherwise idle system: submit → its result, after a warm-up. */
async function loneRunLatency(underTest: UnderTest): Promise<LatencySummary> {
  const histogram = createHistogram();
  const runs = quick ? LATENCY_RUNS.quick : LATENCY_RUNS.full;
  const warmup = quick ? LATENCY_WARMUP.quick : LATENCY_WARMUP.full;
  for (let i = 0; i < warmup; i += 1) await underTest.runWorkflow();
  for (let i = 0; i < runs; i += 1) {
    const started = performance.now();
    await underTest.runWorkflow();
    recordMs(histogram, performance.now() - started);
  }
  return summarize(histogram);
}

async function open(system: SystemName): Promise<UnderTest> {
  const counters = new ShapeCounters();
  if (system === 'keel-sqlite' || system === 'keel-postgres') return openKeel(system, counters);
  if (system === 'dbos') return openDbos(counters);
  return openLangGraph(counters);
}

/** Keel through keel/embedded only: startKeel, runs.create, runs.wait. */
async function openKeel(system: SystemName, counters: ShapeCounters): Promise<UnderTest> {
  const fiveSteps = defineAgent({
    name: 'bench-five-steps',
    version: '1',
    async run(ctx) {
      let previousEnded: number | undefined;
      for (let i = 0; i < STEPS_PER_RUN; i += 1) {
        await ctx.step(`step-${i}`, () => {
          counters.stepStarted(previousEnded);
          previousEnded = performance.now();
          return i;
        });
        counters.steps++;
      }
      return STEPS_PER_RUN;
    },
  });
  const onPostgres = system === 'keel-postgres';
  const dir = makeTempDir();
  if (onPostgres) await createFreshDatabase(DATABASE);
  const keel = await startKeel({
    agents: [fiveSteps],
    ...(onPostgres ? { databaseUrl: benchDatabaseUrl(DATABASE) } : { dataDir: dir }),
  });
  const meter = onPostgres ? await PostgresMeter.open(DATABASE) : undefined;
  return {
    label: `Keel ${keelVersion()} (keel/embedded)`,
    store: onPostgres ? 'Postgres' : 'SQLite (durability: default)',
    counters,
    meter,
    async runWorkflow() {
      const run = await keel.runs.create({ agent: fiveSteps.name });
      const done = await keel.runs.wait(run.id);
      if (done.status !== 'succeeded') throw new Error(`run ${run.id} ended ${done.status}`);
    },
    async close() {
      await meter?.close();
      await keel.close();
      removeDir(dir);
      if (onPostgres) await dropDatabase(DATABASE);
    },
  };
}

async function openDbos(counters: ShapeCounters): Promise<UnderTest> {
  await createFreshDatabase(DATABASE);
  const workflow = registerFiveSteps(counters);
  DBOS.setConfig({
    name: 'keel-bench-embedded',
    systemDatabaseUrl: benchDatabaseUrl(DATABASE),
    systemDatabasePoolSize: POOL_SIZE,
    logLevel: 'warn',
  });
  await DBOS.launch();
  const meter = await PostgresMeter.open(DATABASE);
  return {
    label: `DBOS Transact ${dbosVersion()}`,
    store: 'Postgres',
    counters,
    meter,
    runWorkflow: () => workflow(),
    async close() {
      await meter.close();
      await DBOS.shutdown();
      await dropDatabase(DATABASE);
    },
  };
}

async function openLangGraph(counters: ShapeCounters): Promise<UnderTest> {
  await createFreshDatabase(DATABASE);
  const pool = new pg.Pool({ connectionString: benchDatabaseUrl(DATABASE), max: POOL_SIZE });
  const saver = new PostgresSaver(pool);
  await saver.setup();
  const State = Annotation.Root({ n: Annotation<number>, previousEnded: Annotation<number> });
  // Five nodes in a line; each reports its start like the other systems' steps do.
  let builder: any = new StateGraph(State);
  for (let i = 0; i < STEPS_PER_RUN; i += 1)
    builder = builder.addNode(`step-${i}`, (state: typeof State.State) => {
      counters.stepStarted(i === 0 ? undefined : state.previousEnded);
      return { n: state.n + 1, previousEnded: performance.now() };
    });
  builder = builder.addEdge(START, 'step-0');
  for (let i = 1; i < STEPS_PER_RUN; i += 1)
    builder = builder.addEdge(`step-${i - 1}`, `step-${i}`);
  builder = builder.addEdge(`step-${STEPS_PER_RUN - 1}`, END);
  const graph = builder.compile({ checkpointer: saver });
  const meter = await PostgresMeter.open(DATABASE);
  return {
    label: `LangGraph.js ${packageVersion('@langchain/langgraph')} (PostgresSaver ${packageVersion('@langchain/langgraph-checkpoint-postgres')}, durability "sync")`,
    store: 'Postgres',
    counters,
    meter,
    async runWorkflow() {
      const config = { configurable: { thread_id: randomUUID() }, durability: 'sync' };
      const state = (await graph.invoke({ n: 0, previousEnded: 0 }, config)) as { n: number };
      if (state.n !== STEPS_PER_RUN) throw new Error(`the graph ended at n=${state.n}`);
      counters.steps += STEPS_PER_RUN; // every node's checkpoint committed once invoke returns
    },
    async close() {
      await meter.close();
      await pool.end();
      await dropDatabase(DATABASE);
    },
  };
}

function render(
  results: Array<SystemResult | { system: SystemName; skipped: string }>,
  run: { date: string; seconds: number; machine: string },
): string {
  const lines = [
    '## Keel as a library (keel/embedded) beside DBOS and LangGraph.js',
    '',
    `Measured ${run.date} in ${run.seconds} s by \`npx node bench/embedded.ts --record\`, every system in the same run,`,
    `each in its own process, one after another: ${run.machine}.`,
    '',
    'Keel is driven only through its public embedded API (`startKeel`, `keel.runs.create`, `keel.runs.wait`);',
    'DBOS through `DBOS.registerWorkflow`/`DBOS.runStep`; LangGraph.js through `graph.invoke` on a 5-node line',
    'checkpointed by PostgresSaver with `durability: "sync"` (its default, "async", does not wait for a',
    "node's checkpoint before the next node). LangGraph.js is measured on Postgres only: its SQLite",
    'checkpointer needs the better-sqlite3 native addon, which cannot be used here. DBOS and LangGraph.js',
    `hold up to ${POOL_SIZE} connections; Keel on Postgres its own default pool.`,
    '',
    `Lone run: one 5-step workflow at a time (none other in the system), submit → result (${quick ? LATENCY_RUNS.quick : LATENCY_RUNS.full} runs after a warm-up).`,
    'Throughput: workflows of 5 sequential durable steps with trivial bodies, 50 in flight, a warm-up, then',
    'a counted window (the shape of sections 6 and 7).',
    '',
    '| System | Store | Lone run p50 | p99 | Durable steps/s | Workflows/s (window) | Step gap p50 / p99 | Postgres transactions per step | Client CPU | Load at start |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    if ('skipped' in r) {
      lines.push(`| ${r.system} | — | skipped: ${r.skipped} | | | | | | | |`);
      continue;
    }
    const t = r.throughput;
    lines.push(
      `| ${r.system} | ${r.store} | ${r.latency.p50Ms} ms | ${r.latency.p99Ms} ms | ${t.stepsPerSec} | ${t.workflowsPerSec} (${t.workflows}${t.cutShort ? ', cut short at 60 s' : ''}) | ${t.stepGap.p50Ms} / ${t.stepGap.p99Ms} ms | ${r.postgres?.transactionsPerStep ?? '—'} | ${t.clientCpuUserPct + t.clientCpuSystemPct}% | ${r.loadAtStart} |`,
    );
  }
  lines.push(
    '',
    `A load at start above the core count means other work shared the CPUs: figures of one run compare with each other,`,
    'not with sections measured on an idle machine.',
  );
  const failed = results.some((r) => !('skipped' in r) && r.throughput.failedLanes > 0);
  if (failed) lines.push('', 'Some lanes failed: see the raw output.');
  lines.push('');
  return `${lines.join('\n')}\n`;
}

function keelVersion(): string {
  return (
    JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    }
  ).version;
}

/** An installed package's version, read from its package.json (which it may not export). */
function packageVersion(name: string): string {
  let url = new URL(import.meta.resolve(name));
  for (;;) {
    const manifest = new URL('package.json', url);
    try {
      const parsed = JSON.parse(readFileSync(manifest, 'utf8')) as {
        name?: string;
        version: string;
      };
      if (parsed.name === name) return parsed.version;
    } catch {
      // not this directory: go up
    }
    const parent = new URL('..', url);
    if (parent.href === url.href) return 'unknown';
    url = parent;
  }
}
