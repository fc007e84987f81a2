// The audit log over real HTTP, on SQLite and Postgres: each covered action (admin changes, key
// events, cancellations, resolutions, reruns, resets, forks, re-admissions, version migrations,
// schedules) leaves an entry naming the key (or the platform admin), the action, the resource and
// the outcome — refusals too; the store's own records (a rerun's) appear beside them. Read through
// GET /v1/audit with filters and the cursor, exported as NDJSON; retention prunes old entries.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { defineAgent } from '../src/index.ts';
import { postgresAvailable } from './support/postgres.ts';
import { ADMIN_KEY, startKeelOn, type SchedulesKeel } from './support/schedules-keel.ts';

const waiter = defineAgent({
  name: 'waiter',
  version: '1',
  async run(ctx) {
    return ctx.waitForInput('answer');
  },
});

const start = (t: TestContext, backend: 'sqlite' | 'postgres'): Promise<SchedulesKeel> =>
  startKeelOn(t, backend, [waiter]);

for (const backend of ['sqlite', 'postgres'] as const) {
  test(`audit (${backend}): every covered action is an entry; filters, cursor pages and NDJSON read them`, async (t) => {
    if (backend === 'postgres' && !(await postgresAvailable())) return t.skip('no Postgres');
    const keel = await start(t, backend);
    const req = (method: string, path: string, body?: unknown, key?: string) =>
      keel.request(method, path, body, key);
    const created = await req('POST', '/v1/keys', {
      name: 'operator',
      scopes: ['operate', 'read', 'submit'],
    });
    assert.equal(created.status, 201);
    const op = created.body.secret as string;
    const opId = created.body.key.id as string;
    const reader = await req('POST', '/v1/keys', { name: 'reader', scopes: ['read'] });

    const run = await req('POST', '/v1/runs', { agent: 'waiter' }, op);
    await keel.waitForRun(run.body.id, (r) => r.status === 'waiting');
    const runId = run.body.id as string;
    // A refused attempt is an entry too (outcome: the error code).
    assert.equal(
      (await req('POST', `/v1/runs/${runId}/cancel`, undefined, reader.body.secret)).status,
      403,
    );
    assert.equal(
      (await req('POST', `/v1/runs/${runId}/executions/exec_x/resolve`, { action: 'retry' }, op))
        .status,
      404,
    );
    assert.equal((await req('POST', `/v1/runs/${runId}/retry`, undefined, op)).status, 409);
    assert.equal((await req('POST', `/v1/runs/${runId}/cancel`, undefined, op)).status, 202);
    await keel.waitForRun(runId, (r) => r.status === 'cancelled');
    const rerun = await req('POST', `/v1/runs/${runId}/rerun`, undefined, op);
    assert.equal(rerun.status, 201);
    assert.equal((await req('POST', `/v1/runs/${runId}/reset`, { position: 0 }, op)).status, 201);
    assert.equal(
      (await req('POST', `/v1/runs/${runId}/fork`, { position: 0, input: { n: 2 } }, op)).status,
      201,
    );
    assert.equal(
      (await req('POST', '/v1/runs/migrate-version', { agent: 'waiter', from: '1', to: '2' }, op))
        .status,
      409,
    );
    const tenantId = (
      await keel.request('GET', '/v1/admin/tenants', undefined, ADMIN_KEY)
    ).body.tenants.find((x: any) => x.name === 'test').id;
    assert.equal(
      (await req('PATCH', `/v1/admin/tenants/${tenantId}`, { weight: 2 }, ADMIN_KEY)).status,
      200,
    );
    assert.equal((await req('DELETE', `/v1/keys/${reader.body.key.id}`)).status, 200);

    const all = await req('GET', '/v1/audit?limit=1000');
    assert.equal(all.status, 200, JSON.stringify(all.body));
    const entries = all.body.entries as any[];
    const find = (action: string, outcome = 'ok') =>
      entries.find((e) => e.action === action && e.outcome === outcome);
    const byOp = { type: 'key', id: opId, name: 'operator' };
    assert.deepEqual(
      { ...find('run.cancel'), id: 0, at: 0, data: {} },
      {
        id: 0,
        at: 0,
        data: {},
        actor: byOp,
        action: 'run.cancel',
        resource: `run:${runId}`,
        runId,
        outcome: 'ok',
      },
    );
    assert.equal(find('run.cancel', 'forbidden_scope')?.actor.name, 'reader');
    assert.equal(find('run.resolve', 'execution_not_found')?.data.executionId, 'exec_x');
    assert.deepEqual(find('run.retry', 'run_not_quarantined')?.actor, byOp);
    assert.equal(find('run.rerun')?.data.newRunId, rerun.body.id);
    assert.ok(find('run.reset'));
    assert.ok(find('run.fork'));
    assert.equal(find('run.migrate_version', 'agent_version_not_served')?.resource, 'agent:waiter');
    assert.deepEqual(find('tenant.update')?.actor, {
      type: 'admin',
      id: null,
      name: 'platform-admin',
    });
    assert.deepEqual(find('tenant.update')?.data, { fields: ['weight'] });
    assert.deepEqual(
      entries.filter((e) => e.action === 'key.create').map((e) => e.data.name),
      ['reader', 'operator'],
    );
    assert.equal(find('key.revoke')?.resource, `key:${reader.body.key.id}`);
    // The store's own record of the rerun sits beside the request's entry.
    assert.deepEqual(
      entries.filter((e) => e.action === 'run_rerun').map((e) => [e.runId, e.actor.type]),
      [[rerun.body.id, 'system']],
    );

    // Filters.
    const cancels = await req('GET', '/v1/audit?action=run.cancel');
    assert.deepEqual(
      cancels.body.entries.map((e: any) => e.outcome),
      ['ok', 'forbidden_scope'],
    );
    const onRun = await req('GET', `/v1/audit?resource=${encodeURIComponent(`run:${runId}`)}`);
    assert.ok(onRun.body.entries.length >= 6);
    assert.ok(onRun.body.entries.every((e: any) => e.resource === `run:${runId}`));
    const future = new Date(Date.now() + 60_000).toISOString();
    assert.equal((await req('GET', `/v1/audit?since=${future}`)).body.entries.length, 0);
    assert.equal(
      (await req('GET', `/v1/audit?until=${encodeURIComponent(entries.at(-1).at)}`)).body.entries
        .length,
      0,
    );
    // Cursor pages walk the same entries, newest first.
    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await req(
        'GET',
        `/v1/audit?limit=3${cursor === null ? '' : `&cursor=${cursor}`}`,
      );
      assert.equal(page.status, 200);
      walked.push(...page.body.entries.map((e: any) => e.id));
      cursor = page.body.nextCursor;
    } while (cursor !== null);
    assert.deepEqual(
      walked,
      entries.map((e) => e.id),
    );
    assert.equal((await req('GET', '/v1/audit?cursor=bogus')).body.error.code, 'invalid_cursor');
    // NDJSON export: every entry, one a line.
    const res = await fetch(`${keel.url}/v1/audit?format=ndjson`, {
      headers: { authorization: `Bearer ${keel.apiKey}` },
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /application\/x-ndjson/);
    const lines = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((e) => e.id),
      entries.map((e) => e.id),
    );
    // Reading the log needs the admin scope; the platform admin reads any tenant's.
    assert.equal((await req('GET', '/v1/audit', undefined, op)).body.error.code, 'forbidden_scope');
    const asAdmin = await req(
      'GET',
      `/v1/admin/tenants/${tenantId}/audit?action=key.revoke`,
      undefined,
      ADMIN_KEY,
    );
    assert.equal(asAdmin.body.entries.length, 1);
    // Retention: everything older than now goes.
    assert.ok((await keel.store.pruneAudit(Date.now() + 1)) >= entries.length);
    assert.equal((await req('GET', '/v1/audit')).body.entries.length, 0);
  });
}
