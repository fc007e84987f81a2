// keel_fair_claim (Postgres migration 0054) plans a fair claim in the database, repeating
// src/domain/fair-share.ts' FairClaim: this holds the two equal. Tenants of several weights, caps
// and priority classes are claimed from again and again with the function; before each claim the
// same claim is planned with FairClaim over the backlog read from the database (and a store that
// has exactly the claimable runs the database has), and the tenants served, in order, and their
// new virtual times must be the same, as must the backlogged marks left behind.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import pg from 'pg';
import {
  BATCH_AGING_MS,
  FAIR_CLAIM_ROUNDS_MAX,
  FairClaim,
  INTERACTIVE_LEAD_CLAIMS,
} from '../src/domain/fair-share.ts';
import { newRunId } from '../src/domain/ids.ts';
import { statusesAllowing } from '../src/domain/run-status.ts';
import { toBackloggedTenants } from '../src/store/fair-claim.ts';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { TEST_DATABASE_URL, postgresAvailable } from './support/postgres.ts';

const SERVED = ['agent@1'];
const STATUSES = statusesAllowing('claim') as readonly string[];

/** The backlogged tenants as fair-backlog reads them (flagged ones only), and each one's claimable runs. */
const BACKLOG_SQL = `
  SELECT c.tenant_id, coalesce(t.weight, 1) AS weight, c.vtime, t.max_concurrent_runs,
    CASE WHEN t.max_concurrent_runs IS NULL THEN 0 ELSE (
      SELECT count(*) FROM runs x WHERE x.tenant_id = c.tenant_id AND x.ended_at IS NULL
        AND x.status IN ('running', 'cancelling') AND x.lease_owner IS NOT NULL) END AS held,
    (SELECT min(r.claim_after) FROM runs r WHERE r.tenant_id = c.tenant_id AND r.priority_rank = 0 AND ${claimable('r')})
      AS head_interactive,
    (SELECT min(r.claim_after) FROM runs r WHERE r.tenant_id = c.tenant_id AND r.priority_rank = 1 AND ${claimable('r')})
      AS head_batch,
    (SELECT count(*) FROM runs r WHERE r.tenant_id = c.tenant_id AND ${claimable('r')}) AS claimable
  FROM fair_tenant_clocks c LEFT JOIN tenants t ON t.id = c.tenant_id
  WHERE c.backlogged ORDER BY c.vtime, c.tenant_id`;

function claimable(alias: string): string {
  return `${alias}.claim_after IS NOT NULL AND ${alias}.claim_after <= $1::bigint
    AND ${alias}.status = ANY ($2::text[]) AND ${alias}.agent_key = ANY ($3::text[])
    AND ${alias}.lease_losses = 0 AND ${alias}.lease_owner IS NULL`;
}

test('keel_fair_claim repeats the planner constants of fair-share.ts', () => {
  const sql = readFileSync(
    new URL('../src/store/postgres/migrations/0054_fair_claim_function.sql', import.meta.url),
    'utf8',
  );
  assert.ok(
    sql.includes(`lead := ${INTERACTIVE_LEAD_CLAIMS} / greatest(`),
    'INTERACTIVE_LEAD_CLAIMS',
  );
  assert.ok(sql.includes(`AND rounds < ${FAIR_CLAIM_ROUNDS_MAX} AND`), 'FAIR_CLAIM_ROUNDS_MAX');
});

test('keel_fair_claim serves the tenants FairClaim plans, in order, with the same virtual times', {
  skip: !(await postgresAvailable()),
}, async (t) => {
  const schema = `keel_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const store = new PostgresStore({ connectionString: TEST_DATABASE_URL, schema, poolSize: 2 });
  const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
  t.after(async () => {
    await store.close();
    await db.query(`DROP SCHEMA ${schema} CASCADE`);
    await db.end();
  });
  await store.migrate();
  await db.connect();
  await db.query(`SET search_path = ${schema}`);
  const weights = [1, 2, 3, 1, 5, 1, 2, 1, 4, 1];
  const caps = [null, 2, null, 3, null, null, 1, null, 2, null];
  for (const [i, weight] of weights.entries()) {
    const tenant = await store.createTenant(`t${i}`, `key-${i}`, { weight });
    if (caps[i] !== null) await store.updateTenant(tenant.id, { maxConcurrentRuns: caps[i]! });
    for (let k = 0; k < 3 + (i % 4) * 3; k++)
      await store.createRun({
        id: newRunId(),
        tenantId: tenant.id,
        agent: 'agent',
        agentVersion: '1',
        input: null,
        priority: (i + k) % 3 === 0 ? 'interactive' : 'batch',
        budget: {},
        metadata: null,
        parentRunId: null,
        idempotencyKey: null,
        requestHash: null,
      });
  }
  const now = Date.now() + 1_000;
  const limits = [1, 3, 2, 5, 1, 4, 7, 1, 2, 3, 6, 1, 2];
  const backlogWeight = 25;
  let served = 0;
  for (const [step, limit] of limits.entries()) {
    const { rows } = await db.query(BACKLOG_SQL, [now, STATUSES, SERVED]);
    const open = rows.filter((r) => r.head_interactive !== null || r.head_batch !== null);
    const available = new Map(rows.map((r) => [String(r.tenant_id), Number(r.claimable)]));
    const clock = rows.length === 0 ? 0 : Math.min(...rows.map((r) => Number(r.vtime)));
    const plan = new FairClaim<string>(toBackloggedTenants(open), clock, limit, backlogWeight);
    for (let round = plan.next(); round !== null; round = plan.next()) {
      const claimed = new Map<string, string[]>();
      for (const [tenantId, n] of round) {
        const k = Math.min(n, available.get(tenantId) ?? 0);
        available.set(tenantId, (available.get(tenantId) ?? 0) - k);
        claimed.set(
          tenantId,
          Array.from({ length: k }, () => tenantId),
        );
      }
      plan.record(claimed);
    }
    const expected = plan.result();
    const stillBacklogged = rows
      .map((r) => String(r.tenant_id))
      .filter((id) => open.some((o) => String(o.tenant_id) === id) && plan.stillBacklogged(id));

    const got = await db.query(
      `SELECT tenant_id FROM keel_fair_claim($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        `owner-${step}`,
        now,
        now + 60_000,
        SERVED,
        STATUSES,
        limit,
        64,
        backlogWeight,
        BATCH_AGING_MS,
      ],
    );
    assert.deepEqual(
      got.rows.map((r) => String(r.tenant_id)),
      expected.items,
      `claim ${step} (limit ${limit}): tenants served`,
    );
    served += got.rows.length;
    const clocks = await db.query(
      `SELECT tenant_id, vtime, backlogged FROM fair_tenant_clocks WHERE tenant_id = ANY ($1::text[])`,
      [rows.map((r) => String(r.tenant_id))],
    );
    for (const row of clocks.rows) {
      const id = String(row.tenant_id);
      const before = Number(rows.find((r) => String(r.tenant_id) === id)!.vtime);
      assert.equal(
        Number(row.vtime),
        expected.vtimes.get(id) ?? before,
        `claim ${step}: vtime of ${id}`,
      );
      assert.equal(row.backlogged, stillBacklogged.includes(id), `claim ${step}: mark of ${id}`);
    }
    const attempts = await db.query(
      `SELECT count(*)::int AS n FROM run_attempts a JOIN runs r ON r.id = a.run_id
       WHERE a.worker = $1 AND a.lease_token = r.lease_token AND a.number = r.attempts AND a.ending = 'running'`,
      [`owner-${step}`],
    );
    assert.equal(attempts.rows[0].n, got.rows.length, `claim ${step}: an attempt per claimed run`);
  }
  assert.ok(served >= 20, `claims served ${served} runs`);
});
