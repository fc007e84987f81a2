// Tool policy and human approval over real HTTP: the tenant's policy read and replaced (by a tenant
// admin and by the platform admin; a bad policy is a 400); a parked run shows its pending request
// in GET /v1/runs/:id and in GET /v1/approvals (cursor pages, tenant-scoped); deciding needs the
// operate scope, is bound to the call (argsHash), is final (409), is audited with the deciding key;
// a denial over the API reaches the agent as tool_denied_by_approver.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { isKeelError } from '../src/domain/keel-error.ts';
import { defineAgent, defineTool } from '../src/index.ts';
import { startKeel, TERMINAL, type TestKeel } from './support/keel-server.ts';

const sent: string[] = [];
const sendEmail = defineTool({
  name: 'send_email',
  description: 'Sends an email',
  input: z.object({ to: z.string(), body: z.string() }),
  effect: 'side-effect',
  risk: 'high',
  run: ({ to }) => {
    sent.push(to);
    return { sent: true };
  },
});

const mailer = defineAgent({
  name: 'mailer',
  version: '1',
  tools: [sendEmail],
  async run(ctx, input: { to: string }) {
    try {
      return await ctx.tool(sendEmail, { to: input.to, body: 'hello' });
    } catch (error) {
      return { code: isKeelError(error) ? error.code : 'other' };
    }
  },
});

async function keyWith(keel: TestKeel, scopes: string[]): Promise<string> {
  const created = await keel.request('POST', '/v1/keys', { name: scopes.join('-'), scopes });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body.secret;
}

async function parked(keel: TestKeel, to: string) {
  const created = await keel.request('POST', '/v1/runs', { agent: 'mailer', input: { to } });
  return keel.waitForRun(created.body.id, (r) => r.status === 'waiting');
}

test('policy routes: read, replace, refuse a bad policy; the platform admin sets any tenant’s', async (t) => {
  const keel = await startKeel({ agents: [mailer] });
  t.after(() => keel.close());
  assert.deepEqual((await keel.request('GET', '/v1/policy')).body, { policy: null });
  const policy = { deny: ['exec'], approval: { tools: ['send_*'], expiresAfterMs: 60_000 } };
  const put = await keel.request('PUT', '/v1/policy', policy);
  assert.equal(put.status, 200, JSON.stringify(put.body));
  assert.deepEqual((await keel.request('GET', '/v1/policy')).body, { policy });
  for (const bad of [{ deny: 'exec' }, { maxRisk: 'extreme' }, { nope: 1 }]) {
    const refused = await keel.request('PUT', '/v1/policy', bad);
    assert.equal(refused.status, 400, JSON.stringify(bad));
    assert.equal(refused.body.error.code, 'validation_failed');
  }
  const reader = await keyWith(keel, ['read']);
  assert.equal((await keel.request('PUT', '/v1/policy', {}, reader)).status, 403);
  assert.equal((await keel.request('GET', '/v1/policy', undefined, reader)).status, 200);

  const tenant = await keel.request('POST', '/v1/admin/tenants', { name: 'other' }, keel.adminKey);
  assert.equal(tenant.status, 201);
  const path = `/v1/admin/tenants/${tenant.body.tenant.id}/policy`;
  assert.equal((await keel.request('PUT', path, { allow: ['search'] }, keel.adminKey)).status, 200);
  assert.deepEqual((await keel.request('GET', path, undefined, keel.adminKey)).body, {
    policy: { allow: ['search'] },
  });
  assert.equal((await keel.request('GET', path, undefined, keel.apiKey)).status, 401);
  const missing = await keel.request(
    'GET',
    '/v1/admin/tenants/ten_nope/policy',
    undefined,
    keel.adminKey,
  );
  assert.equal(missing.status, 404);
  const audit = await keel.request('GET', '/v1/audit?action=policy.update');
  assert.deepEqual(
    audit.body.entries.map((e: any) => e.outcome),
    ['forbidden_scope', 'validation_failed', 'validation_failed', 'validation_failed', 'ok'],
    'the tenant’s own changes and refusals are in its audit log, newest first',
  );
});

test('approvals: listed across runs with a cursor, shown on the run, decided once by an operate key, audited', async (t) => {
  const keel = await startKeel({ agents: [mailer] });
  t.after(() => keel.close());
  await keel.request('PUT', '/v1/policy', { approval: { tools: ['send_email'] } });
  sent.length = 0;
  const first = await parked(keel, 'ann@example.com');
  const second = await parked(keel, 'bob@example.com');
  assert.equal(first.waitingReason, 'approval');
  assert.equal(first.pendingApprovals.length, 1);
  const request = first.pendingApprovals[0];
  assert.equal(request.tool, 'send_email');
  assert.deepEqual(request.args, { to: 'ann@example.com', body: 'hello' });
  assert.equal(request.status, 'pending');
  assert.equal(request.executionId, `${first.id}.1`);

  const page1 = await keel.request('GET', '/v1/approvals?limit=1');
  assert.equal(page1.status, 200);
  assert.deepEqual(
    page1.body.approvals.map((a: any) => a.runId),
    [second.id],
  );
  assert.ok(page1.body.nextCursor);
  const page2 = await keel.request('GET', `/v1/approvals?limit=1&cursor=${page1.body.nextCursor}`);
  assert.deepEqual(
    page2.body.approvals.map((a: any) => a.runId),
    [first.id],
  );
  assert.equal(page2.body.nextCursor, null);
  assert.equal(
    (await keel.request('GET', '/v1/approvals?cursor=bm9wZQ')).body.error.code,
    'invalid_cursor',
  );

  const other = await keel.request('POST', '/v1/admin/tenants', { name: 'other' }, keel.adminKey);
  const foreign: string = other.body.apiKey;
  assert.deepEqual(
    (await keel.request('GET', '/v1/approvals', undefined, foreign)).body.approvals,
    [],
  );
  const decide = (run: string, body: unknown, key?: string) =>
    keel.request('POST', `/v1/runs/${run}/approvals/${run}.1`, body, key);
  assert.equal((await decide(first.id, { decision: 'approve' }, foreign)).status, 404);
  const reader = await keyWith(keel, ['read']);
  const forbidden = await decide(first.id, { decision: 'approve' }, reader);
  assert.equal(forbidden.status, 403);
  assert.equal(forbidden.body.error.code, 'forbidden_scope');
  assert.equal((await decide(first.id, { decision: 'maybe' })).status, 400);
  const mismatch = await decide(first.id, { decision: 'approve', argsHash: '0'.repeat(64) });
  assert.equal(mismatch.status, 409);
  assert.equal(mismatch.body.error.code, 'approval_mismatch');
  const missing = await keel.request('POST', `/v1/runs/${first.id}/approvals/${first.id}.9`, {
    decision: 'approve',
  });
  assert.equal(missing.body.error.code, 'approval_not_found');

  const operator = await keyWith(keel, ['operate', 'read']);
  const approved = await decide(
    first.id,
    { decision: 'approve', argsHash: request.argsHash, note: 'known customer' },
    operator,
  );
  assert.equal(approved.status, 200, JSON.stringify(approved.body));
  assert.equal(approved.body.status, 'approved');
  assert.match(approved.body.decidedBy, /^key_/);
  const again = await decide(first.id, { decision: 'deny' }, operator);
  assert.equal(again.status, 409);
  assert.equal(again.body.error.code, 'approval_already_decided');
  const done = await keel.waitForRun(first.id, (r) => TERMINAL.has(r.status));
  assert.deepEqual(done.result, { sent: true });
  assert.equal(done.pendingApprovals, undefined);

  const denied = await decide(second.id, { decision: 'deny', note: 'not this one' }, operator);
  assert.equal(denied.body.status, 'denied');
  const secondDone = await keel.waitForRun(second.id, (r) => TERMINAL.has(r.status));
  assert.deepEqual(secondDone.result, { code: 'tool_denied_by_approver' });
  assert.deepEqual(sent, ['ann@example.com']);

  const decided = await keel.request('GET', '/v1/approvals?status=all');
  assert.deepEqual(decided.body.approvals.map((a: any) => a.status).sort(), ['approved', 'denied']);
  const audit = await keel.request('GET', '/v1/audit?action=run.approval');
  const ok = audit.body.entries.filter((e: any) => e.outcome === 'ok');
  assert.equal(ok.length, 2);
  assert.equal(ok[0].actor.type, 'key');
  assert.equal(ok[1].data.decision, 'approve');
  assert.equal(ok[1].data.tool, 'send_email');
  assert.ok(
    audit.body.entries.some((e: any) => e.outcome === 'forbidden_scope'),
    'a refused decision is audited with its code',
  );
  const requested = await keel.request('GET', '/v1/audit?action=approval.requested');
  assert.equal(requested.body.entries.length, 2);
});
