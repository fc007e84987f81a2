// `npx node bench/pg-lone-runs.ts [--root <checkout>] [--runs 200]`: the step gap of lone 5-step
// runs on Postgres (one run at a time, an in-process worker): from one step body's end to the next
// one's start, which is one effect commit plus the engine's turn. `--root` loads Keel from another
// checkout (an older commit in a git worktree, say), so one command compares versions on the same
// machine and database; the modules it loads there have kept their paths since the store, engine
// and SDK got their folders. It prints percentiles and writes nothing. It also prints, per step of the
// measured window, the CPU of this process (Keel and the bench) and of the Postgres backends of the
// bench database (from /proc, when the server is local), with the database's transactions: both
// include the bench's own run creation and 2 ms status polling, the same for every checkout.
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  benchDatabaseUrl,
  clockTicksPerSec,
  createFreshDatabase,
  dropDatabase,
  PostgresMeter,
} from './postgres-support.ts';

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const ROOT = resolve(flag('--root') ?? join(import.meta.dirname, '..'));
const RUNS = Number(flag('--runs') ?? 200);
const WARM_UP_RUNS = 20;
const STEPS = 5;
const DATABASE = 'keel_bench_lone_runs';

/** Imports `path` from the checkout being measured. */
const load = (path: string) => import(pathToFileURL(join(ROOT, path)).href);

const { PostgresStore } = await load('src/store/postgres/postgres-store.ts');
const { Orchestrator } = await load('src/engine/orchestrator.ts');
const { AgentRegistry } = await load('src/engine/registry.ts');
const { ModelGateway } = await load('src/models/gateway.ts');
const { defineAgent } = await load('src/sdk/define.ts');
const { randomUUID } = await import('node:crypto');

const gapsMs: number[] = [];
let previousEnded: number | undefined;
const agent = defineAgent({
  name: 'lone',
  version: '1',
  async run(ctx: { step(name: string, fn: () => number): Promise<number> }) {
    previousEnded = undefined;
    for (let i = 0; i < STEPS; i++) {
      await ctx.step(`s${i}`, () => {
        if (previousEnded !== undefined) gapsMs.push(performance.now() - previousEnded);
        previousEnded = performance.now();
        return i;
      });
    }
    return 'ok';
  },
});

await createFreshDatabase(DATABASE);
const store = new PostgresStore({ connectionString: benchDatabaseUrl(DATABASE) });
await store.migrate();
const registry = new AgentRegistry();
registry.register(agent);
const orchestrator = new Orchestrator({ store, registry, gateway: new ModelGateway() });
const tenant = await store.ensureTenant('bench', 'bench-key-hash');
orchestrator.start();

async function loneRun(): Promise<void> {
  const { run } = await store.createRun({
    id: `run_${randomUUID()}`,
    tenantId: tenant.id,
    agent: 'lone',
    agentVersion: '1',
    input: null,
    priority: 'interactive',
    budget: {},
    metadata: null,
    parentRunId: null,
    idempotencyKey: null,
    requestHash: null,
  });
  for (;;) {
    if ((await store.getRun(run.id))?.status === 'succeeded') return;
    await new Promise((r) => setTimeout(r, 2));
  }
}

const meter = await PostgresMeter.open(DATABASE);
let cpuLine = '';
try {
  for (let i = 0; i < WARM_UP_RUNS; i++) await loneRun();
  gapsMs.length = 0;
  const before = await meter.sample();
  const cpuBefore = process.cpuUsage();
  for (let i = 0; i < RUNS; i++) await loneRun();
  const cpu = process.cpuUsage(cpuBefore);
  const after = await meter.sample();
  const steps = RUNS * STEPS;
  const figures = meter.figures(before, after, steps);
  // Ticks of the backends alive at the end of the window (the store's pool and listener).
  let backendTicks = 0;
  for (const [pid, ticks] of after.backendTicks)
    backendTicks += ticks - (before.backendTicks.get(pid) ?? 0);
  const backendsMs =
    figures.databaseBackendsCpuPct === undefined
      ? 'n/a'
      : ((backendTicks / clockTicksPerSec()) * 1000) / steps;
  const fmt = (v: number | string) => (typeof v === 'number' ? v.toFixed(3) : v);
  cpuLine =
    `  per step: this process ${fmt((cpu.user + cpu.system) / 1000 / steps)} ms CPU, ` +
    `Postgres backends of the database ${fmt(backendsMs)} ms CPU, ` +
    `${figures.transactionsPerStep} transactions, ${figures.walSyncsPerStep} WAL syncs\n`;
} finally {
  await meter.close();
  await orchestrator.stop();
  await store.close();
  await dropDatabase(DATABASE);
}
gapsMs.sort((a, b) => a - b);
const at = (q: number) => gapsMs[Math.floor(q * (gapsMs.length - 1))]!.toFixed(3);
process.stdout.write(
  `${ROOT}: ${gapsMs.length} step gaps over ${RUNS} lone runs: p50 ${at(0.5)} ms, p90 ${at(0.9)} ms, p99 ${at(0.99)} ms\n${cpuLine}`,
);
