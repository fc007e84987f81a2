// The front-door bench's figures and its RESULTS.md section: per system, steps/s and CPU per durable
// step (the machine's, the client's, machine minus client, and each metered process's), the lone
// runs, the waiting runs' RSS, and the targets of issue 25 each marked met or not met with the
// measured figure. Rendering only: bench/frontdoor.ts measures.
import type { MachineInfo } from '../support.ts';
import type { LoopResult } from './loop.ts';
import type { WaitingResult } from './waiting.ts';
import { STEPS_PER_WORKFLOW } from './workload.ts';

export interface SystemRow {
  system: string;
  /** How its workflows are started and awaited. */
  client: string;
  result: LoopResult;
  /** The client runs inside the system's process (DBOS): no client CPU to subtract. */
  inProcessClient: boolean;
  /** Labels of result.treeCpuMs that are the system's own processes (server, endpoint, Postgres). */
  serverTrees: string[];
  /** The label of result.treeCpuMs that is Postgres, if the system runs on it. */
  postgresTree?: string;
}

/** A part of the bench that failed or could not run, and why. */
export type Skipped = { skipped: string };

export interface LoneRuns {
  isolate: LoopResult | Skipped;
  thread: LoopResult | Skipped;
  /** bench/pg-lone-runs.ts: step gap percentiles of lone runs on Postgres, in ms. */
  postgresStepGap: { p50: number; p90: number; p99: number; runs: number } | Skipped;
}

export interface FrontdoorResults {
  date: string;
  quick: boolean;
  durationSeconds: number;
  machine: MachineInfo;
  git: string;
  command: string;
  lanes: number;
  warmupRuns: number;
  runs: number;
  systems: Array<SystemRow | { system: string; skipped: string }>;
  lone: LoneRuns;
  waiting: WaitingResult | Skipped;
}

const round = (n: number, digits = 3): number => Math.round(n * 10 ** digits) / 10 ** digits;

export interface PerStep {
  stepsPerSec: number;
  machineMs: number;
  clientMs: number | undefined;
  /** Machine minus the client's own CPU (the issue's method). */
  serverSideMs: number;
  /** The system's own processes, summed from /proc (Postgres included when it runs on it). */
  processesMs: number | undefined;
  postgresMs: number | undefined;
  /** Machine minus client minus the system's processes: other work on the machine, per step. */
  otherMs: number | undefined;
}

export function perStep(row: SystemRow): PerStep {
  const r = row.result;
  const steps = r.runs * STEPS_PER_WORKFLOW;
  const per = (ms: number) => round(ms / steps, 3);
  const client = row.inProcessClient ? undefined : r.selfCpuMs;
  const trees = row.serverTrees.map((label) => r.treeCpuMs[label]);
  const known = trees.every((ms) => ms !== null && ms !== undefined);
  const processes = known
    ? (trees as number[]).reduce((a, b) => a + b, 0) + (row.inProcessClient ? r.selfCpuMs : 0)
    : undefined;
  const pg = row.postgresTree === undefined ? undefined : r.treeCpuMs[row.postgresTree];
  return {
    stepsPerSec: Math.round(steps / r.seconds),
    machineMs: per(r.machineCpuMs),
    clientMs: client === undefined ? undefined : per(client),
    serverSideMs: per(r.machineCpuMs - (client ?? 0)),
    processesMs: processes === undefined ? undefined : per(processes),
    postgresMs: pg === null || pg === undefined ? undefined : per(pg),
    otherMs: processes === undefined ? undefined : per(r.machineCpuMs - (client ?? 0) - processes),
  };
}

const cell = (v: number | undefined, suffix = ''): string =>
  v === undefined ? '—' : `${v}${suffix}`;

interface Target {
  what: string;
  target: string;
  measured: string;
  met: boolean | undefined;
}

function findRow(results: FrontdoorResults, prefix: string): SystemRow | undefined {
  const row = results.systems.find((s) => s.system.startsWith(prefix));
  return row === undefined || 'skipped' in row ? undefined : row;
}

export function targets(results: FrontdoorResults): Target[] {
  const sqlite = findRow(results, 'Keel `keel dev` (SQLite');
  const postgres = findRow(results, 'Keel `keel dev` on PostgreSQL');
  const restate = findRow(results, 'Restate');
  const dbos = findRow(results, 'DBOS');
  const s = sqlite && perStep(sqlite);
  const p = postgres && perStep(postgres);
  const out: Target[] = [];
  const both = (a: number, b: number | undefined, processes: string) =>
    `machine − client ${a} ms; ${processes} ${cell(b)} ms`;
  out.push({
    what: 'Keel server-side CPU per durable step, SQLite, HTTP + SSE, isolates',
    target: '≤ 0.06 ms',
    measured:
      s === undefined ? 'not measured' : both(s.serverSideMs, s.processesMs, 'the Keel process'),
    met: s === undefined ? undefined : s.serverSideMs <= 0.06,
  });
  out.push({
    what: 'Keel server-side CPU per durable step, PostgreSQL (its CPU included), HTTP + SSE, isolates',
    target: '≤ 0.15 ms',
    measured:
      p === undefined
        ? 'not measured'
        : both(p.serverSideMs, p.processesMs, 'the Keel process + Postgres'),
    met: p === undefined ? undefined : p.serverSideMs <= 0.15,
  });
  const ratio = (a: PerStep | undefined, b: SystemRow | undefined) =>
    a === undefined || b === undefined
      ? undefined
      : round(a.stepsPerSec / perStep(b).stepsPerSec, 2);
  const vsRestate = ratio(s, restate);
  out.push({
    what: 'Black-box steps/s, Keel (SQLite) ÷ Restate, same run',
    target: '≥ 3×',
    measured:
      vsRestate === undefined
        ? 'not measured'
        : `${vsRestate}× (${s!.stepsPerSec} vs ${perStep(restate!).stepsPerSec} steps/s)`,
    met: vsRestate === undefined ? undefined : vsRestate >= 3,
  });
  const vsDbos = ratio(p, dbos);
  out.push({
    what: 'Black-box steps/s, Keel (PostgreSQL) ÷ DBOS, same run',
    target: '≥ 3×',
    measured:
      vsDbos === undefined
        ? 'not measured'
        : `${vsDbos}× (${p!.stepsPerSec} vs ${perStep(dbos!).stepsPerSec} steps/s)`,
    met: vsDbos === undefined ? undefined : vsDbos >= 3,
  });
  const { isolate, thread } = results.lone;
  out.push({
    what: 'Lone 5-step run over HTTP + SSE, isolates, p50',
    target: '≤ 2.5 ms',
    measured:
      'skipped' in isolate
        ? `not measured: ${isolate.skipped}`
        : `${isolate.latency.p50Ms} ms (p99 ${isolate.latency.p99Ms} ms; without isolates p50 ${'skipped' in thread ? '—' : thread.latency.p50Ms} ms)`,
    met: 'skipped' in isolate ? undefined : isolate.latency.p50Ms <= 2.5,
  });
  const gap = results.lone.postgresStepGap;
  out.push({
    what: 'Lone Postgres step gap, p50',
    target: '≤ 1 ms',
    measured:
      'skipped' in gap ? `not measured: ${gap.skipped}` : `${gap.p50} ms (p99 ${gap.p99} ms)`,
    met: 'skipped' in gap ? undefined : gap.p50 <= 1,
  });
  const w = results.waiting;
  out.push({
    what: 'Runs waiting for input, submitted over HTTP, RSS of the Keel process',
    target: '100,000 in < 1 GiB',
    measured:
      'skipped' in w
        ? `not measured: ${w.skipped}`
        : `${w.runs.toLocaleString('en-US')} runs: ${(w.rssBytes / 2 ** 20).toFixed(0)} MiB (peak ${(w.peakRssBytes / 2 ** 20).toFixed(0)} MiB)`,
    met: 'skipped' in w ? undefined : w.runs >= 100_000 ? w.rssBytes < 2 ** 30 : undefined,
  });
  out.push({
    what: 'This side-by-side command, start to end',
    target: '< 10 minutes',
    measured: `${Math.floor(results.durationSeconds / 60)} min ${results.durationSeconds % 60} s`,
    met: results.quick ? undefined : results.durationSeconds < 600,
  });
  return out;
}

/** Above this share of the machine's CPU per step, other work skews a window's figures. */
const BUSY_OTHER_SHARE = 0.25;

export function renderFrontdoorSection(r: FrontdoorResults): string {
  const m = r.machine;
  const lines: string[] = [];
  lines.push('## Through the front door: Keel, Restate and DBOS side by side (issue 25)');
  lines.push('');
  lines.push(
    `Recorded ${r.date.slice(0, 16).replace('T', ' ')} UTC on ${m.nproc}× ${m.cpuModel}, ${m.memoryGiB} GiB, Node ${m.node}, ` +
      `kernel ${m.kernel}, ${m.filesystem}; load average ${m.loadAverage1m} at the start; commit ${r.git}. ` +
      `\`${r.command}\`, ${r.durationSeconds} s in all.`,
  );
  // Busy or not by what the windows measured (other work's share of the machine's CPU per step):
  // the load average at the start lags, and still counts work that ended just before.
  const otherShare = Math.max(
    0,
    ...r.systems.map((row) => {
      if ('skipped' in row) return 0;
      const s = perStep(row);
      return s.otherMs === undefined ? 0 : s.otherMs / s.machineMs;
    }),
  );
  const sharePct = Math.round(otherShare * 100);
  lines.push(
    '',
    otherShare > BUSY_OTHER_SHARE
      ? `**Measured on a busy machine**: other work took up to ${sharePct}% of the machine's CPU per step in a window (the "other" column), so every figure below is skewed by it.`
      : `Other work on the machine took at most ${sharePct}% of its CPU per step in any window (the "other" column).`,
  );
  lines.push('');
  lines.push(
    `Seed workload: workflows of ${STEPS_PER_WORKFLOW} sequential durable steps each returning ~200 bytes, ${r.lanes} in flight ` +
      `in a closed loop; ${r.warmupRuns} warm-up workflows, then a window of ${r.runs} workflows. The client is its own process ` +
      '(bench/frontdoor/client.ts, undici keep-alive pool); for Keel each lane POSTs /v1/runs and reads that run’s SSE stream to ' +
      'its terminal event. CPU over the window: the machine’s from /proc/stat (all processes), the client’s own (process.cpuUsage), ' +
      'and each system process’s from /proc/<pid>/stat (with its live and reaped children; for Postgres the postmaster and all its backends). ' +
      'Server-side CPU per step = machine − client (the issue’s method).',
  );
  lines.push('');
  lines.push(
    '| system (same run) | client | durable steps/s | machine CPU per step (ms) | client CPU per step | server-side = machine − client | system processes (ms) | of which Postgres | other work on the machine | workflow p50 / p99 (ms) |',
  );
  lines.push('|---|---|---|---|---|---|---|---|---|---|');
  for (const row of r.systems) {
    if ('skipped' in row) {
      lines.push(`| ${row.system} | — | skipped: ${row.skipped} | | | | | | | |`);
      continue;
    }
    const s = perStep(row);
    lines.push(
      `| ${row.system} | ${row.client} | ${s.stepsPerSec} | ${s.machineMs} | ${row.inProcessClient ? 'in-process' : cell(s.clientMs)} | ${s.serverSideMs} | ` +
        `${cell(s.processesMs)} | ${cell(s.postgresMs)} | ${cell(s.otherMs)} | ${row.result.latency.p50Ms} / ${row.result.latency.p99Ms} |`,
    );
  }
  lines.push('');
  const { isolate, thread, postgresStepGap: gap } = r.lone;
  const lone = (name: string, x: LoopResult | Skipped) =>
    'skipped' in x
      ? `${name} not measured (${x.skipped})`
      : `${name} p50 ${x.latency.p50Ms} ms, p99 ${x.latency.p99Ms} ms over ${x.runs} runs`;
  lines.push(
    `Lone runs (one at a time after a warm-up, the same client over HTTP + SSE, SQLite): ${lone('isolates', isolate)}; ` +
      `${lone('KEEL_AGENT_ISOLATION=thread', thread)}. ` +
      ('skipped' in gap
        ? `Lone Postgres step gap: not measured (${gap.skipped}).`
        : `Lone Postgres step gap (\`npx node bench/pg-lone-runs.ts --runs ${gap.runs}\`, in-process engine): p50 ${gap.p50} ms, p90 ${gap.p90} ms, p99 ${gap.p99} ms.`),
  );
  lines.push('');
  const w = r.waiting;
  lines.push(
    'skipped' in w
      ? `Runs waiting for input: not measured (${w.skipped}).`
      : `Runs waiting for input: ${w.runs.toLocaleString('en-US')} submitted to \`keel dev\` (SQLite, isolates) by ${w.submission === 'batch' ? 'POST /v1/runs:batch' : 'parallel single POST /v1/runs'}` +
          `${w.submissionNote === undefined ? '' : ` (${w.submissionNote})`} in ${w.submitSeconds.toFixed(1)} s, all waiting after ${w.parkSeconds.toFixed(1)} s; ` +
          `RSS of the Keel process then ${(w.rssBytes / 2 ** 20).toFixed(0)} MiB (peak ${(w.peakRssBytes / 2 ** 20).toFixed(0)} MiB).`,
  );
  lines.push('');
  lines.push('| target (issue 25) | target | measured | met |');
  lines.push('|---|---|---|---|');
  for (const t of targets(r))
    lines.push(
      `| ${t.what} | ${t.target} | ${t.measured} | ${t.met === undefined ? 'not measured' : t.met ? 'met' : 'not met'} |`,
    );
  lines.push('');
  return lines.join('\n');
}
