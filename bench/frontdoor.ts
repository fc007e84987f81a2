// `npm run bench:frontdoor [-- --quick] [--runs 2000] [--waiting 100000] [--submit auto|batch|single]`:
// Keel measured black-box through its front door, side by side with Restate and DBOS in one
// invocation (issue 25). One system at a time, each started fresh by this command and stopped after:
// `keel dev` on SQLite with isolates, `keel dev` on a fresh PostgreSQL database with isolates, the
// Restate server (npm @restatedev/restate-server) with a Node endpoint, and DBOS Transact on its own
// Postgres database. Each runs the seed workload (bench/frontdoor/workload.ts) in a closed loop from
// a client process of its own (DBOS: in-process, it is a library), metered over a window
// (bench/frontdoor/loop.ts). Then lone runs over HTTP + SSE (isolates, and
// KEEL_AGENT_ISOLATION=thread), the lone Postgres step gap (bench/pg-lone-runs.ts), and runs waiting
// for input submitted over HTTP with the Keel process's RSS. Writes its section of bench/RESULTS.md
// (between its markers); `--quick` (~1 min, small counts) only prints it.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  benchDatabaseUrl,
  createFreshDatabase,
  dropDatabase,
  localPostmasterPid,
  postgresAvailability,
} from './postgres-support.ts';
import { gitDescription, machineInfo, progress, spliceSection } from './support.ts';
import type { DbosResult } from './frontdoor/dbos-system.ts';
import type { LoopResult } from './frontdoor/loop.ts';
import {
  renderFrontdoorSection,
  type FrontdoorResults,
  type LoneRuns,
  type SystemRow,
} from './frontdoor/report.ts';
import { RESTATE_SERVICE } from './frontdoor/restate-endpoint.ts';
import {
  BENCH_API_KEY,
  runChild,
  runClientProcess,
  runJsonChild,
  startKeelDev,
  startRestate,
  type KeelOptions,
} from './frontdoor/systems.ts';
import { runWaiting, type Submission } from './frontdoor/waiting.ts';
import { FIVE_STEPS_AGENT } from './frontdoor/workload.ts';

const RESULTS = fileURLToPath(new URL('./RESULTS.md', import.meta.url));
const SECTION_START = '<!-- frontdoor section: written by bench/frontdoor.ts -->';
const SECTION_END = '<!-- end of frontdoor section -->';
const DBOS_SYSTEM = fileURLToPath(new URL('./frontdoor/dbos-system.ts', import.meta.url));
const PG_LONE_RUNS = fileURLToPath(new URL('./pg-lone-runs.ts', import.meta.url));
const KEEL_DATABASE = 'keel_bench_frontdoor_keel';
const LANES = 50;

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    runs: { type: 'string' },
    warmup: { type: 'string' },
    lone: { type: 'string' },
    waiting: { type: 'string' },
    submit: { type: 'string', default: 'auto' },
  },
});
const quick = flags.quick;
const RUNS = Number(flags.runs ?? (quick ? 200 : 2_000));
const WARMUP = Number(flags.warmup ?? (quick ? 50 : 300));
const LONE = Number(flags.lone ?? (quick ? 30 : 200));
const WAITING = Number(flags.waiting ?? (quick ? 2_000 : 100_000));
const SUBMIT = flags.submit as Submission;
if (!['auto', 'batch', 'single'].includes(SUBMIT))
  throw new Error('--submit: auto, batch or single');

const loop = { lanes: LANES, warmupRuns: WARMUP, runs: RUNS };

/** `keel dev` with the client process in a closed loop against it. */
async function keelRow(
  system: string,
  options: KeelOptions,
  postmaster: number | undefined,
): Promise<SystemRow> {
  const keel = await startKeelDev(options);
  try {
    const trees: Record<string, number> = { keel: keel.pid };
    if (postmaster !== undefined) trees.postgres = postmaster;
    progress(`${system}: ${WARMUP} warm-up workflows, then ${RUNS} measured`);
    const result = await runClientProcess({
      target: 'keel',
      url: keel.url,
      apiKey: BENCH_API_KEY,
      agent: FIVE_STEPS_AGENT,
      ...loop,
      trees,
    });
    return {
      system,
      client: 'HTTP: POST /v1/runs + SSE to the terminal event',
      result: checked(system, result),
      inProcessClient: false,
      serverTrees: Object.keys(trees),
      ...(postmaster === undefined ? {} : { postgresTree: 'postgres' }),
    };
  } finally {
    await keel.stop();
  }
}

async function restateRow(): Promise<SystemRow> {
  const system = `Restate ${packageVersion('@restatedev/restate-server')} (server + Node endpoint, SDK ${packageVersion('@restatedev/restate-sdk')})`;
  const restate = await startRestate();
  try {
    progress(`${system}: ${WARMUP} warm-up workflows, then ${RUNS} measured`);
    const result = await runClientProcess({
      target: 'restate',
      url: restate.url,
      path: `/${RESTATE_SERVICE}/run`,
      ...loop,
      trees: { server: restate.pid, endpoint: restate.endpointPid },
    });
    return {
      system,
      client: 'HTTP ingress, synchronous call (waits for the result)',
      result: checked(system, result),
      inProcessClient: false,
      serverTrees: ['server', 'endpoint'],
    };
  } finally {
    await restate.stop();
  }
}

async function dbosRow(postmaster: number | undefined): Promise<SystemRow> {
  progress(`DBOS Transact: ${WARMUP} warm-up workflows, then ${RUNS} measured`);
  const trees: Record<string, number> = postmaster === undefined ? {} : { postgres: postmaster };
  const result = await runJsonChild<DbosResult>(
    DBOS_SYSTEM,
    [JSON.stringify({ ...loop, trees })],
    'DBOS',
  );
  const system = `DBOS Transact ${result.version} (Postgres)`;
  return {
    system,
    client: 'in-process (a library): 50 concurrent workflow calls',
    result: checked(system, result),
    inProcessClient: true,
    serverTrees: Object.keys(trees),
    ...(postmaster === undefined ? {} : { postgresTree: 'postgres' }),
  };
}

/**
 * A part that fails (a server that would not start, a database restarted under it) is recorded as
 * skipped with the reason, and the rest still runs.
 */
async function attempt<T>(
  what: string,
  part: (what: string) => Promise<T>,
): Promise<T | { system: string; skipped: string }> {
  try {
    return await part(what);
  } catch (error) {
    // One line, no table separators: the reason lands in a Markdown table cell.
    const reason = (error instanceof Error ? error.message : String(error))
      .replace(/\s+/g, ' ')
      .replaceAll('|', '/')
      .slice(0, 300);
    progress(`${what}: failed, recorded as skipped: ${reason}`);
    return { system: what, skipped: reason };
  }
}

function checked(system: string, result: LoopResult): LoopResult {
  if (result.failures.length > 0)
    throw new Error(`${system}: ${result.failures.length} failures: ${result.failures.join('; ')}`);
  const steps = result.runs * 5;
  progress(
    `${system}: ${Math.round(steps / result.seconds)} durable steps/s, machine ${(result.machineCpuMs / steps).toFixed(3)} ms/step, ` +
      `client ${(result.selfCpuMs / steps).toFixed(3)} ms/step, processes ${JSON.stringify(result.treeCpuMs)} ms`,
  );
  return result;
}

async function loneRuns(isolation: 'isolate' | 'thread'): Promise<LoopResult> {
  const keel = await startKeelDev({ isolation });
  try {
    const result = await runClientProcess({
      target: 'keel',
      url: keel.url,
      apiKey: BENCH_API_KEY,
      agent: FIVE_STEPS_AGENT,
      lanes: 1,
      warmupRuns: Math.max(10, Math.round(LONE / 10)),
      runs: LONE,
      trees: { keel: keel.pid },
    });
    progress(
      `lone runs over HTTP + SSE, ${isolation}: p50 ${result.latency.p50Ms} ms, p99 ${result.latency.p99Ms} ms`,
    );
    return result;
  } finally {
    await keel.stop();
  }
}

async function postgresStepGap(): Promise<LoneRuns['postgresStepGap']> {
  const out = await runChild(PG_LONE_RUNS, ['--runs', String(LONE)], 'bench/pg-lone-runs.ts');
  const match = /p50 ([\d.]+) ms, p90 ([\d.]+) ms, p99 ([\d.]+) ms/.exec(out);
  if (match === null) throw new Error(`bench/pg-lone-runs.ts printed no percentiles: ${out}`);
  progress(`lone Postgres step gap: p50 ${match[1]} ms, p99 ${match[3]} ms`);
  return { p50: Number(match[1]), p90: Number(match[2]), p99: Number(match[3]), runs: LONE };
}

function packageVersion(name: string): string {
  const entry = fileURLToPath(import.meta.resolve(`${name}/package.json`));
  return (JSON.parse(readFileSync(entry, 'utf8')) as { version: string }).version;
}

const started = Date.now();
const machine = machineInfo();
progress(
  `front-door bench${quick ? ' (quick: prints only)' : ''}: load average ${machine.loadAverage1m} on ${machine.nproc} cores`,
);
const pg = await postgresAvailability();
const systems: FrontdoorResults['systems'] = [];
systems.push(
  await attempt('Keel `keel dev` (SQLite, isolates)', (system) =>
    keelRow(system, { isolation: 'isolate' }, undefined),
  ),
);
systems.push(await attempt('Restate', restateRow));
if (pg.ok) {
  systems.push(
    await attempt('Keel `keel dev` on PostgreSQL (isolates)', async (system) => {
      await createFreshDatabase(KEEL_DATABASE);
      try {
        const url = benchDatabaseUrl(KEEL_DATABASE);
        return await keelRow(
          system,
          { isolation: 'isolate', databaseUrl: url },
          await localPostmasterPid(),
        );
      } finally {
        await dropDatabase(KEEL_DATABASE);
      }
    }),
  );
  systems.push(
    await attempt('DBOS Transact (Postgres)', async () => dbosRow(await localPostmasterPid())),
  );
} else {
  systems.push({ system: 'Keel `keel dev` on PostgreSQL (isolates)', skipped: pg.reason });
  systems.push({ system: 'DBOS Transact (Postgres)', skipped: pg.reason });
}
const lone: LoneRuns = {
  isolate: await attempt('lone runs, isolates', () => loneRuns('isolate')),
  thread: await attempt('lone runs, thread', () => loneRuns('thread')),
  postgresStepGap: pg.ok
    ? await attempt('lone Postgres step gap', postgresStepGap)
    : { skipped: pg.reason },
};
const waiting = await attempt('waiting runs', () => runWaiting(WAITING, SUBMIT));
const results: FrontdoorResults = {
  date: new Date().toISOString(),
  quick,
  durationSeconds: Math.round((Date.now() - started) / 1000),
  machine,
  git: gitDescription(),
  command: `npm run bench:frontdoor${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
  ...loop,
  systems,
  lone,
  waiting,
};
const section = renderFrontdoorSection(results);
process.stdout.write(`\n${section}\n`);
if (quick) progress('quick run: RESULTS.md left as it was');
else {
  writeFileSync(
    RESULTS,
    spliceSection(readFileSync(RESULTS, 'utf8'), SECTION_START, SECTION_END, section),
  );
  progress(`wrote its section of ${RESULTS} in ${results.durationSeconds} s`);
}
