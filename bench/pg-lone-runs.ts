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
  createFreshDatabase,
  dropDatabase,
  flagValue as flag,
  meteredWindow,
  quantileText,
} from './postgres-support.ts';

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

let cpuLine = '';
try {
  for (let i = 0; i < WARM_UP_RUNS; i++) await loneRun();
  gapsMs.length = 0;
  // Both figures include the bench's own run creation and 2 ms status polling.
  cpuLine = await meteredWindow(DATABASE, RUNS * STEPS, 'step', async () => {
    for (let i = 0; i < RUNS; i++) await loneRun();
  });
} finally {
  await orchestrator.stop();
  await store.close();
  await dropDatabase(DATABASE);
}
gapsMs.sort((a, b) => a - b);
const at = (q: number) => quantileText(gapsMs, q);
process.stdout.write(
  `${ROOT}: ${gapsMs.length} step gaps over ${RUNS} lone runs: p50 ${at(0.5)} ms, p90 ${at(0.9)} ms, p99 ${at(0.99)} ms\n${cpuLine}`,
);
