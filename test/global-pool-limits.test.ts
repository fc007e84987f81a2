// Pool limits across processes (issue 24): two `keel server` + two `keel worker` on one fresh
// Postgres, a tool pool `gpu` with a limit of 8 in total and a cap of 3 per tenant (tenant B's own
// record raises its cap to 8). Every tool call appends start/end lines to one O_APPEND ledger
// outside Keel, so any prefix of the file says how many calls were inside their slot at that moment
// (a call writes `start` after its slot is granted and `end` before it is released). The measured
// concurrency must never pass 8 (tenant A's never 3) and must reach them, over calls made by several
// processes. Then a worker holding slots is killed with SIGKILL: its holder's lease ends within
// KEEL_POOL_LEASE_MS of the kill, and the three processes left reach 8 again (they could not while
// its slots still counted).
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  apiClient,
  createTenant,
  distributedScene,
  runStatuses,
  submitAll,
  TERMINAL_STATUSES,
  until,
} from './support/distributed.ts';
import { startKeelRole } from './support/keel-process.ts';
import { postgresAvailable } from './support/postgres.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/global-pool-agents.ts', import.meta.url));
const ADMIN_KEY = 'global-pools-admin-key-0123456789';
const LIMIT = 8;
const CAP_A = 3;
const POOL_LEASE_MS = 3_000;

interface Measured {
  maxTotal: number;
  maxA: number;
  /** Processes (pids) that made calls. */
  pids: Set<string>;
}

/**
 * Replays the ledger from line `from`: calls open between their start and end lines; a `kill <pid>`
 * line ends the killed process's open calls (it is dead by then).
 */
function measure(lines: string[], from = 0): Measured {
  const open = new Map<string, { label: string; pid: string }>();
  const measured: Measured = { maxTotal: 0, maxA: 0, pids: new Set() };
  for (const [i, line] of lines.entries()) {
    const [what, label, pid, call] = line.split(' ');
    if (what === 'start') open.set(call!, { label: label!, pid: pid! });
    else if (what === 'end') open.delete(call!);
    else if (what === 'kill') for (const [id, c] of open) if (c.pid === label) open.delete(id);
    if (i < from || what !== 'start') continue;
    measured.pids.add(pid!);
    measured.maxTotal = Math.max(measured.maxTotal, open.size);
    let a = 0;
    for (const c of open.values()) if (c.label === 'A') a++;
    measured.maxA = Math.max(measured.maxA, a);
  }
  return measured;
}

test('two servers and two workers hold a pool limit of 8 and a tenant cap of 3 in total; a killed worker’s slots come back', {
  timeout: 240_000,
  skip: !(await postgresAvailable()),
}, async (t) => {
  const { dir, db, processes } = await distributedScene(t, 'global-pools');
  const ledger = join(dir, 'ledger.txt');
  writeFileSync(ledger, '');
  const poolsFile = join(dir, 'pools.json');
  writeFileSync(
    poolsFile,
    JSON.stringify({ pools: { gpu: { limit: LIMIT, tenantCaps: { default: CAP_A } } } }),
  );
  const env = {
    KEEL_TEST_LEDGER: ledger,
    KEEL_POOLS_FILE: poolsFile,
    KEEL_POOL_LEASE_MS: String(POOL_LEASE_MS),
    KEEL_LEASE_TTL_MS: '5000',
    KEEL_ADMIN_KEY: ADMIN_KEY,
  };
  const start = async (role: 'server' | 'worker', name: string) => {
    const started = await startKeelRole({ role, name, agents: AGENTS, databaseUrl: db.url, env });
    processes.push(started);
    return started;
  };
  // The tenants exist before the other three processes start, so they read B's raised cap at start
  // (the first server re-reads tenants every 5 s, long before it has runs to execute).
  const servers = [await start('server', 'keel-server-1')];
  const tenantA = await createTenant(servers[0]!.url, ADMIN_KEY, 'tenant-a');
  const created = await fetch(`${servers[0]!.url}/v1/admin/tenants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'tenant-b', weight: 1, poolCaps: { gpu: LIMIT } }),
  });
  assert.equal(created.status, 201);
  servers.push(await start('server', 'keel-server-2'));
  const workers = [await start('worker', 'keel-worker-1'), await start('worker', 'keel-worker-2')];
  const tenantB = apiClient(servers[1]!.url, ((await created.json()) as { apiKey: string }).apiKey);
  /** What the processes said about leases and pool slots: the first thing to read on a failure. */
  const said = () =>
    processes
      .flatMap((p) => p.output().split('\n'))
      .filter((line) => /lease|pool/i.test(line))
      .slice(0, 20)
      .join('\n');
  const finish = async (ids: string[], what: string) => {
    await until(
      what,
      async () => {
        const statuses = await runStatuses(db, ids);
        return [...statuses.values()].every((r) => TERMINAL_STATUSES.includes(r.status))
          ? true
          : undefined;
      },
      120_000,
    );
    const failed = await db.query<{ id: string; error: string }>(
      "SELECT id, error FROM runs WHERE id = ANY($1) AND status <> 'succeeded' LIMIT 3",
      [ids],
    );
    assert.deepEqual(failed, [], `${what}: every run succeeds\n${said()}`);
  };
  const lines = () => readFileSync(ledger, 'utf8').split('\n').filter(Boolean);

  // Phase 1: both tenants at once.
  const [idsA, idsB] = await Promise.all([
    submitAll(
      tenantA,
      'gpu-user',
      Array.from({ length: 24 }, () => ({ label: 'A', ms: 250 })),
    ),
    submitAll(
      tenantB,
      'gpu-user',
      Array.from({ length: 120 }, () => ({ label: 'B', ms: 250 })),
    ),
  ]);
  await finish([...idsA, ...idsB], 'the first 144 runs to end');
  const first = measure(lines());
  assert.ok(
    first.maxTotal <= LIMIT,
    `at most ${LIMIT} calls at once, measured ${first.maxTotal}\n${said()}`,
  );
  assert.ok(
    first.maxA <= CAP_A,
    `tenant A at most ${CAP_A} at once, measured ${first.maxA}\n${said()}`,
  );
  assert.equal(first.maxTotal, LIMIT, 'the limit was reached');
  assert.equal(first.maxA, CAP_A, 'tenant A’s cap was reached');
  assert.ok(first.pids.size >= 2, `calls ran in ${first.pids.size} processes`);

  // Phase 2: long calls; kill a worker while it holds slots.
  const victim = workers[0]!;
  const idsLong = await submitAll(
    tenantB,
    'gpu-user',
    Array.from({ length: 64 }, () => ({ label: 'B', ms: 1_200 })),
  );
  const before = lines().length;
  await until(
    'the first worker to have calls inside their slots',
    async () => {
      const open = new Map<string, string>();
      for (const line of lines().slice(before)) {
        const [what, , pid, call] = line.split(' ');
        if (what === 'start') open.set(call!, pid!);
        else if (what === 'end') open.delete(call!);
      }
      return [...open.values()].some((pid) => pid === String(victim.pid)) ? true : undefined;
    },
    60_000,
  );
  const [held] = await db.query<{ expires_at: string }>(
    'SELECT expires_at FROM pool_slot_holders WHERE holder = $1',
    [victim.owner],
  );
  assert.ok(held !== undefined, 'the worker holds a pool-slot lease');
  await victim.kill('SIGKILL');
  const killedAt = Date.now();
  const killLine = lines().length;
  appendFileSync(ledger, `kill ${victim.pid}\n`);
  const [last] = await db.query<{ expires_at: string }>(
    'SELECT expires_at FROM pool_slot_holders WHERE holder = $1',
    [victim.owner],
  );
  // Its slots stop counting when its lease ends, at most one lease after the kill (or are gone).
  assert.ok(
    last === undefined || Number(last.expires_at) <= killedAt + POOL_LEASE_MS,
    `the killed worker's lease ends by ${killedAt + POOL_LEASE_MS}, not ${last?.expires_at}`,
  );
  await finish(idsLong, 'the long runs to end after the kill');
  const all = measure(lines());
  assert.ok(
    all.maxTotal <= LIMIT,
    `at most ${LIMIT} calls at once, measured ${all.maxTotal}\n${said()}`,
  );
  const after = measure(lines(), killLine + 1);
  assert.ok(!after.pids.has(String(victim.pid)));
  assert.equal(after.maxTotal, LIMIT, 'the three processes left reach the limit again');
  const rows = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM pool_slot_holders WHERE holder = $1',
    [victim.owner],
  );
  assert.equal(rows[0]!.n, 0, 'the killed worker’s holder is forgotten');
});
