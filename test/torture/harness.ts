// The crash-torture harness: one seeded trial starts Keel as a real process with one crash point
// armed, submits a mix of runs whose tools append to a ledger outside Keel, lets the process
// SIGKILL itself at that point, restarts it, settles every parked `unknown` execution from the
// ledger's truth (as an operator would), and checks invariants: no run lost; no read/idempotent
// effect committed twice; no side effect executed twice (the ledger proves it); every uncertain
// outcome unknown or reconciled; event sequences gapless; journal and run state consistent. A trial
// is a pure function of its seed: the seed of a failing trial reproduces it.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CRASH_POINTS, type CrashPoint } from '../../src/domain/crash-points.ts';
import { bulkText } from './bulk-text.ts';
import { createFreshDatabase } from '../support/fresh-database.ts';
import { startKeelProcess, startKeelRole, type KeelProcess } from '../support/keel-process.ts';

export const TORTURE_AGENTS = fileURLToPath(new URL('./agents.ts', import.meta.url));
const KEY = 'torture-test-key';
const TRIAL_TIMEOUT_MS = 60_000;
const POINTS = Object.keys(CRASH_POINTS) as CrashPoint[];

export interface TrialOptions {
  seed: number;
  /**
   * SQLite (`keel dev`), or Postgres (`keel server`) on a database of the trial's own (trials may
   * run side by side).
   */
  store: { kind: 'sqlite' } | { kind: 'postgres' };
}

export interface TrialReport {
  seed: number;
  crashAt: string;
  crashed: boolean;
  runs: number;
  resolvedUnknown: number;
  violations: string[];
}

/** mulberry32: a tiny seeded generator, so a trial's choices are a function of its seed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Planned {
  key: string;
  agent: 'torture' | 'torture-saga';
  input: Record<string, unknown>;
  id?: string;
}

/**
 * About how often a run reaches a crash point (8 for most): a torture run makes one fan-in decision,
 * and commits about 4 transactions.
 */
const HITS_PER_RUN: Partial<Record<CrashPoint, number>> = {
  'commit.in-transaction': 4,
  'decision.committed': 1,
  // Archival: once per ended run but the newest, one chunk per two positions of each stream.
  'archive.before-prune': 1,
  'archive.chunk-stored': 4,
};
/** How long a trial armed at an archival point waits after its runs settled: archival comes after. */
const ARCHIVAL_WAIT_MS = 3_000;

/** The trial's plan: which crash point, on which hit, and which runs. */
function plan(seed: number): { crashAt: string; runs: Planned[] } {
  const random = seeded(seed);
  const point = POINTS[Math.floor(random() * POINTS.length)]!;
  const count = 3 + Math.floor(random() * 4);
  const runs: Planned[] = [];
  for (let i = 0; i < count; i++) {
    const saga = random() < 0.25;
    runs.push(
      saga
        ? { key: `s${seed}-${i}`, agent: 'torture-saga', input: { n: i } }
        : { key: `t${seed}-${i}`, agent: 'torture', input: { n: i, sleep: random() < 0.5 } },
    );
  }
  // Hits per run differ by point; a hit count past the last hit means the trial runs without a
  // crash (also checked).
  const perRun = HITS_PER_RUN[point] ?? 8;
  const hit = 1 + Math.floor(random() * perRun * count);
  return { crashAt: `${point}:${hit}`, runs };
}

/**
 * One request on a connection of its own (no keep-alive pool): a pooled socket that the server
 * closes just as the client reuses it fails the request ("fetch failed") although Keel is fine,
 * which would read as a broken trial. A GET is also retried once on a connection error.
 */
async function api(
  url: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  if (method === 'GET') {
    try {
      return await request(url, method, path, body);
    } catch (error) {
      if ((error as { code?: unknown }).code === undefined) throw error;
    }
  }
  return request(url, method, path, body);
}

function request(
  url: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url + path,
      {
        method,
        agent: false,
        timeout: 10_000,
        headers: {
          authorization: `Bearer ${KEY}`,
          ...(payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) });
          } catch (error) {
            reject(error);
          }
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () =>
      req.destroy(Object.assign(new Error(`${method} ${path} timed out`), { code: 'ETIMEDOUT' })),
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Each start binds a port of its own (port 0, read back from the process). */
async function start(
  options: TrialOptions,
  dir: string,
  env: Record<string, string>,
  databaseUrl: string | undefined,
): Promise<KeelProcess> {
  // One agent isolate per process: trials start Keel hundreds of times, and isolates load the
  // agents module each.
  const common = {
    KEEL_TEST_LEDGER: join(dir, 'ledger.txt'),
    KEEL_LOG_LEVEL: 'error',
    KEEL_AGENT_ISOLATES: '1',
    // Archival runs alongside: every ended run but the newest is archived (in chunks of two
    // positions) while the others run, and the checks read archived runs back.
    KEEL_RETENTION_RUNS: '1',
    KEEL_ARCHIVE_INTERVAL_MS: '100',
    KEEL_ARCHIVE_CHUNK_POSITIONS: '2',
    // Large payloads too: the torture agent's 2 KiB step result and output pass this threshold.
    KEEL_PAYLOAD_INLINE_MAX_BYTES: '1024',
    ...env,
  };
  if (options.store.kind === 'sqlite') {
    return startKeelProcess({
      agents: TORTURE_AGENTS,
      dataDir: join(dir, 'data'),
      apiKey: KEY,
      env: common,
    });
  }
  // On a shared store a restarted process waits for the dead one's leases to expire: keep them
  // short.
  return startKeelRole({
    role: 'server',
    agents: TORTURE_AGENTS,
    databaseUrl: databaseUrl!,
    name: `torture-${options.seed}`,
    apiKey: KEY,
    env: { ...common, KEEL_LEASE_TTL_MS: '1000' },
  });
}

/**
 * Submits every planned run (idempotently: a key that made it before a crash returns the same run).
 */
async function submit(url: string, runs: Planned[]): Promise<boolean> {
  for (const run of runs) {
    if (run.id !== undefined) continue;
    try {
      const res = await api(url, 'POST', '/v1/runs', {
        agent: run.agent,
        input: run.input,
        idempotencyKey: run.key,
      });
      if (res.status !== 201 && res.status !== 200)
        throw new Error(`POST /v1/runs: ${res.status} ${JSON.stringify(res.body)}`);
      run.id = res.body.id;
    } catch (error) {
      if ((error as Error).message.startsWith('POST')) throw error;
      return false; // the process died under us: the crash point was hit
    }
  }
  return true;
}

function ledger(dir: string): string[] {
  try {
    return readFileSync(join(dir, 'ledger.txt'), 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

/**
 * Drives runs to the end: parked unknown executions are resolved from the ledger, like an operator
 * with the facts.
 */
async function settle(
  url: string,
  runs: Planned[],
  dir: string,
): Promise<{ finals: Map<string, any>; resolved: number }> {
  const finals = new Map<string, any>();
  let resolved = 0;
  const deadline = Date.now() + TRIAL_TIMEOUT_MS;
  while (finals.size < runs.length) {
    if (Date.now() > deadline)
      throw new Error(
        `runs did not settle: ${runs
          .filter((r) => !finals.has(r.key))
          .map((r) => r.id)
          .join(', ')}`,
      );
    for (const run of runs) {
      if (finals.has(run.key)) continue;
      const current = (await api(url, 'GET', `/v1/runs/${run.id}`)).body;
      if (TERMINAL.has(current.status)) finals.set(run.key, current);
      else if (current.status === 'waiting' && current.waitingReason === 'unknown_side_effect') {
        const steps = (await api(url, 'GET', `/v1/runs/${run.id}/steps`)).body.steps as any[];
        for (const step of steps.filter((s) => s.status === 'unknown')) {
          const happened = ledger(dir).includes(`se ${step.executionId}`);
          const action = happened
            ? { action: 'succeeded', result: { charged: true } }
            : { action: 'retry' };
          const res = await api(
            url,
            'POST',
            `/v1/runs/${run.id}/executions/${step.executionId}/resolve`,
            action,
          );
          if (res.status !== 202)
            throw new Error(
              `resolve ${step.executionId}: ${res.status} ${JSON.stringify(res.body)}`,
            );
          resolved++;
        }
      }
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return { finals, resolved };
}

async function allEvents(url: string, runId: string): Promise<any[]> {
  const events: any[] = [];
  for (let after = 0; ; ) {
    const page = (
      await api(url, 'GET', `/v1/runs/${runId}/events?format=json&after=${after}&limit=500`)
    ).body as any[];
    if (page.length === 0) return events;
    events.push(...page);
    after = page.at(-1).seq;
  }
}

/** Checks the invariants of one settled run; returns what is violated. */
async function check(url: string, run: Planned, final: any, lines: string[]): Promise<string[]> {
  const v: string[] = [];
  const where = `${run.agent} ${run.id}`;
  const steps = (await api(url, 'GET', `/v1/runs/${run.id}/steps`)).body.steps as any[];
  const events = await allEvents(url, run.id!);
  // Outcome: the agents are deterministic, so the final state is known in advance.
  if (run.agent === 'torture') {
    const n = run.input.n as number;
    const expected = {
      n,
      doubled: n * 2,
      flaky: n,
      charged: [true, true, true],
      picked: { doubled: (n + 10) * 2 },
      bulk: bulkText(n),
    };
    if (final.status !== 'succeeded' || JSON.stringify(final.result) !== JSON.stringify(expected))
      v.push(`${where}: ended ${final.status} ${JSON.stringify(final.result ?? final.error)}`);
  } else {
    const undone = final.compensation?.compensated?.length ?? 0;
    if (final.status !== 'failed' || undone !== 2)
      v.push(
        `${where}: saga ended ${final.status} with compensation ${JSON.stringify(final.compensation)}`,
      );
  }
  // Journal and run state agree: a settled run has no effect left running, unknown or waiting.
  for (const s of steps)
    if (!['succeeded', 'failed'].includes(s.status))
      v.push(`${where}: position ${s.seq} left ${s.status}`);
  // Side effects: each execution at most once in the ledger, and exactly once if the journal says
  // it succeeded.
  for (const s of steps.filter((s) => s.effectClass === 'side-effect' && s.kind === 'tool')) {
    const n = lines.filter((l) => l === `se ${s.executionId}`).length;
    if (n > 1) v.push(`${where}: side effect ${s.executionId} ran ${n} times`);
    if (s.status === 'succeeded' && n !== 1)
      v.push(`${where}: side effect ${s.executionId} succeeded in the journal but ran ${n} times`);
  }
  for (const s of steps.filter((s) => s.kind === 'compensation')) {
    const target = s.executionId.replace(/\.compensation$/, '');
    if (!lines.includes(`se ${target}`)) v.push(`${where}: compensated ${target}, which never ran`);
    if (!lines.includes(`undo ${target}`))
      v.push(`${where}: compensation of ${target} committed but never ran`);
  }
  // No effect committed twice: at most one completion (or reconciliation, or resolution) per
  // position.
  const settledAt = new Map<number, number>();
  for (const e of events) {
    const settles =
      e.type === 'effect.completed' ||
      (e.type === 'effect.reconciled' && e.data.verdict === 'found') ||
      (e.type === 'effect.resolved' && e.data.action !== 'retry');
    if (settles) settledAt.set(e.data.seq, (settledAt.get(e.data.seq) ?? 0) + 1);
  }
  for (const [seq, n] of settledAt)
    if (n > 1) v.push(`${where}: position ${seq} committed ${n} times`);
  // Events: gapless from 1, exactly one terminal event, and it is the last.
  events.forEach((e, i) => {
    if (e.seq !== i + 1) v.push(`${where}: event ${i + 1} has seq ${e.seq}`);
  });
  const terminal = events.filter((e) =>
    ['run.succeeded', 'run.failed', 'run.cancelled'].includes(e.type),
  );
  if (terminal.length !== 1 || events.at(-1) !== terminal[0])
    v.push(`${where}: ${terminal.length} terminal events, last is ${events.at(-1)?.type}`);
  return v;
}

/** Runs `trials` trials from `firstSeed`, `concurrency` at a time; reports each as it ends. */
export async function runTrials(
  options: Omit<TrialOptions, 'seed'> & {
    firstSeed: number;
    trials: number;
    concurrency?: number;
    onReport?: (r: TrialReport) => void;
  },
): Promise<TrialReport[]> {
  const reports: TrialReport[] = [];
  let next = 0;
  const lane = async () => {
    while (next < options.trials) {
      const seed = options.firstSeed + next++;
      const report = await runTrial({ seed, store: options.store });
      reports.push(report);
      options.onReport?.(report);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 1) }, lane));
  return reports.sort((a, b) => a.seed - b.seed);
}

/** One line per crash point: trials, crashes, unknowns resolved. */
export function summarize(reports: TrialReport[]): string {
  const by = new Map<string, { trials: number; crashed: number; resolved: number }>();
  for (const r of reports) {
    const point = r.crashAt.split(':')[0]!;
    const s = by.get(point) ?? { trials: 0, crashed: 0, resolved: 0 };
    s.trials++;
    if (r.crashed) s.crashed++;
    s.resolved += r.resolvedUnknown;
    by.set(point, s);
  }
  const failed = reports.filter((r) => r.violations.length > 0);
  return [
    `${reports.length} trials, ${reports.filter((r) => r.crashed).length} crashed, ${failed.length} with violations`,
    ...[...by].map(
      ([p, s]) =>
        `  ${p}: ${s.trials} trials, ${s.crashed} crashed, ${s.resolved} unknown executions resolved`,
    ),
    ...failed.map((r) => `  seed ${r.seed} (${r.crashAt}): ${r.violations.join('; ')}`),
  ].join('\n');
}

/** Whether the process a failed trial talked to last was alive, and how it ended if not. */
function processState(keel: KeelProcess | undefined): string {
  if (keel === undefined) return 'no process started';
  const { pid, exitCode, signalCode } = keel.child;
  if (exitCode === null && signalCode === null) return `Keel pid ${pid} alive at ${keel.url}`;
  return `Keel pid ${pid} at ${keel.url} exited with ${exitCode ?? signalCode}`;
}

export async function runTrial(options: TrialOptions): Promise<TrialReport> {
  const { crashAt, runs } = plan(options.seed);
  const dir = mkdtempSync(join(tmpdir(), `keel-torture-${options.seed}-`));
  const database = options.store.kind === 'postgres' ? await createFreshDatabase() : undefined;
  let keel: KeelProcess | undefined;
  try {
    let crashed = false;
    try {
      keel = await start(options, dir, { KEEL_TEST_CRASH_AT: crashAt }, database?.url);
    } catch (error) {
      // The armed point can be reached while the process starts (its own writes commit too): a
      // crash like any other.
      if (!String(error).includes('exited with SIGKILL')) throw error;
      crashed = true;
    }
    if (keel !== undefined) {
      const exited = new Promise<void>((resolve) => keel!.child.once('exit', () => resolve()));
      if (await submit(keel.url, runs)) {
        // Until the process kills itself, or every run settled without reaching the armed hit.
        const done = settle(keel.url, runs, dir).then(
          () => 'settled' as const,
          () => 'died' as const,
        );
        crashed = (await Promise.race([exited.then(() => 'died' as const), done])) === 'died';
        // Archival runs after the runs ended: give an armed archival point its chance to be hit.
        if (!crashed && crashAt.startsWith('archive.'))
          crashed =
            (await Promise.race([
              exited.then(() => 'died' as const),
              new Promise<'alive'>((r) => setTimeout(() => r('alive'), ARCHIVAL_WAIT_MS)),
            ])) === 'died';
      } else crashed = true;
      // Crashed: wait for the process to be gone. A request can also fail while the process lives
      // (a connection refused under load): then it is killed from outside, which is a crash at an
      // arbitrary point, never a hang.
      if (crashed) await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      await keel.kill('SIGKILL');
    }
    keel = await start(options, dir, {}, database?.url);
    if (!(await submit(keel.url, runs))) throw new Error('the restarted process died');
    const { finals, resolved } = await settle(keel.url, runs, dir);
    const lines = ledger(dir);
    const violations: string[] = [];
    for (const run of runs)
      violations.push(...(await check(keel.url, run, finals.get(run.key), lines)));
    return {
      seed: options.seed,
      crashAt,
      crashed,
      runs: runs.length,
      resolvedUnknown: resolved,
      violations,
    };
  } catch (error) {
    return {
      seed: options.seed,
      crashAt,
      crashed: false,
      runs: runs.length,
      resolvedUnknown: 0,
      violations: [
        `trial failed: ${String(error)} (${processState(keel)})\n${keel?.output().slice(-2000) ?? ''}`,
      ],
    };
  } finally {
    await keel?.kill('SIGKILL');
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}
