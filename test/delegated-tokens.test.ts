// Per-run delegated tokens over real HTTP, with a real orchestrator and a real SQLite store: a tool
// that declares `delegate` calls Keel back with ctx.delegation to start a child run of its run and
// read its run; a tool that declares nothing gets no token. The token reads its run and the
// children it started, nothing else (another run, another tenant's: 404; admin and other routes:
// 403 delegated_forbidden, a refused change audited); an expired, tampered, forged or
// wrong-audience token is 401; once the run ends its tokens are refused; the token is in no row of
// the store.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { z } from 'zod';
import type { ToolDelegation } from '../src/domain/delegation.ts';
import { defineAgent, defineTool } from '../src/index.ts';
import { DelegatedTokens, delegationKey } from '../src/secrets/delegated-tokens.ts';
import { startKeel, type TestKeel } from './support/keel-server.ts';

/** What the tools saw: kept out of the journal on purpose (the test needs the token itself). */
const seen: { delegation?: ToolDelegation; undelegated?: ToolDelegation | null } = {};

const plain = defineTool({
  name: 'plain',
  description: 'Declares no delegation',
  input: z.object({}),
  effect: 'read',
  run: (_args, ctx) => {
    seen.undelegated = ctx.delegation ?? null;
    return null;
  },
});

async function callKeel(
  delegation: ToolDelegation,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${delegation.apiUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${delegation.token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() };
}

const callBack = defineTool({
  name: 'call_back',
  description: 'Starts a child run and reads its own run with its delegated token',
  input: z.object({ otherRunId: z.string() }),
  effect: 'side-effect',
  delegate: ['runs:read-self', 'runs:child'],
  async run({ otherRunId }, ctx) {
    const delegation = ctx.delegation!;
    seen.delegation = delegation;
    const child = await callKeel(delegation, 'POST', '/v1/runs', {
      agent: 'echo',
      input: { from: ctx.runId },
    });
    const self = await callKeel(delegation, 'GET', `/v1/runs/${ctx.runId}`);
    const other = await callKeel(delegation, 'GET', `/v1/runs/${otherRunId}`);
    const list = await callKeel(delegation, 'GET', '/v1/runs');
    return {
      child: { status: child.status, id: child.body.id, parentRunId: child.body.parentRunId },
      self: { status: self.status, id: self.body.id },
      other: { status: other.status, code: other.body.error?.code },
      list: { status: list.status, code: list.body.error?.code },
    };
  },
});

const caller = defineAgent({
  name: 'caller',
  version: '1',
  tools: [plain, callBack],
  async run(ctx, input: { otherRunId: string }) {
    await ctx.tool(plain, {});
    const result = await ctx.tool(callBack, input);
    await ctx.waitForInput('finish');
    return result;
  },
});

const echo = defineAgent({
  name: 'echo',
  version: '1',
  async run(_ctx, input: { from: string }) {
    return input;
  },
});

const waiter = defineAgent({
  name: 'waiter',
  version: '1',
  async run(ctx) {
    return ctx.waitForInput('never');
  },
});

async function bearer(keel: TestKeel, token: string, method: string, path: string, body?: unknown) {
  return keel.request(method, path, body, token);
}

test('a tool’s delegated token starts a child of its run and reads its run, and nothing else; it ends with the run', async (t) => {
  const keel = await startKeel({ agents: [caller, echo, waiter] });
  t.after(() => keel.close());
  const other = await keel.request('POST', '/v1/runs', { agent: 'waiter' });
  assert.equal(other.status, 201);
  const started = await keel.request('POST', '/v1/runs', {
    agent: 'caller',
    input: { otherRunId: other.body.id },
  });
  assert.equal(started.status, 201, JSON.stringify(started.body));
  const runId: string = started.body.id;
  await keel.waitForRun(runId, (r) => r.status === 'waiting');

  // The tool that declared nothing got no token; the one that did got one for this API.
  assert.equal(seen.undelegated, null);
  const delegation = seen.delegation!;
  assert.ok(delegation.token.startsWith('kdt_'));
  assert.equal(delegation.apiUrl, keel.url);
  assert.deepEqual(delegation.scopes, ['runs:read-self', 'runs:child']);
  assert.ok(delegation.expiresAt > Date.now());

  // What the tool did with it (journaled as its result: statuses and ids, no token).
  const steps = await keel.request('GET', `/v1/runs/${runId}/steps`);
  const step = steps.body.steps.find((s: any) => s.name === 'call_back');
  const result = step.output;
  assert.equal(result.child.status, 201);
  assert.equal(result.child.parentRunId, runId, 'the child is a child of the token’s run');
  assert.deepEqual(result.self, { status: 200, id: runId });
  assert.deepEqual(result.other, { status: 404, code: 'run_not_found' });
  assert.deepEqual(result.list, { status: 403, code: 'delegated_forbidden' });
  const child = await keel.waitForRun(result.child.id, (r) => r.status === 'succeeded');
  assert.equal(child.parentRunId, runId);
  // In the run tree, its policy: cancel (the default), it ends with its parent like a ctx.child child.
  const tree = await keel.request('GET', `/v1/runs/${runId}/tree`);
  const node = tree.body.runs.find((r: any) => r.id === result.child.id);
  assert.deepEqual(
    [node?.parentRunId, node?.depth, node?.onParentEnd],
    [runId, 1, 'cancel'],
    JSON.stringify(tree.body),
  );

  const token = delegation.token;
  // Its run and the children it started: readable.
  assert.equal((await bearer(keel, token, 'GET', `/v1/runs/${runId}`)).status, 200);
  assert.equal((await bearer(keel, token, 'GET', `/v1/runs/${result.child.id}`)).status, 200);
  // Another tenant's run: 404, as if it did not exist.
  const admin = await keel.request(
    'POST',
    '/v1/admin/tenants',
    { name: 'other-tenant' },
    keel.adminKey,
  );
  assert.equal(admin.status, 201, JSON.stringify(admin.body));
  const foreign = await keel.request('POST', '/v1/runs', { agent: 'waiter' }, admin.body.apiKey);
  assert.equal(foreign.status, 201);
  const foreignRead = await bearer(keel, token, 'GET', `/v1/runs/${foreign.body.id}`);
  assert.equal(foreignRead.status, 404);
  assert.equal(foreignRead.body.error.code, 'run_not_found');
  // Routes outside its scopes, admin routes and changes to its own run: 403 delegated_forbidden.
  for (const [method, path] of [
    ['GET', '/v1/keys'],
    ['GET', '/v1/audit'],
    ['GET', '/v1/admin/tenants'],
    ['GET', `/v1/runs/${runId}/shared`],
    ['POST', `/v1/runs/${runId}/cancel`],
    ['POST', `/v1/runs/${runId}/input`],
  ] as const) {
    const res = await bearer(
      keel,
      token,
      method,
      path,
      path.endsWith('/input') ? { key: 'finish', value: 'sneaky' } : undefined,
    );
    assert.equal(res.status, 403, `${method} ${path}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.error.code, 'delegated_forbidden', `${method} ${path}`);
  }

  // A token without runs:child cannot start runs.
  const grant = {
    tenantId: started.body.tenantId,
    runId,
    executionId: `${runId}.1`,
    scopes: ['runs:read-self' as const],
  };
  const readOnly = keel.delegated.mint(grant, Date.now()).token;
  const refusedChild = await bearer(keel, readOnly, 'POST', '/v1/runs', { agent: 'echo' });
  assert.equal(refusedChild.status, 403);
  assert.equal(refusedChild.body.error.code, 'delegated_forbidden');

  // Expired, tampered, forged and wrong-audience tokens: 401 with their own codes.
  const expired = keel.delegated.mint(grant, Date.now() - 2 * keel.delegated.ttlMs).token;
  const signature = token.slice(token.lastIndexOf('.') + 1);
  const flipped = signature.startsWith('A') ? `B${signature.slice(1)}` : `A${signature.slice(1)}`;
  const tampered = token.slice(0, token.lastIndexOf('.') + 1) + flipped;
  const [claims] = token.slice(4).split('.');
  const widened = Buffer.from(claims!, 'base64url')
    .toString()
    .replace('"run":"', `"run":"${other.body.id}","x":"`);
  const swapped = `kdt_${Buffer.from(widened).toString('base64url')}.${signature}`;
  const key = await delegationKey(keel.store, undefined);
  const forged = new DelegatedTokens({
    key: Buffer.alloc(32, 7),
    audience: keel.delegated.audience,
    ttlMs: 60_000,
  }).mint(grant, Date.now()).token;
  const elsewhere = new DelegatedTokens({ key, audience: 'another-keel', ttlMs: 60_000 }).mint(
    grant,
    Date.now(),
  ).token;
  for (const [bad, code] of [
    [expired, 'delegated_token_expired'],
    [tampered, 'delegated_token_invalid'],
    [swapped, 'delegated_token_invalid'],
    [forged, 'delegated_token_invalid'],
    [elsewhere, 'delegated_token_audience'],
    ['kdt_not-a-token', 'delegated_token_invalid'],
  ] as const) {
    const res = await bearer(keel, bad, 'GET', `/v1/runs/${runId}`);
    assert.equal(res.status, 401, `${code}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.error.code, code);
  }

  // Its uses that change state are audited under the run and the tool call, refusals too.
  const created = await keel.request('GET', '/v1/audit?action=run.child_create');
  assert.equal(created.status, 200, JSON.stringify(created.body));
  // Newest first: the read-only token's refused attempt, then the tool's child.
  assert.deepEqual(
    created.body.entries.map((e: any) => [e.outcome, e.resource]),
    [
      ['delegated_forbidden', null],
      ['ok', `run:${result.child.id}`],
    ],
  );
  const entry = created.body.entries[1];
  // Named after the tool call the token was minted for (its execution id).
  assert.deepEqual(entry.actor, { type: 'delegated', id: runId, name: `${runId}.${step.seq}` });
  assert.equal(entry.resource, `run:${result.child.id}`);
  assert.equal(entry.runId, runId);
  assert.equal(entry.outcome, 'ok');
  const refused = await keel.request('GET', '/v1/audit?action=delegated.request');
  assert.deepEqual(refused.body.entries.map((e: any) => [e.data.route, e.outcome]).sort(), [
    [`POST /v1/runs/:id/cancel`, 'delegated_forbidden'],
    [`POST /v1/runs/:id/input`, 'delegated_forbidden'],
  ]);

  // The run ends: every token of it is refused from then on.
  assert.equal(
    (await keel.request('POST', `/v1/runs/${runId}/input`, { key: 'finish', value: 1 })).status,
    202,
  );
  await keel.waitForRun(runId, (r) => r.status === 'succeeded');
  for (const ended of [token, readOnly]) {
    const res = await bearer(keel, ended, 'GET', `/v1/runs/${runId}`);
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 'delegated_token_revoked');
  }

  // The token is in no row of the store: not in the journal, the events or the audit log.
  await keel.stop();
  for (const name of readdirSync(keel.dir)) {
    if (!name.startsWith('keel.db')) continue;
    const bytes = readFileSync(join(keel.dir, name));
    assert.equal(bytes.includes(token), false, `the token is in ${name}`);
    assert.equal(bytes.includes(signature), false, `the token's signature is in ${name}`);
  }
});
