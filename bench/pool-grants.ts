// `npx node bench/pool-grants.ts [--ops 500]`: the overhead of pool limits across processes. On a
// fresh Postgres database: (1) one holder asks for one slot and gives it back, `--ops` times in a
// row (the cost a call pays when no slot is at hand in its process: a durable grant under the
// pool's lock, then a return); (2) four holders on their own connections contend for a pool of 8,
// each granting and returning as fast as it can, for `--ops` grants each (throughput of one
// pool's lock). (3) The embedded path: a local pool's acquire + release with no cluster layer, per
// operation (what SQLite mode pays, unchanged by this layer). `--embedded-only` runs (3) alone and
// `--root <checkout>` takes its pool registry from another checkout (to compare versions). It
// prints figures and writes nothing.
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { benchDatabaseUrl, createFreshDatabase, dropDatabase } from './postgres-support.ts';

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const OPS = Number(flag('--ops') ?? 500);
const ROOT = resolve(flag('--root') ?? join(import.meta.dirname, '..'));
const EMBEDDED_ONLY = args.includes('--embedded-only');
const DATABASE = 'keel_bench_pool_grants';
const LEASE_MS = 60_000;
const LIMIT = 8;

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const ms = (n: number) => `${n.toFixed(3)} ms`;

function summary(label: string, samples: number[]): void {
  const sorted = [...samples].sort((a, b) => a - b);
  console.log(
    `${label}: p50 ${ms(percentile(sorted, 50))}, p90 ${ms(percentile(sorted, 90))}, p99 ${ms(percentile(sorted, 99))} (${sorted.length} samples)`,
  );
}

if (!EMBEDDED_ONLY) await clusterGrants();

async function clusterGrants(): Promise<void> {
  await createFreshDatabase(DATABASE);
  const url = benchDatabaseUrl(DATABASE);
  const stores: PostgresStore[] = [];
  try {
    const open = async () => {
      const store = new PostgresStore({ connectionString: url, poolSize: 2 });
      stores.push(store);
      return store;
    };
    const first = await open();
    await first.migrate();

    // (1) One holder, uncontended.
    const holder = await first.openPoolSlotHolder('bench-1', LEASE_MS);
    const request = (token: number, pool: string) => ({
      pool,
      tenantId: 't',
      token,
      limit: LIMIT,
      tenantCap: null,
      count: 1,
      wanted: 1,
    });
    const grants: number[] = [];
    const returns: number[] = [];
    for (let i = 0; i < OPS + 50; i++) {
      const t0 = performance.now();
      const grant = await first.grantPoolSlots(request(holder.token, 'solo'));
      const t1 = performance.now();
      await first.returnPoolSlots('solo', 't', holder.token, grant.granted, 0);
      const t2 = performance.now();
      if (i < 50) continue; // warm-up
      grants.push(t1 - t0);
      returns.push(t2 - t1);
    }
    summary('uncontended grant (1 slot, durable, under the pool lock)', grants);
    summary('uncontended return (1 slot)', returns);

    // (2) Four holders, one pool of 8.
    const holders = await Promise.all(
      [1, 2, 3, 4].map(async (i) => {
        const store = await open();
        return { store, holder: await store.openPoolSlotHolder(`bench-c${i}`, LEASE_MS) };
      }),
    );
    const contended: number[] = [];
    let granted = 0;
    let refused = 0;
    const started = performance.now();
    await Promise.all(
      holders.map(async ({ store, holder: h }) => {
        for (let i = 0; i < OPS; i++) {
          const t0 = performance.now();
          const grant = await store.grantPoolSlots(request(h.token, 'shared'));
          contended.push(performance.now() - t0);
          if (grant.granted === 0) {
            refused++;
            continue;
          }
          granted++;
          await store.returnPoolSlots('shared', 't', h.token, grant.granted, 0);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    summary('contended grant (4 holders, limit 8)', contended);
    console.log(
      `contended: ${(granted / seconds).toFixed(0)} grants/s granted, ${refused} refused, ${(contended.length / seconds).toFixed(0)} asks/s`,
    );
  } finally {
    for (const store of stores) await store.close().catch(() => {});
    await dropDatabase(DATABASE).catch(() => {});
  }
}

// (3) Embedded: no cluster layer (three rounds, the last two printed).
const { PoolRegistry } = await import(
  pathToFileURL(join(ROOT, 'src/scheduling/pool-registry.ts')).href
);
const pools = new PoolRegistry();
const LOCAL_OPS = 200_000;
for (let round = 0; round < 3; round++) {
  const t0 = performance.now();
  for (let i = 0; i < LOCAL_OPS; i++) {
    const release = await pools.acquire('gpu', { tenantId: 't', priority: 'interactive' });
    release();
  }
  const perOp = ((performance.now() - t0) * 1000) / LOCAL_OPS;
  if (round > 0)
    console.log(
      `embedded acquire + release (no cluster layer, ${ROOT}): ${perOp.toFixed(2)} µs per slot`,
    );
}
