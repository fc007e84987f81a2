// Renders the collected scenario results as bench/RESULTS.md: the machine, a targets table (target, measured,
// met or not), the reference figures from issue #2 next to ours, each scenario's details, and the raw JSON.
// Pure formatting: it measures nothing, and a figure it cannot find is shown as missing rather than guessed.
import type { FsyncCeilingResult } from './scenarios/fsync-ceiling.ts';
import type { LatencyAloneResult } from './scenarios/latency-alone.ts';
import type { ThroughputResult } from './scenarios/throughput.ts';
import type { WaitingRssResult } from './scenarios/waiting-rss.ts';
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
    fsyncAfter: FsyncCeilingResult;
  };
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
    'Embedded store (SQLite through node:sqlite, WAL), durability `fsync`: `synchronous=FULL`, so every commit is fsync\'d before',
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
    row(`≥ ${n(TARGETS.effectsPerSecMin)} durable effects/s, every commit fsync'd before ack (in-process submission)`,
      `${n(s.throughputStore.effectsPerSec)} effects/s`, s.throughputStore.effectsPerSec >= TARGETS.effectsPerSecMin),
    row(`Dispatch latency p50 ≤ ${TARGETS.dispatchP50MsMax} ms at that load`,
      `${ms(s.throughputStore.dispatchLatency.p50Ms)}`, s.throughputStore.dispatchLatency.p50Ms <= TARGETS.dispatchP50MsMax),
    row(`Dispatch latency p99 ≤ ${TARGETS.dispatchP99MsMax} ms at that load`,
      `${ms(s.throughputStore.dispatchLatency.p99Ms)}`, s.throughputStore.dispatchLatency.p99Ms <= TARGETS.dispatchP99MsMax),
    row(`5-step run end to end ≤ ${TARGETS.endToEndP50MsMax} ms p50 when alone (in-process)`,
      `${ms(s.latencyAlone.inProcess.p50Ms)} p50`, s.latencyAlone.inProcess.p50Ms <= TARGETS.endToEndP50MsMax),
    row(`≤ 10 KB RSS per waiting run (read as ${n(TARGETS.waitingRunBytesMax)} B)`,
      `${n(s.waitingRss.rssBytesPerWaitingRun)} B`, s.waitingRss.rssBytesPerWaitingRun <= TARGETS.waitingRunBytesMax),
    '',
    'Also measured, without a target of their own: through HTTP, '
      + `${n(s.throughputHttp.effectsPerSec)} effects/s (dispatch p50 ${ms(s.throughputHttp.dispatchLatency.p50Ms)}, p99 ${ms(s.throughputHttp.dispatchLatency.p99Ms)}) `
      + `and a lone run ${ms(s.latencyAlone.http.p50Ms)} p50 from POST to run.succeeded on its SSE stream.`,
    '',
    '## Against the reference figures',
    '',
    'Same shape: runs of 5 sequential durable steps, 50 runs in flight.',
    '',
    '| System | Durable steps/s | Source |',
    '|---|---|---|',
    ...REFERENCES.map(([name, figure]) => `| ${name} | ${figure} | reference, from issue #2, not re-measured here |`),
    `| **Keel**, embedded, in-process submission | **${n(s.throughputStore.effectsPerSec)}/s** | measured here |`,
    `| **Keel**, embedded, submission through POST /v1/runs | **${n(s.throughputHttp.effectsPerSec)}/s** | measured here |`,
    `| SQLite single-row transactions, synchronous=FULL, this disk | ${n(s.fsyncBefore.full.txPerSec)}/s before, ${n(s.fsyncAfter.full.txPerSec)}/s after | measured here (scenario 1) |`,
    '',
  );
  push(...fsyncSection(s.fsyncBefore, s.fsyncAfter));
  push(...throughputSection(s.throughputStore, s.throughputHttp));
  push(...latencySection(s.latencyAlone));
  push(...rssSection(s.waitingRss));
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
    'os.tmpdir() like every scenario\'s data. Measured first and again last, because this virtual disk\'s fsync time drifts.',
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
    'resolves, i.e. after its commit is fsync\'d. In-process: runs built as POST /v1/runs builds them and passed to',
    '`store.createRun`. HTTP: `POST /v1/runs` with fetch from a worker thread (its own event loop, like a separate',
    'client); in both, the end of a run is heard from `store.onChange` (`ended`). Dispatch latency is the orchestrator\'s',
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
    'Writes are everything the store\'s group commit acknowledged: per run, its creation, its share of a claim, five step',
    'commits and the final commit. The HTTP column\'s CPU includes the client worker thread.',
    '',
  ];
}

function latencySection(l: LatencyAloneResult): string[] {
  return [
    '## 4. End-to-end latency of one 5-step run, alone',
    '',
    `One run at a time, ${l.runs} times after ${l.warmupRuns} unrecorded ones. In-process: from before \`store.createRun\` to the`,
    '`ended` signal. HTTP: from before `POST /v1/runs` to `run.succeeded` on `GET /v1/runs/:id/events` (SSE), client in',
    'the same process. Between consecutive runs, one single-row fsync\'d commit on a probe file samples the disk.',
    '',
    '| | p50 | p90 | p99 | max |',
    '|---|---|---|---|---|',
    `| In-process | ${ms(l.inProcess.p50Ms)} | ${ms(l.inProcess.p90Ms)} | ${ms(l.inProcess.p99Ms)} | ${ms(l.inProcess.maxMs)} |`,
    `| HTTP POST + SSE | ${ms(l.http.p50Ms)} | ${ms(l.http.p90Ms)} | ${ms(l.http.p99Ms)} | ${ms(l.http.maxMs)} |`,
    `| fsync probe (single-row commit) | ${ms(l.fsyncProbe.p50Ms)} | ${ms(l.fsyncProbe.p90Ms)} | ${ms(l.fsyncProbe.p99Ms)} | ${ms(l.fsyncProbe.maxMs)} |`,
    '',
    `A lone run used ${l.transactionsPerRun} write transactions one after another (create, claim, 5 steps, finish), ${l.fsyncedTransactionsPerRun} of them`,
    'fsync\'d (the claim acknowledges nothing outside Keel and is made durable by the next fsync in the same WAL). Each fsync waits',
    'for the disk, so this figure follows the disk\'s fsync latency more than CPU. The probe only indicates the disk\'s',
    'state: a commit to another file right after a run\'s commits is not timed like the run\'s own.',
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
    ...w.more.map((m) => `| Next ${n(w.runs)} on top (${n(m.waitingRuns)} waiting): RSS / heap per waiting run | ${n(m.rssBytesPerWaitingRun)} B / ${n(m.heapBytesPerWaitingRun)} B (RSS ${mib(m.rssAfterBytes)}, activeRuns ${m.activeRunsWhenParked}) |`),
    '',
    'The heap figure is what parked runs retain in V8. The first batch\'s RSS figure also holds memory the process grew',
    'to while parking them at full speed (V8\'s young generation expanding under the allocation rate, promoted garbage)',
    'and kept after GC; the next batches show what more waiting runs cost once that working size is reached.',
    '',
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
