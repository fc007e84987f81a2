// `npx node bench/overload.ts [--runs 1000] [--rounds 3] [--tenants 1|2] [--label <text>] [--record]`:
// a saturated model pool, and whether runs finish while the load lasts (issue 27). All runs are
// queued at once (then the worker starts) in one embedded Keel (SQLite, default durability); each does `--rounds` rounds
// of a 1 s call to a mock model (its default pool: MODEL_MAX_CONCURRENCY_DEFAULT slots) and a 100 ms
// step. With `--tenants 2`, two tenants of weights 3 and 1 submit half the runs each, interleaved.
// Reports time to first completion, completion times (from each run's submission), completions/s
// while runs complete, total throughput, and the on-time rate for a 30 s deadline (measured here,
// not enforced: no run carries a deadline budget), per tenant too. `--record` splices the figures
// into bench/RESULTS.md's overload section under `--label`. It asserts nothing about timings.
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { hashApiKey, generateApiKey } from '../src/api/auth.ts';
import { newRunId } from '../src/domain/ids.ts';
import type { NewRun } from '../src/domain/records.ts';
import { Orchestrator } from '../src/engine/orchestrator.ts';
import { AgentRegistry } from '../src/engine/registry.ts';
import { ModelGateway } from '../src/models/gateway.ts';
import { MODEL_MAX_CONCURRENCY_DEFAULT } from '../src/models/model-entry.ts';
import { PoolRegistry } from '../src/scheduling/pool-registry.ts';
import { defineAgent, defineModel } from '../src/sdk/define.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { DB_FILE_NAME, makeTempDir, progress, removeDir, spliceSection } from './support.ts';

const MODEL_LATENCY_MS = 1_000;
const STEP_MS = 100;
const ON_TIME_MS = 30_000;
const TENANT_WEIGHTS = [3, 1];
/** Runs created per group commit while queueing the burst. */
const SUBMIT_CHUNK_RUNS = 100;
const SECTION_START = '<!-- overload section: written by bench/overload.ts --record -->';
const SECTION_END = '<!-- end of overload section -->';
const RESULTS_PATH = join(fileURLToPath(new URL('.', import.meta.url)), 'RESULTS.md');

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
    tenants: { type: 'string', default: '1' },
    label: { type: 'string', default: 'unlabelled' },
    record: { type: 'boolean', default: false },
  },
});
const RUNS = Number(values.runs);
const ROUNDS = Number(values.rounds);
const TENANTS = Number(values.tenants);
if (![RUNS, ROUNDS].every((n) => Number.isSafeInteger(n) && n > 0) || ![1, 2].includes(TENANTS))
  throw new Error('--runs and --rounds take a whole number from 1, --tenants 1 or 2');

const model = defineModel({
  name: 'overload-mock',
  provider: 'mock',
  options: { latencyMs: MODEL_LATENCY_MS },
});

const agent = defineAgent({
  name: 'bench-overload',
  version: '1',
  async run(ctx) {
    for (let round = 0; round < ROUNDS; round++) {
      await ctx.model({
        model: model.name,
        messages: [{ role: 'user', content: `round ${round}` }],
      });
      await ctx.step(
        `step-${round}`,
        () => new Promise<number>((r) => setTimeout(() => r(round), STEP_MS)),
      );
    }
    return ROUNDS;
  },
});

interface Figures {
  runs: number;
  /** From the start of the load (the first submission) to the first run that ended. */
  firstCompletionMs: number;
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
  /** From the start of the load to the last run that ended. */
  lastCompletionMs: number;
  /** Completions per second between the first and the last completion. */
  completionsPerSec: number;
  /** Runs per second over the whole load (submission to last completion). */
  throughputPerSec: number;
  onTimeRate: number;
  failed: number;
}

/** `ms`: from the run's submission to its end; `at`: its end, from the start of the load. */
function figures(done: Array<{ ms: number; at: number; ok: boolean }>, wallMs: number): Figures {
  const ms = done.map((d) => d.ms).sort((a, b) => a - b);
  const ends = done.map((d) => d.at).sort((a, b) => a - b);
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!;
  const first = ends[0]!;
  const last = ends[ends.length - 1]!;
  const round = (n: number) => Math.round(n);
  return {
    runs: done.length,
    firstCompletionMs: round(first),
    meanMs: round(ms.reduce((s, x) => s + x, 0) / ms.length),
    p50Ms: round(at(0.5)),
    p99Ms: round(at(0.99)),
    lastCompletionMs: round(last),
    completionsPerSec: Math.round((done.length / Math.max(1, last - first)) * 1000 * 10) / 10,
    throughputPerSec: Math.round((done.length / wallMs) * 1000 * 10) / 10,
    onTimeRate:
      Math.round((done.filter((d) => d.ok && d.ms <= ON_TIME_MS).length / done.length) * 1000) /
      1000,
    failed: done.filter((d) => !d.ok).length,
  };
}

async function main(): Promise<void> {
  const dir = makeTempDir();
  const store = new SqliteStore({ path: join(dir, DB_FILE_NAME) });
  await store.migrate();
  const tenants: Array<{ id: string; weight: number }> = [];
  for (let i = 0; i < TENANTS; i++) {
    const tenant = await store.ensureTenant(`overload-${i}`, hashApiKey(generateApiKey()));
    const weight = TENANTS === 1 ? 1 : TENANT_WEIGHTS[i]!;
    await store.updateTenant(tenant.id, { weight });
    tenants.push({ id: tenant.id, weight });
  }
  const pools = new PoolRegistry();
  const weights = new Map(tenants.map((t) => [t.id, t.weight]));
  pools.setTenantWeightResolver((id) => weights.get(id));
  const registry = new AgentRegistry();
  registry.register(agent);
  const gateway = new ModelGateway([model], { pools });
  const orchestrator = new Orchestrator({ store, registry, gateway, pools });
  await store.expireForeignLeases(orchestrator.owner);

  const submittedAt = new Map<string, number>();
  const tenantOf = new Map<string, string>();
  const done = new Map<string, Array<{ ms: number; at: number; ok: boolean }>>(
    tenants.map((t) => [t.id, []]),
  );
  let ended = 0;
  let allEnded: () => void = () => {};
  const finished = new Promise<void>((resolve) => (allEnded = resolve));
  const pendingStatus: Array<{ runId: string; ms: number; at: number }> = [];
  let started = 0;
  const unsubscribe = store.onChange((changes) => {
    for (const change of changes) {
      if (change.signal !== 'ended' || !submittedAt.has(change.runId)) continue;
      const now = performance.now();
      pendingStatus.push({
        runId: change.runId,
        ms: now - submittedAt.get(change.runId)!,
        at: now - started,
      });
      if (++ended === RUNS) allEnded();
    }
  });
  const load = loadavg().map((l) => Math.round(l * 100) / 100);
  progress(
    `overload: ${RUNS} runs × ${ROUNDS} rounds (${MODEL_LATENCY_MS} ms model call, ${STEP_MS} ms step), ` +
      `${TENANTS} tenant(s), model pool ${MODEL_MAX_CONCURRENCY_DEFAULT} slots, load average ${load.join(' ')}`,
  );
  // The burst: every run is queued before the worker starts, so all count as submitted at once
  // (time zero) and the submission's own pace does not shape the figures.
  const submitStarted = performance.now();
  for (let i = 0; i < RUNS; i += SUBMIT_CHUNK_RUNS) {
    const chunk = Array.from({ length: Math.min(SUBMIT_CHUNK_RUNS, RUNS - i) }, (_, k) => {
      const tenant = tenants[(i + k) % TENANTS]!;
      const run: NewRun = {
        id: newRunId(),
        tenantId: tenant.id,
        agent: agent.name,
        agentVersion: agent.version,
        input: null,
        priority: 'interactive',
        budget: {},
        metadata: null,
        parentRunId: null,
        idempotencyKey: null,
        requestHash: null,
      };
      tenantOf.set(run.id, tenant.id);
      return run;
    });
    await Promise.all(chunk.map((run) => store.createRun(run)));
  }
  const submitMs = Math.round(performance.now() - submitStarted);
  orchestrator.start();
  started = performance.now();
  for (const runId of tenantOf.keys()) submittedAt.set(runId, started);
  await finished;
  const wallMs = performance.now() - started;
  for (const { runId, ms, at } of pendingStatus) {
    const run = await store.getRun(runId);
    done.get(tenantOf.get(runId)!)!.push({ ms, at, ok: run?.status === 'succeeded' });
  }
  unsubscribe();
  await orchestrator.stop();
  await store.close();
  removeDir(dir);

  const result = {
    label: values.label,
    runs: RUNS,
    rounds: ROUNDS,
    modelPoolSlots: MODEL_MAX_CONCURRENCY_DEFAULT,
    loadAverage: load,
    submitMs,
    wallMs: Math.round(wallMs),
    all: figures([...done.values()].flat(), wallMs),
    tenants:
      TENANTS === 1
        ? undefined
        : tenants.map((t) => ({ weight: t.weight, ...figures(done.get(t.id)!, wallMs) })),
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  if (values.record) record(result);
}

function record(result: {
  label: string;
  loadAverage: number[];
  all: Figures;
  tenants: Array<Figures & { weight: number }> | undefined;
}): void {
  const report = readFileSync(RESULTS_PATH, 'utf8');
  const from = report.indexOf(SECTION_START);
  const to = report.indexOf(SECTION_END);
  const body = from >= 0 && to > from ? report.slice(from + SECTION_START.length + 1, to) : '';
  const rows = body
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| Run '));
  const row = (who: string, f: Figures) =>
    `| ${result.label} | ${who} | ${result.loadAverage[0]} | ${f.runs} | ${f.firstCompletionMs} | ${f.meanMs} | ${f.p50Ms} | ${f.p99Ms} | ${f.lastCompletionMs} | ${f.completionsPerSec} | ${f.throughputPerSec} | ${Math.round(f.onTimeRate * 100)}% |`;
  rows.push(row(result.tenants === undefined ? 'one tenant' : 'both tenants', result.all));
  for (const t of result.tenants ?? []) rows.push(row(`weight ${t.weight}`, t));
  const table = [
    '## Overload: finishing what was started (issue 27)',
    '',
    `\`npx node bench/overload.ts [--tenants 2] --label <label> --record\`: ${RUNS} runs submitted at once, each ${ROUNDS} rounds of a ${MODEL_LATENCY_MS} ms mock-model call and a ${STEP_MS} ms step, the model's default pool of ${MODEL_MAX_CONCURRENCY_DEFAULT} slots (two tenants: weights ${TENANT_WEIGHTS.join(' and ')}, half the runs each). All runs are queued first, then the worker starts (time zero). First and last completion, mean, p50, p99: ms from time zero to a run's end; on time = finished within ${ON_TIME_MS / 1000} s; completions/s between the first and the last completion; throughput = runs / (start of the load to the last completion). Load = 1-minute load average when the run started (the machine is shared).`,
    '',
    '| Run | Tenant | Load | Runs | First completion | Mean | p50 | p99 | Last | Completions/s | Throughput runs/s | On time (30 s) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
  writeFileSync(RESULTS_PATH, spliceSection(report, SECTION_START, SECTION_END, `${table}\n`));
}

await main();
