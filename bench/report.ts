// Renders the collected scenario results as bench/RESULTS.md: the machine, a targets table (target,
// measured, met or not), the reference figures from issue #2 next to ours (and the systems measured
// on Postgres in the same run, each with a section from postgresShapeSection), each scenario's
// details, and the raw JSON. Pure formatting: it measures nothing, and a figure it cannot find is
// shown as missing rather than guessed.
import type { PostgresShapeResult } from './postgres-shape.ts';
import type { KeelPostgresResult } from './scenarios/keel-postgres.ts';
import type { DbosReferenceResult } from './scenarios/dbos-reference.ts';
import type { FsyncCeilingResult } from './scenarios/fsync-ceiling.ts';
import type { LatencyAloneResult } from './scenarios/latency-alone.ts';
import type { ThroughputResult } from './scenarios/throughput.ts';
import type { WaitingRssResult } from './scenarios/waiting-rss.ts';
import type { ModelGatewayResult } from './scenarios/model-gateway.ts';
import { modelGatewaySection } from './model-gateway-report.ts';
import type { LatencySummary, MachineInfo } from './support.ts';

export interface BenchResults {
  date: string;
  quick: boolean;
  durationSeconds: number;
  machine: MachineInfo;
  git: string;
  scenarios: {
    fsyncBefore: FsyncCeilingResult;
    throughputStore: ThroughputResult;
    throughputHttp: ThroughputResult;
    latencyAlone: LatencyAloneResult;
    waitingRss: WaitingRssResult;
    dbosReference: DbosReferenceResult | SkippedScenario;
    keelPostgres: KeelPostgresResult[] | SkippedScenario;
    fsyncAfter: FsyncCeilingResult;
    /** Scenario 8; absent in result sets recorded before it existed. */
    modelGateway?: ModelGatewayResult;
  };
}

/** A scenario that did not run here (its Postgres did not answer), and why. */
export interface SkippedScenario {
  skipped: true;
  reason: string;
}

export const TARGETS = {
  effectsPerSecMin: 10_000,
  dispatchP50MsMax: 1,
  dispatchP99MsMax: 20,
  endToEndP50MsMax: 3,
  /** "10 KB" read strictly as 10,000 bytes. */
  waitingRunBytesMax: 10_000,
} as const;

const REFERENCES: Array<[string, string]> = [
  ['Restate', '≈ 970 durable steps/s'],
  ['LangGraph.js, SQLite checkpointer', '≈ 780/s with fsync (≈ 1,100/s without)'],
  ['DBOS on Postgres', '≈ 630/s'],
  ['A single-writer SQLite transaction with fsync', '≈ 5,000–6,000/s'],
];

export function renderReport(r: BenchResults): string {
  const s = r.scenarios;
  const m = r.machine;
  const lines: string[] = [];
  const push = (...more: string[]) => lines.push(...more);
  push(
    '# Keel benchmark results',
    '',
    ...(r.quick ? ['> **Quick smoke run — not the official figures.**', ''] : []),
    `Measured ${r.date.slice(0, 16).replace('T', ' ')} UTC by \`npm run bench\` (${r.durationSeconds} s), Keel at ${r.git}.`,
    "Embedded store (SQLite through node:sqlite, WAL), durability `fsync`: `synchronous=FULL`, so every commit is fsync'd before",
    'it is acknowledged; commits of concurrent runs share a transaction (group commit). Each scenario ran in its own process.',
    '',
    '| Machine | |',
    '|---|---|',
    `| CPUs (nproc) | ${m.nproc} × ${m.cpuModel} |`,
    `| Memory | ${m.memoryGiB} GiB |`,
    `| Node | ${m.node} |`,
    `| Data dir | ${m.dataDir}: ${m.filesystem} |`,
    `| Kernel | ${m.kernel} |`,
    `| Load average (1 min) at start | ${m.loadAverage1m} |`,
    '',
    '## Targets',
    '',
    '| Target | Measured | Met? |',
    '|---|---|---|',
    row(
      `≥ ${n(TARGETS.effectsPerSecMin)} durable effects/s, every commit fsync'd before ack (in-process submission)`,
      `${n(s.throughputStore.effectsPerSec)} effects/s`,
      s.throughputStore.effectsPerSec >= TARGETS.effectsPerSecMin,
    ),
    row(
      `Dispatch latency p50 ≤ ${TARGETS.dispatchP50MsMax} ms at that load`,
      `${ms(s.throughputStore.dispatchLatency.p50Ms)}`,
      s.throughputStore.dispatchLatency.p50Ms <= TARGETS.dispatchP50MsMax,
    ),
    row(
      `Dispatch latency p99 ≤ ${TARGETS.dispatchP99MsMax} ms at that load`,
      `${ms(s.throughputStore.dispatchLatency.p99Ms)}`,
      s.throughputStore.dispatchLatency.p99Ms <= TARGETS.dispatchP99MsMax,
    ),
    row(
      `5-step run end to end ≤ ${TARGETS.endToEndP50MsMax} ms p50 when alone (in-process)`,
      `${ms(s.latencyAlone.inProcess.p50Ms)} p50`,
      s.latencyAlone.inProcess.p50Ms <= TARGETS.endToEndP50MsMax,
    ),
    row(
      `≤ 10 KB RSS per waiting run (read as ${n(TARGETS.waitingRunBytesMax)} B)`,
      `${n(s.waitingRss.rssBytesPerWaitingRun)} B`,
      s.waitingRss.rssBytesPerWaitingRun <= TARGETS.waitingRunBytesMax,
    ),
    '',
    'Also measured, without a target of their own: through HTTP, ' +
      `${n(s.throughputHttp.effectsPerSec)} effects/s (dispatch p50 ${ms(s.throughputHttp.dispatchLatency.p50Ms)}, p99 ${ms(s.throughputHttp.dispatchLatency.p99Ms)}) ` +
      `and a lone run ${ms(s.latencyAlone.http.p50Ms)} p50 from POST to run.succeeded on its SSE stream.`,
    '',
    '## Against the reference figures',
    '',
    'Same shape: runs of 5 sequential durable steps, 50 runs in flight.',
    '',
    '| System | Durable steps/s | Source |',
    '|---|---|---|',
    ...REFERENCES.map(
      ([name, figure]) =>
        `| ${name} | ${figure} | reference, from issue #2, not re-measured here |`,
    ),
    `| **Keel**, embedded, in-process submission | **${n(s.throughputStore.effectsPerSec)}/s** | measured here |`,
    `| **Keel**, embedded, submission through POST /v1/runs | **${n(s.throughputHttp.effectsPerSec)}/s** | measured here |`,
    `| SQLite single-row transactions, synchronous=FULL, this disk | ${n(s.fsyncBefore.full.txPerSec)}/s before, ${n(s.fsyncAfter.full.txPerSec)}/s after | measured here (scenario 1) |`,
    postgresReferenceRow(
      'DBOS Transact on Postgres, 5-step workflows, 50 in flight',
      s.dbosReference,
      6,
    ),
    ...keelPostgresRows(s.keelPostgres),
    '',
    ...keelVersusDbos(s.keelPostgres, s.dbosReference),
  );
  push(...fsyncSection(s.fsyncBefore, s.fsyncAfter));
  push(...throughputSection(s.throughputStore, s.throughputHttp));
  push(...latencySection(s.latencyAlone));
  push(...rssSection(s.waitingRss));
  push(
    ...postgresShapeSection(
      '6. DBOS Transact on Postgres, same shape',
      dbosLead(s.dbosReference),
      s.dbosReference,
    ),
  );
  push(
    ...postgresShapeSection(
      '7. Keel on Postgres, same shape, 1, 2 and 4 worker processes',
      keelPostgresLead(s.keelPostgres),
      ...('skipped' in s.keelPostgres ? [s.keelPostgres] : s.keelPostgres),
    ),
  );
  push(...modelGatewaySection(s.modelGateway));
  push(
    '## Raw results',
    '',
    '<details><summary>JSON</summary>',
    '',
    '```json',
    JSON.stringify(r, null, 2),
    '```',
    '',
    '</details>',
    '',
  );
  return lines.join('\n');
}

function fsyncSection(before: FsyncCeilingResult, after: FsyncCeilingResult): string[] {
  return [
    '## 1. fsync ceiling',
    '',
    `Single-row INSERT transactions through node:sqlite, WAL, one after another for ${before.durationMs / 1000} s, in a temp dir under`,
    "os.tmpdir() like every scenario's data. Measured first and again last, because this virtual disk's fsync time drifts.",
    '',
    '| | Transactions/s | Commit p50 | Commit p99 |',
    '|---|---|---|---|',
    `| synchronous=FULL (durable per commit), first | ${n(before.full.txPerSec)} | ${ms(before.full.commitLatency.p50Ms)} | ${ms(before.full.commitLatency.p99Ms)} |`,
    `| synchronous=FULL (durable per commit), last | ${n(after.full.txPerSec)} | ${ms(after.full.commitLatency.p50Ms)} | ${ms(after.full.commitLatency.p99Ms)} |`,
    `| synchronous=NORMAL, **not durable per commit**, first | ${n(before.normal.txPerSec)} | ${ms(before.normal.commitLatency.p50Ms)} | ${ms(before.normal.commitLatency.p99Ms)} |`,
    `| synchronous=NORMAL, **not durable per commit**, last | ${n(after.normal.txPerSec)} | ${ms(after.normal.commitLatency.p50Ms)} | ${ms(after.normal.commitLatency.p99Ms)} |`,
    '',
  ];
}

function throughputSection(store: ThroughputResult, http: ThroughputResult): string[] {
  const col = (f: (t: ThroughputResult) => string) => `${f(store)} | ${f(http)}`;
  return [
    '## 2–3. Durable effects/s and dispatch latency under load',
    '',
    `Runs of ${store.stepsPerRun} sequential \`ctx.step\`s with trivial bodies, ${store.inFlight} in flight at all times (a run that ends is`,
    `replaced at once), ${store.warmupMs / 1000} s warm-up, then ${store.windowMs / 1000} s measured. An effect counts when its \`ctx.step\` promise`,
    "resolves, i.e. after its commit is fsync'd. In-process: runs built as POST /v1/runs builds them and passed to",
    '`store.createRun`. HTTP: `POST /v1/runs` with fetch from a worker thread (its own event loop, like a separate',
    "client); in both, the end of a run is heard from `store.onChange` (`ended`). Dispatch latency is the orchestrator's",
    '`dispatchLatency` histogram (effect committed → next effect of the run started), reset after the warm-up.',
    '',
    '| | In-process (store.createRun) | HTTP (POST /v1/runs) |',
    '|---|---|---|',
    `| Durable effects/s | ${col((t) => `**${n(t.effectsPerSec)}**`)} |`,
    `| Runs/s | ${col((t) => n(t.runsPerSec))} |`,
    `| Transactions (fsyncs)/s | ${col((t) => n(t.transactionsPerSec))} |`,
    `| Writes per transaction (group-commit ratio) | ${col((t) => String(t.writesPerTransaction))} |`,
    `| Step commits per transaction | ${col((t) => String(t.effectsPerTransaction))} |`,
    `| Dispatch p50 / p99 / max | ${col((t) => latency(t.dispatchLatency))} |`,
    `| Single-row fsync'd commit p50 / p99 on a probe file, just before and after the load | ${col((t) => `${ms(t.fsyncProbe.p50Ms)} / ${ms(t.fsyncProbe.p99Ms)}`)} |`,
    `| Process CPU, user + system (100% = one core) | ${col((t) => `${t.cpuUserPct}% + ${t.cpuSystemPct}%`)} |`,
    `| Failed submission lanes | ${col((t) => String(t.failedLanes))} |`,
    '',
    "Writes are everything the store's group commit acknowledged: per run, its creation, its share of a claim, five step",
    "commits and the final commit. The HTTP column's CPU includes the client worker thread.",
    '',
  ];
}

function latencySection(l: LatencyAloneResult): string[] {
  return [
    '## 4. End-to-end latency of one 5-step run, alone',
    '',
    `One run at a time, ${l.runs} times after ${l.warmupRuns} unrecorded ones. In-process: from before \`store.createRun\` to the`,
    '`ended` signal. HTTP: from before `POST /v1/runs` to `run.succeeded` on `GET /v1/runs/:id/events` (SSE), client in',
    "the same process. Between consecutive runs, one single-row fsync'd commit on a probe file samples the disk.",
    '',
    '| | p50 | p90 | p99 | max |',
    '|---|---|---|---|---|',
    `| In-process | ${ms(l.inProcess.p50Ms)} | ${ms(l.inProcess.p90Ms)} | ${ms(l.inProcess.p99Ms)} | ${ms(l.inProcess.maxMs)} |`,
    `| HTTP POST + SSE | ${ms(l.http.p50Ms)} | ${ms(l.http.p90Ms)} | ${ms(l.http.p99Ms)} | ${ms(l.http.maxMs)} |`,
    `| fsync probe (single-row commit) | ${ms(l.fsyncProbe.p50Ms)} | ${ms(l.fsyncProbe.p90Ms)} | ${ms(l.fsyncProbe.p99Ms)} | ${ms(l.fsyncProbe.maxMs)} |`,
    '',
    `A lone run used ${l.transactionsPerRun} write transactions one after another (create, claim, 5 steps, finish), ${l.fsyncedTransactionsPerRun} of them`,
    "fsync'd (the claim acknowledges nothing outside Keel and is made durable by the next fsync in the same WAL). Each fsync waits",
    "for the disk, so this figure follows the disk's fsync latency more than CPU. The probe only indicates the disk's",
    "state: a commit to another file right after a run's commits is not timed like the run's own.",
    '',
  ];
}

function rssSection(w: WaitingRssResult): string[] {
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
  return [
    '## 5. Memory with runs waiting for input',
    '',
    `${n(w.runs)} runs that call \`ctx.waitForInput('go')\` at once, submitted in waves with \`store.createRun\` after`,
    `${w.warmupRuns} warm-up runs had parked. RSS after forced GCs (${w.gcForced ? '--expose-gc' : 'GC NOT forced'}), before and once all were \`waiting\`.`,
    '',
    '| | |',
    '|---|---|',
    `| RSS before → after | ${mib(w.rssBeforeBytes)} → ${mib(w.rssAfterBytes)} |`,
    `| **RSS per waiting run** | **${n(w.rssBytesPerWaitingRun)} B** |`,
    `| V8 heap used per waiting run | ${n(w.heapBytesPerWaitingRun)} B (${mib(w.heapUsedBeforeBytes)} → ${mib(w.heapUsedAfterBytes)}) |`,
    `| orchestrator.activeRuns when all were waiting | ${w.activeRunsWhenParked} |`,
    `| Time to park them all | ${w.parkSeconds} s |`,
    `| SQLite file / WAL with the first batch parked | ${mib(w.dbFileBytes)} / ${mib(w.walFileBytes)} |`,
    ...w.more.map(
      (m) =>
        `| Next ${n(w.runs)} on top (${n(m.waitingRuns)} waiting): RSS / heap per waiting run | ${n(m.rssBytesPerWaitingRun)} B / ${n(m.heapBytesPerWaitingRun)} B (RSS ${mib(m.rssAfterBytes)}, activeRuns ${m.activeRunsWhenParked}) |`,
    ),
    '',
    "The heap figure is what parked runs retain in V8. The first batch's RSS figure also holds memory the process grew",
    "to while parking them at full speed (V8's young generation expanding under the allocation rate, promoted garbage)",
    'and kept after GC; the next batches show what more waiting runs cost once that working size is reached.',
    '',
  ];
}

/**
 * A row of the reference table for a system measured on Postgres in this run (or skipped, and why).
 */
function postgresReferenceRow(
  name: string,
  r: PostgresShapeResult | SkippedScenario,
  section: number,
): string {
  if ('skipped' in r) return `| ${name} | not measured | skipped in this run: ${r.reason} |`;
  return `| ${name} (${r.system}) | **${n(r.stepsPerSec)}/s** | measured here, same run (scenario ${section}) |`;
}

function keelPostgresRows(r: KeelPostgresResult[] | SkippedScenario): string[] {
  if ('skipped' in r)
    return [`| Keel on Postgres | not measured | skipped in this run: ${r.reason} |`];
  return r.map(
    (k) =>
      `| **Keel on Postgres**, ${k.workerProcesses === 1 ? '1 worker (in-process)' : `${k.workerProcesses} worker processes`} | **${n(k.stepsPerSec)}/s** | measured here, same run (scenario 7) |`,
  );
}

/**
 * The issue-3 target: Keel on one worker process ≥ 3× DBOS's durable steps/s, same Postgres, same
 * run.
 */
function keelVersusDbos(
  keel: KeelPostgresResult[] | SkippedScenario,
  dbos: DbosReferenceResult | SkippedScenario,
): string[] {
  if ('skipped' in keel || 'skipped' in dbos) return [];
  const one = keel.find((k) => k.workerProcesses === 1);
  if (one === undefined) return [];
  const ratio = one.stepsPerSec / dbos.stepsPerSec;
  return [
    '| Target (distributed mode) | Measured | Met? |',
    '|---|---|---|',
    row(
      "Keel on Postgres, one worker process, ≥ 3× DBOS's durable steps/s (same Postgres, same run)",
      `${n(one.stepsPerSec)} vs ${n(dbos.stepsPerSec)} steps/s = ${ratio.toFixed(2)}×`,
      ratio >= 3,
    ),
    ...(one.stepGapAlone === null
      ? []
      : [
          row(
            'Keel on Postgres, step gap p50 ≤ 1 ms when alone (one run at a time)',
            `${ms(one.stepGapAlone.p50Ms)} p50 (p99 ${ms(one.stepGapAlone.p99Ms)})`,
            one.stepGapAlone.p50Ms <= 1,
          ),
        ]),
    '',
  ];
}

function keelPostgresLead(r: KeelPostgresResult[] | SkippedScenario): string[] {
  const lead = [
    "The same 5-step agent on Keel's Postgres store, in a database created fresh for each configuration and dropped after.",
    'With 1 worker, the orchestrator runs in the bench process (runs created through the store, their end heard from it).',
    'With 2 and 4, `keel worker` child processes do the work; the bench process only creates runs and hears them end through',
    'LISTEN/NOTIFY, and the step gaps come from the workers (their warm-up included). This machine has 2 cores shared by',
    'Postgres, the workers and the bench process, so adding processes here measures contention, not scale-out.',
  ];
  if ('skipped' in r) return lead;
  const one = r.find((k) => k.workerProcesses === 1);
  if (one?.dispatchLatency != null) {
    lead.push(
      `In-process, the engine's dispatch latency (commit acknowledged → next effect dispatched, warm-up included) was p50 ${ms(one.dispatchLatency.p50Ms)}, p99 ${ms(one.dispatchLatency.p99Ms)}.`,
    );
  }
  return lead;
}

function dbosLead(r: DbosReferenceResult | SkippedScenario): string[] {
  if ('skipped' in r)
    return ['The reference library, run by this bench when its Postgres answers.'];
  return [
    `${r.system} (\`@dbos-inc/dbos-sdk\`, a devDependency of Keel, never a runtime one), as shipped: one workflow registered with`,
    '`DBOS.registerWorkflow`, whose body awaits five `DBOS.runStep` calls with trivial bodies; workflows are started by calling the',
    `registered function in the bench process. Its system database is created fresh for the run (pool of ${r.poolSize} connections,`,
    "DBOS's default) and dropped after. Per step, DBOS 5 reads the workflow's cancellation state and any earlier result of the",
    'step before running it, then inserts the result; Postgres counts read-only transactions as commits too.',
  ];
}

/**
 * One system measured with bench/postgres-shape.ts: 5-step workflows, 50 in flight, counted warm-up
 * and window. Several results render as columns of one table, so systems on Postgres can sit side
 * by side.
 */
function postgresShapeSection(
  title: string,
  lead: string[],
  ...results: Array<PostgresShapeResult | SkippedScenario>
): string[] {
  const header = [`## ${title}`, '', ...lead, ''];
  const skipped = results.filter((r): r is SkippedScenario => 'skipped' in r);
  const measured = results.filter((r): r is PostgresShapeResult => !('skipped' in r));
  const notRun = skipped.map(
    (r) =>
      `**Not run here:** ${r.reason}. Start Postgres (or set KEEL_BENCH_POSTGRES_URL) and run \`npm run bench\`.`,
  );
  if (measured.length === 0) return [...header, ...notRun, ''];
  const first = measured[0]!;
  const col = (f: (r: PostgresShapeResult) => string) => `| ${measured.map(f).join(' | ')} |`;
  const cpu = (r: PostgresShapeResult) =>
    r.postgres.clusterCpuPct === undefined
      ? r.postgres.cpuNote
      : `${r.postgres.clusterCpuPct}% (of which the backends of its database: ${r.postgres.databaseBackendsCpuPct}%)`;
  return [
    ...header,
    `Reproduce: \`npm run bench\` (Postgres at KEEL_BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres).`,
    `Postgres ${first.serverVersion} on this machine, \`synchronous_commit=${first.synchronousCommit}\` (the default: each commit waits for`,
    `its WAL flush). ${first.inFlight} workflows of ${first.stepsPerWorkflow} sequential steps in flight at all times, one that ends replaced at once;`,
    `${n(first.warmupWorkflows)} warm-up workflows, then ${n(first.workflows)} measured. A step counts once its durable call returns. The`,
    "step gap is from the end of one step's body to the start of the next one's in the same workflow (performance.now() in",
    'the bodies): the checkpoint of the first and everything the system does before the next, waiting for a pooled',
    "connection included. Postgres figures are deltas over the window: commits of the system's own database",
    '(pg_stat_database.xact_commit) and CPU of every server process, from /proc.',
    '',
    `| | ${measured.map((r) => r.system).join(' | ')} |`,
    `|---|${measured.map(() => '---|').join('')}`,
    `| Durable steps/s ${col((r) => `**${n(r.stepsPerSec)}**`)}`,
    `| Workflows/s ${col((r) => n(r.workflowsPerSec))}`,
    `| Step gap p50 / p99 / max ${col((r) => latency(r.stepGap))}`,
    `| **Postgres transactions per step** ${col((r) => `**${r.postgres.transactionsPerStep}**`)}`,
    `| Postgres commits/s in its database ${col((r) => n(r.postgres.commitsPerSec))}`,
    `| WAL fsyncs per step (pg_stat_wal.wal_sync, whole server) ${col((r) => String(r.postgres.walSyncsPerStep))}`,
    `| Postgres CPU, all server processes (100% = one core) ${col(cpu)}`,
    `| Bench process CPU, user + system ${col((r) => `${r.clientCpuUserPct}% + ${r.clientCpuSystemPct}%`)}`,
    `| Connections it may hold (pool size) ${col((r) => String(r.poolSize))}`,
    `| Measured window ${col((r) => `${(r.windowMs / 1000).toFixed(1)} s${r.cutShort ? ' (**cut short at its deadline**)' : ''}`)}`,
    `| Commits in other databases during the window (server shared?) ${col((r) => n(r.postgres.otherDatabasesCommits))}`,
    `| Rolled-back transactions / failed lanes ${col((r) => `${r.postgres.rollbacks} / ${r.failedLanes}`)}`,
    '',
    ...notRun,
  ];
}

function row(target: string, measured: string, met: boolean): string {
  return `| ${target} | ${measured} | ${met ? 'met' : '**not met**'} |`;
}

function latency(l: LatencySummary): string {
  return `${ms(l.p50Ms)} / ${ms(l.p99Ms)} / ${ms(l.maxMs)}`;
}

function ms(value: number): string {
  return `${value < 1 ? value.toFixed(3) : value < 10 ? value.toFixed(2) : value.toFixed(1)} ms`;
}

function n(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}
