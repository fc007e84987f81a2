// The tool policy and human approval through the real engine (SQLite store, orchestrator, HTTP
// API): a denied call comes back to the agent as a tool error and the run goes on; argument limits
// of the agent's policy apply under a permissive tenant (the stricter wins); an approval parks the
// run until a human approves or denies, or the request expires; a decided call replays to the same
// answer after a restart, whatever the policy says by then; denials are journaled, audited and
// counted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { hashApiKey } from '../src/api/auth.ts';
import { isKeelError } from '../src/domain/keel-error.ts';
import { defineAgent, defineLoopAgent, defineModel, defineTool } from '../src/index.ts';
import { telemetry } from '../src/telemetry/telemetry.ts';
import { startKeel, TERMINAL, type TestKeel } from './support/keel-server.ts';

const executed: string[] = [];

const pay = defineTool({
  name: 'pay',
  description: 'Pays an amount',
  input: z.object({ amount: z.number(), to: z.string() }),
  effect: 'side-effect',
  risk: 'high',
  run: ({ amount, to }) => {
    executed.push(`pay ${amount} ${to}`);
    return { paid: amount };
  },
});

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks something up',
  input: z.object({ q: z.string() }),
  effect: 'read',
  run: ({ q }) => {
    executed.push(`lookup ${q}`);
    return { found: q };
  },
});

/** Calls each tool in turn, and reports each answer or error code: the run never fails on them. */
const caller = (name: string, policy?: Parameters<typeof defineAgent>[0]['policy']) =>
  defineAgent({
    name,
    version: '1',
    tools: [pay, lookup],
    ...(policy === undefined ? {} : { policy }),
    async run(ctx, input: { calls: Array<{ tool: 'pay' | 'lookup'; args: any }>; wait?: boolean }) {
      const answers: unknown[] = [];
      for (const call of input.calls) {
        try {
          answers.push(
            call.tool === 'pay'
              ? await ctx.tool(pay, call.args)
              : await ctx.tool(lookup, call.args),
          );
        } catch (error) {
          answers.push({ code: isKeelError(error) ? error.code : String(error) });
        }
      }
      if (input.wait === true) await ctx.waitForInput('finish');
      return answers as never;
    },
  });

const plain = caller('plain');
const capped = caller('capped', {
  constraints: [{ tool: 'pay', path: 'amount', maximum: 100 }],
});

async function tenantIdOf(keel: TestKeel): Promise<string> {
  return (await keel.store.findTenantByKeyHash(hashApiKey(keel.apiKey)))!.id;
}

async function runTo(keel: TestKeel, agent: string, input: unknown, until = TERMINAL) {
  const created = await keel.request('POST', '/v1/runs', { agent, input });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return keel.waitForRun(created.body.id, (r) => until.has(r.status));
}

const counted = async (outcome: string): Promise<number> => {
  const metric = await telemetry.metrics.toolPolicyDecisions.get();
  return metric.values
    .filter((v) => v.labels.outcome === outcome)
    .reduce((sum, v) => sum + v.value, 0);
};

test('a denied call is a tool error with a stable code; the run goes on; journaled, audited, counted', async (t) => {
  const keel = await startKeel({ agents: [plain] });
  t.after(() => keel.close());
  const tenantId = await tenantIdOf(keel);
  await keel.store.putToolPolicy(tenantId, { deny: ['pay'] });
  executed.length = 0;
  const before = await counted('denied_by_policy');
  const run = await runTo(keel, 'plain', {
    calls: [
      { tool: 'pay', args: { amount: 5, to: 'bob' } },
      { tool: 'lookup', args: { q: 'x' } },
    ],
  });
  assert.equal(run.status, 'succeeded');
  assert.deepEqual(run.result, [{ code: 'tool_denied_by_policy' }, { found: 'x' }]);
  assert.deepEqual(executed, ['lookup x'], 'the denied tool never ran');
  const journal = await keel.store.loadJournal(run.id);
  assert.equal(journal[0]?.status, 'failed');
  assert.equal(journal[0]?.error?.code, 'tool_denied_by_policy');
  const audit = await keel.store.listAudit(tenantId, {
    action: 'tool.denied_by_policy',
    limit: 10,
  });
  assert.equal(audit.length, 1);
  assert.equal(audit[0]?.data.tool, 'pay');
  assert.equal(audit[0]?.runId, run.id);
  assert.equal((await counted('denied_by_policy')) - before, 1);
});

test('the agent’s argument limit applies under a tenant that allows everything (the stricter wins)', async (t) => {
  const keel = await startKeel({ agents: [capped] });
  t.after(() => keel.close());
  await keel.store.putToolPolicy(await tenantIdOf(keel), { allow: ['*'] });
  executed.length = 0;
  const run = await runTo(keel, 'capped', {
    calls: [
      { tool: 'pay', args: { amount: 500, to: 'bob' } },
      { tool: 'pay', args: { amount: 50, to: 'bob' } },
    ],
  });
  assert.deepEqual(run.result, [{ code: 'tool_denied_by_policy' }, { paid: 50 }]);
  assert.deepEqual(executed, ['pay 50 bob']);
  const steps = await keel.store.loadJournal(run.id);
  assert.match(steps[0]!.error!.message, /amount must be a number ≤ 100/);
});

async function parkedOnApproval(keel: TestKeel, input: unknown) {
  const created = await keel.request('POST', '/v1/runs', { agent: 'plain', input });
  const run = await keel.waitForRun(created.body.id, (r) => r.status === 'waiting');
  assert.equal(run.waitingReason, 'approval');
  const [pending] = await keel.store.listApprovals(await tenantIdOf(keel), {
    runId: run.id,
    status: 'pending',
    limit: 10,
  });
  assert.ok(pending, 'a pending request is filed');
  return { run, pending };
}

test('approval: the run parks; approved, the exact call runs once; denied by a human, a tool error', async (t) => {
  const keel = await startKeel({ agents: [plain] });
  t.after(() => keel.close());
  const tenantId = await tenantIdOf(keel);
  await keel.store.putToolPolicy(tenantId, {
    constraints: [{ tool: 'pay', path: 'amount', maximum: 100, approval: 'required' }],
  });
  executed.length = 0;
  const input = (amount: number) => ({ calls: [{ tool: 'pay', args: { amount, to: 'ann' } }] });
  const first = await parkedOnApproval(keel, input(250));
  assert.equal(first.pending.tool, 'pay');
  assert.deepEqual(first.pending.args, { amount: 250, to: 'ann' });
  assert.equal(first.pending.rule, 'constraints.0');
  assert.deepEqual(executed, [], 'nothing runs before the decision');
  await keel.store.decideApproval(first.run.id, first.pending.executionId, {
    decision: 'approve',
    decidedBy: 'key_test',
    note: 'ok',
  });
  const approved = await keel.waitForRun(first.run.id, (r) => TERMINAL.has(r.status));
  assert.deepEqual(approved.result, [{ paid: 250 }]);
  assert.deepEqual(executed, ['pay 250 ann']);

  const second = await parkedOnApproval(keel, input(900));
  await keel.store.decideApproval(second.run.id, second.pending.executionId, {
    decision: 'deny',
    decidedBy: 'key_test',
    note: 'too much',
  });
  const denied = await keel.waitForRun(second.run.id, (r) => TERMINAL.has(r.status));
  assert.equal(denied.status, 'succeeded', 'the run goes on after a human denial');
  assert.deepEqual(denied.result, [{ code: 'tool_denied_by_approver' }]);
  assert.deepEqual(executed, ['pay 250 ann'], 'the denied call never ran');
  const journal = await keel.store.loadJournal(second.run.id);
  assert.match(journal[0]!.error!.message, /too much/);
});

test('expiry: an undecided request resolves as denied (approval_expired) when its time passes', async (t) => {
  const keel = await startKeel({ agents: [plain] });
  t.after(() => keel.close());
  const tenantId = await tenantIdOf(keel);
  await keel.store.putToolPolicy(tenantId, {
    approval: { tools: ['pay'], expiresAfterMs: 1_000 },
  });
  executed.length = 0;
  const before = await counted('approval_expired');
  const { run, pending } = await parkedOnApproval(keel, {
    calls: [{ tool: 'pay', args: { amount: 1, to: 'cy' } }],
  });
  const ended = await keel.waitForRun(run.id, (r) => TERMINAL.has(r.status), 15_000);
  assert.deepEqual(ended.result, [{ code: 'approval_expired' }]);
  assert.deepEqual(executed, []);
  assert.equal((await keel.store.getApproval(run.id, pending.executionId))?.status, 'expired');
  assert.equal((await counted('approval_expired')) - before, 1);
  const audit = await keel.store.listAudit(tenantId, { action: 'approval.expired', limit: 10 });
  assert.equal(audit.length, 1);
});

test('a decided approval replays to the same answer after a restart, whatever the policy says then', async (t) => {
  let keel = await startKeel({ agents: [plain] });
  const dir = keel.dir;
  t.after(async () => {
    await keel.stop();
  });
  const tenantId = await tenantIdOf(keel);
  await keel.store.putToolPolicy(tenantId, { approval: { tools: ['pay', 'lookup'] } });
  executed.length = 0;
  const { run, pending } = await parkedOnApproval(keel, {
    calls: [
      { tool: 'pay', args: { amount: 7, to: 'di' } },
      { tool: 'lookup', args: { q: 'z' } },
    ],
    wait: true,
  });
  await keel.store.decideApproval(run.id, pending.executionId, {
    decision: 'approve',
    decidedBy: 'key_test',
    note: null,
  });
  const second = await keel.waitForRun(
    run.id,
    (r) =>
      r.status === 'waiting' && r.waitingReason === 'approval' && r.stateVersion > run.stateVersion,
  );
  const [lookupRequest] = await keel.store.listApprovals(tenantId, {
    runId: run.id,
    status: 'pending',
    limit: 1,
  });
  assert.equal(lookupRequest?.tool, 'lookup');
  await keel.store.decideApproval(second.id, lookupRequest!.executionId, {
    decision: 'deny',
    decidedBy: 'key_test',
    note: 'no',
  });
  await keel.waitForRun(run.id, (r) => r.status === 'waiting' && r.waitingReason === 'input');
  assert.deepEqual(executed, ['pay 7 di']);
  await keel.stop();

  // Restarted on the same data, with a policy that now denies pay and allows lookup outright: the
  // replay answers from the journal, as before.
  keel = await startKeel({ agents: [plain], dir });
  await keel.store.putToolPolicy(tenantId, { deny: ['pay'] });
  assert.equal(
    (await keel.request('POST', `/v1/runs/${run.id}/input`, { key: 'finish', value: 1 })).status,
    202,
  );
  const ended = await keel.waitForRun(run.id, (r) => TERMINAL.has(r.status));
  assert.equal(ended.status, 'succeeded');
  assert.deepEqual(ended.result, [{ paid: 7 }, { code: 'tool_denied_by_approver' }]);
  assert.deepEqual(executed, ['pay 7 di'], 'the approved side effect ran once in all');
});

test('a loop agent’s model gets the denial as the tool’s result and answers; the allowed call runs', async (t) => {
  const scripted = defineModel({
    name: 'scripted-policy',
    provider: 'mock',
    options: {
      script: [
        {
          toolCalls: [
            { name: 'pay', args: { amount: 5, to: 'eve' } },
            { name: 'lookup', args: { q: 'rates' } },
          ],
        },
        { text: 'paying is not allowed; here are the rates' },
      ],
    },
  });
  const loop = defineLoopAgent({
    name: 'loop-policy',
    version: '1',
    model: 'scripted-policy',
    system: 'help',
    tools: [pay, lookup],
    policy: { maxRisk: 'medium' },
    maxSteps: 4,
  });
  const keel = await startKeel({ agents: [loop], models: [scripted] });
  t.after(() => keel.close());
  executed.length = 0;
  const run = await runTo(keel, 'loop-policy', 'pay eve and look up rates');
  assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
  assert.equal(run.result.text, 'paying is not allowed; here are the rates');
  assert.deepEqual(
    executed,
    ['lookup rates'],
    'the high-risk pay was denied by the agent’s policy',
  );
  const journal = await keel.store.loadJournal(run.id);
  const secondModelCall = journal.filter((e) => e.kind === 'model')[1];
  assert.match(
    JSON.stringify(secondModelCall?.args),
    /tool_denied_by_policy.*pay is high risk, above medium/,
    'the model saw the denial as the tool’s result',
  );
});

test('a parked call stays bound to its request when the policy relaxes; a policy that now denies wins over an approval', async (t) => {
  const keel = await startKeel({ agents: [plain] });
  t.after(() => keel.close());
  const tenantId = await tenantIdOf(keel);
  await keel.store.putToolPolicy(tenantId, { approval: { tools: ['pay'] } });
  executed.length = 0;
  const call = (to: string) => ({ calls: [{ tool: 'pay', args: { amount: 3, to } }] });
  const relaxed = await parkedOnApproval(keel, call('fay'));
  const tightened = await parkedOnApproval(keel, call('gus'));

  // Relaxed to allow everything: the human's denial of the parked call still stands.
  await keel.store.putToolPolicy(tenantId, {});
  await keel.store.decideApproval(relaxed.run.id, relaxed.pending.executionId, {
    decision: 'deny',
    decidedBy: 'key_test',
    note: null,
  });
  const first = await keel.waitForRun(relaxed.run.id, (r) => TERMINAL.has(r.status));
  assert.deepEqual(first.result, [{ code: 'tool_denied_by_approver' }]);

  // Tightened to deny pay: an approval given since does not let the call through.
  await keel.store.putToolPolicy(tenantId, { deny: ['pay'] });
  await keel.store.decideApproval(tightened.run.id, tightened.pending.executionId, {
    decision: 'approve',
    decidedBy: 'key_test',
    note: null,
  });
  const second = await keel.waitForRun(tightened.run.id, (r) => TERMINAL.has(r.status));
  assert.deepEqual(second.result, [{ code: 'tool_denied_by_policy' }]);
  assert.deepEqual(executed, [], 'neither call ran');
});
