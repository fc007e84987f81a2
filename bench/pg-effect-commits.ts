// `npx node bench/pg-effect-commits.ts [--root <checkout>] [--commits 2000]`: one effect commit on
// Postgres, alone, without the engine: a run is created and claimed, then committed to one effect
// at a time (a journal entry, an event, the step counter: the shape of a step's result), each commit
// awaited before the next. It prints the commit's latency percentiles and, per commit, the CPU of
// this process (the store's client side) and of the Postgres backends of the bench database (from
// /proc, when the server is local), with the database's transactions and the cluster's WAL syncs.
// `--root` loads the store from another checkout, for before/after on one machine. Writes nothing.
import { randomUUID } from 'node:crypto';
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
const COMMITS = Number(flag('--commits') ?? 2000);
const WARM_UP_COMMITS = 200;
const DATABASE = 'keel_bench_effect_commits';

const { PostgresStore } = await import(
  pathToFileURL(join(ROOT, 'src/store/postgres/postgres-store.ts')).href
);

await createFreshDatabase(DATABASE);
const store = new PostgresStore({ connectionString: benchDatabaseUrl(DATABASE) });
await store.migrate();
const tenant = await store.ensureTenant('bench', 'bench-key-hash');
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
const [claimed] = await store.claimRuns({
  owner: 'bench-worker',
  limit: 1,
  leaseMs: 600_000,
  served: ['lone@1'],
});
if (claimed?.id !== run.id) throw new Error('the bench run was not claimed');
let stateVersion: number = claimed.stateVersion;
let seq = 0;

async function commitOne(): Promise<number> {
  seq++;
  const now = Date.now();
  const started = performance.now();
  const outcome = await store.commit({
    runId: run.id,
    leaseToken: claimed.leaseToken,
    expectedStateVersion: stateVersion,
    journal: [
      {
        seq,
        kind: 'step',
        name: `s${seq}`,
        status: 'succeeded',
        args: null,
        result: seq,
        worker: 'bench-worker',
        queuedAt: now,
        startedAt: now,
        endedAt: now,
      },
    ],
    events: [{ type: 'step.succeeded', data: { name: `s${seq}`, seq } }],
    run: { counters: { steps: 1 } },
  });
  stateVersion = outcome.stateVersion;
  return performance.now() - started;
}

const latenciesMs: number[] = [];
let cpuLine = '';
try {
  for (let i = 0; i < WARM_UP_COMMITS; i++) await commitOne();
  cpuLine = await meteredWindow(DATABASE, COMMITS, 'commit', async () => {
    for (let i = 0; i < COMMITS; i++) latenciesMs.push(await commitOne());
  });
} finally {
  await store.close();
  await dropDatabase(DATABASE);
}
latenciesMs.sort((a, b) => a - b);
const at = (q: number) => quantileText(latenciesMs, q);
process.stdout.write(
  `${ROOT}: ${COMMITS} effect commits, one at a time: p50 ${at(0.5)} ms, p90 ${at(0.9)} ms, p99 ${at(0.99)} ms\n${cpuLine}`,
);
