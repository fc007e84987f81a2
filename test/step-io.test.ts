// Step inputs and outputs over real HTTP (real SQLite, the mock model provider, a real sandbox when
// the namespace tier works here): the shape per effect kind (step, model, tool, exec), previews of
// large values with the whole one at /steps/:seq, ?io=false, and the tenant's redaction policy —
// per field name and per tool path, in steps and in the run itself — while the journal keeps every
// value for replay. Then the same through `keel runs steps|show --io` and `keel tenants update
// --redact` against the test server, and the API over Postgres.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, test } from 'node:test';
import pg from 'pg';
import { z } from 'zod';
import { generateApiKey, hashApiKey } from '../src/api/auth.ts';
import { buildApi } from '../src/api/server.ts';
import { STEP_IO_PREVIEW_MAX_BYTES } from '../src/api/step-io.ts';
import { runRunsCommand } from '../src/cli/client/runs-command.ts';
import { runTenantsCommand } from '../src/cli/client/tenants-command.ts';
import { defineAgent, defineModel, defineTool } from '../src/index.ts';
import { Orchestrator } from '../src/engine/orchestrator.ts';
import { AgentRegistry } from '../src/engine/registry.ts';
import { ModelGateway } from '../src/models/gateway.ts';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { defineSandboxProfile } from '../src/sandbox/profile.ts';
import { sandboxTools } from '../src/tools/sandbox-tools.ts';
import { startKeel, TERMINAL, type TestKeel } from './support/keel-server.ts';
import { captureCli } from './support/cli-capture.ts';
import { postgresAvailable, TEST_DATABASE_URL } from './support/postgres.ts';
import { newManager, skipUnless } from './support/sandbox.ts';

const EXEC_SKIP = skipUnless('namespace');
const sandbox = newManager();
after(() => sandbox.cleanup());
const shell = sandboxTools({
  manager: sandbox.manager,
  profile: defineSandboxProfile({ name: 'step-io', tier: 'namespace', policy: 'one-shot' }),
});

const sendEmail = defineTool({
  name: 'send_email',
  description: 'Sends an email',
  effect: 'idempotent',
  input: z.object({ to: z.string(), body: z.string() }),
  run: (args) => ({ sent: true, to: args.to, token: 'tok-123' }),
});
const big = defineTool({
  name: 'big',
  description: 'Returns a large value',
  effect: 'read',
  input: z.object({ n: z.number().int() }),
  run: ({ n }) => ({
    blob: 'x'.repeat(n),
    lines: Array.from({ length: 200 }, (_, i) => `line ${i}`),
  }),
});
const scripted = defineModel({
  name: 'scripted',
  provider: 'mock',
  options: {
    script: [
      { toolCalls: [{ name: 'send_email', args: { to: 'bob@example.com', body: 'the plan' } }] },
    ],
  },
});

const inspect = defineAgent({
  name: 'inspect',
  version: '1',
  async run(ctx, input: { password: string; exec?: boolean }) {
    const prepared = await ctx.step('prepare', () => ({ password: input.password, subject: 'hi' }));
    const reply = await ctx.model({
      model: 'scripted',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: `write to bob about ${prepared.subject}` },
      ],
      tools: [sendEmail],
      temperature: 0,
    });
    const sent = await ctx.tool(sendEmail, reply.toolCalls[0]!.args as never);
    await ctx.tool(big, { n: 20_000 });
    if (input.exec)
      await ctx.tool(shell.exec, { argv: ['/bin/sh', '-c', 'echo out; echo err >&2; exit 3'] });
    return { sent, password: input.password };
  },
});

async function finishedRun(keel: TestKeel, input: unknown, key?: string) {
  const created = await keel.request('POST', '/v1/runs', { agent: 'inspect', input }, key);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  const deadline = Date.now() + 20_000;
  for (;;) {
    const run = (await keel.request('GET', `/v1/runs/${id}`, undefined, key)).body;
    if (TERMINAL.has(run.status)) {
      assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
      return run;
    }
    assert.ok(Date.now() < deadline, `run ${id} did not finish: ${run.status}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function startInspect(t: { after(fn: () => Promise<void>): void }) {
  const keel = await startKeel({ agents: [inspect], gateway: new ModelGateway([scripted]) });
  t.after(() => keel.close());
  return keel;
}

test('steps show what each effect received and returned; large values are previews, whole at /steps/:seq', async (t) => {
  const keel = await startInspect(t);
  const run = await finishedRun(keel, { password: 'hunter2' });
  const { status, body } = await keel.request('GET', `/v1/runs/${run.id}/steps`);
  assert.equal(status, 200);
  const [prepare, model, tool, large] = body.steps;

  assert.equal(prepare.kind, 'step');
  assert.equal('input' in prepare, false, 'a step receives nothing');
  assert.deepEqual(prepare.output, { password: 'hunter2', subject: 'hi' });
  assert.deepEqual([prepare.inputTruncated, prepare.outputTruncated], [false, false]);

  assert.equal(model.kind, 'model');
  assert.deepEqual(model.input, {
    model: 'scripted',
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'write to bob about hi' },
    ],
    tools: ['send_email'],
    temperature: 0,
  });
  assert.equal(model.output.content, '');
  assert.deepEqual(model.output.toolCalls, [
    { id: 'call_0_0', name: 'send_email', args: { to: 'bob@example.com', body: 'the plan' } },
  ]);
  assert.equal(typeof model.output.usage.inputTokens, 'number');
  assert.match(model.output.model, /^scripted/);

  assert.deepEqual([tool.kind, tool.name], ['tool', 'send_email']);
  assert.deepEqual(tool.input, { to: 'bob@example.com', body: 'the plan' });
  assert.deepEqual(tool.output, { sent: true, to: 'bob@example.com', token: 'tok-123' });

  assert.equal(large.name, 'big');
  assert.deepEqual([large.inputTruncated, large.outputTruncated], [false, true]);
  assert.ok(Buffer.byteLength(JSON.stringify(large.output)) <= STEP_IO_PREVIEW_MAX_BYTES);
  assert.match(large.output.blob, /^x+…\[\d+ more chars\]$/);
  const whole = await keel.request('GET', `/v1/runs/${run.id}/steps/${large.seq}`);
  assert.equal(whole.status, 200);
  assert.equal(whole.body.step.output.blob.length, 20_000);
  assert.equal(whole.body.step.output.lines.length, 200);
  assert.equal(whole.body.step.outputTruncated, false);
  assert.equal(whole.body.step.seq, large.seq);

  const light = await keel.request('GET', `/v1/runs/${run.id}/steps?io=false`);
  assert.equal(light.status, 200);
  assert.equal(light.body.steps.length, body.steps.length);
  for (const step of light.body.steps)
    for (const field of ['input', 'output', 'inputTruncated', 'outputTruncated'])
      assert.equal(field in step, false, `${field} with io=false`);

  const missing = await keel.request('GET', `/v1/runs/${run.id}/steps/99`);
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error.code, 'step_not_found');
  const bad = await keel.request('GET', `/v1/runs/${run.id}/steps/first`);
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, 'validation_failed');
  const noRun = await keel.request('GET', '/v1/runs/run_missing/steps/1');
  assert.equal(noRun.status, 404);
  assert.equal(noRun.body.error.code, 'run_not_found');
});

test('exec steps show exit code, stdout and stderr', { skip: EXEC_SKIP }, async (t) => {
  const keel = await startInspect(t);
  const run = await finishedRun(keel, { password: 'p', exec: true });
  const { body } = await keel.request('GET', `/v1/runs/${run.id}/steps`);
  const exec = body.steps.find((s: { name: string }) => s.name === 'exec');
  assert.deepEqual(exec.input, { argv: ['/bin/sh', '-c', 'echo out; echo err >&2; exit 3'] });
  assert.equal(exec.output.exitCode, 3);
  assert.equal(exec.output.stdout, 'out\n');
  assert.equal(exec.output.stderr, 'err\n');
  await sandbox.manager.endRun(run.id);
});

test('redaction: per tenant, by field name and by tool path, in steps and runs; the journal keeps the values', async (t) => {
  const keel = await startInspect(t);
  const tenants = (await keel.request('GET', '/v1/admin/tenants', undefined, keel.adminKey)).body
    .tenants;
  const tenant = tenants.find((x: { name: string }) => x.name === 'test');
  assert.deepEqual(tenant.redact, { fields: [], tools: {} });
  const policy = { fields: ['PASSWORD'], tools: { send_email: ['input.body', 'output.token'] } };
  const patched = await keel.request(
    'PATCH',
    `/v1/admin/tenants/${tenant.id}`,
    { redact: policy },
    keel.adminKey,
  );
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  assert.deepEqual(patched.body.tenant.redact, policy);
  const refused = await keel.request(
    'PATCH',
    `/v1/admin/tenants/${tenant.id}`,
    { redact: { tools: { send_email: ['body'] } } },
    keel.adminKey,
  );
  assert.equal(refused.status, 400);
  assert.equal(refused.body.error.code, 'validation_failed');

  const other = await keel.request('POST', '/v1/admin/tenants', { name: 'open' }, keel.adminKey);
  assert.equal(other.status, 201);

  const run = await finishedRun(keel, { password: 'hunter2' });
  assert.deepEqual(run.input, { password: '[redacted]' });
  assert.equal(run.result.password, '[redacted]');
  assert.equal(run.result.sent.token, 'tok-123', 'tool paths apply to tool steps, not the run');
  const listed = (await keel.request('GET', '/v1/runs')).body.runs[0];
  assert.deepEqual(listed.input, { password: '[redacted]' });

  const { body } = await keel.request('GET', `/v1/runs/${run.id}/steps`);
  const [prepare, , tool] = body.steps;
  assert.deepEqual(prepare.output, { password: '[redacted]', subject: 'hi' });
  assert.deepEqual(tool.input, { to: 'bob@example.com', body: '[redacted]' });
  assert.deepEqual(tool.output, { sent: true, to: 'bob@example.com', token: '[redacted]' });
  const model = body.steps[1];
  assert.deepEqual(
    model.output.toolCalls[0].args,
    { to: 'bob@example.com', body: '[redacted]' },
    'the tool rule also covers the model’s call of the tool',
  );
  const one = await keel.request('GET', `/v1/runs/${run.id}/steps/${tool.seq}`);
  assert.deepEqual(one.body.step.input, { to: 'bob@example.com', body: '[redacted]' });

  // The run's events carry its result: redacted there too, listed or streamed.
  const events = await keel.request('GET', `/v1/runs/${run.id}/events?format=json`);
  const ended = events.body.find((e: { type: string }) => e.type === 'run.succeeded');
  assert.equal(ended.data.result.password, '[redacted]');
  const stream = await fetch(`${keel.url}/v1/runs/${run.id}/events`, {
    headers: { authorization: `Bearer ${keel.apiKey}` },
  });
  const sse = await stream.text();
  assert.match(sse, /event: run.succeeded\n/);
  assert.equal(sse.includes('hunter2'), false);

  // The journal, which replay reads, is untouched.
  const journal = await keel.store.loadJournal(run.id);
  assert.deepEqual(journal[0]?.result, { password: 'hunter2', subject: 'hi' });
  assert.deepEqual(journal[2]?.args, { to: 'bob@example.com', body: 'the plan' });

  // Another tenant's policy is its own: nothing redacted there.
  const theirs = await finishedRun(keel, { password: 'open-sesame' }, other.body.apiKey);
  assert.deepEqual(theirs.input, { password: 'open-sesame' });
  const theirSteps = (
    await keel.request('GET', `/v1/runs/${theirs.id}/steps`, undefined, other.body.apiKey)
  ).body.steps;
  assert.equal(theirSteps[2].input.body, 'the plan');
  const leak = await keel.request(
    'GET',
    `/v1/runs/${run.id}/steps/1`,
    undefined,
    other.body.apiKey,
  );
  assert.equal(leak.status, 404);
  assert.equal(leak.body.error.code, 'run_not_found');
});

test('keel runs steps and show --io print inputs and outputs; keel tenants update --redact sets the policy', async (t) => {
  const keel = await startInspect(t);
  const env = { KEEL_URL: keel.url, KEEL_API_KEY: keel.apiKey, KEEL_ADMIN_KEY: keel.adminKey };
  const runs = (...argv: string[]) => captureCli(runRunsCommand, env, argv);
  const run = await finishedRun(keel, { password: 'hunter2', exec: EXEC_SKIP === undefined });

  const table = await runs('steps', run.id);
  assert.equal(table.code, 0, table.err);
  const lines = table.out.split('\n');
  assert.match(
    lines[0]!,
    /^SEQ\s+KIND\s+NAME\s+STATUS\s+ATTEMPTS\s+AT\s+QUEUED\s+RAN\s+INPUT → OUTPUT$/,
  );
  assert.match(table.out, /prepare\s+succeeded.*→ \{"password":"hunter2","subject":"hi"\}/);
  assert.match(table.out, /scripted\s+succeeded.*user: write to bob about hi → send_email\(\)/);
  assert.match(
    table.out,
    /send_email\s+succeeded.*\{"to":"bob@example.com","body":"the plan"\} → \{"sent":true,/,
  );
  if (EXEC_SKIP === undefined) assert.match(table.out, /exec\s+succeeded.*→ exit 3 "out\\nerr\\n"/);

  const json = await runs('steps', run.id, '--json');
  assert.equal(json.code, 0, json.err);
  const steps = JSON.parse(json.out).steps;
  assert.equal(steps[3].outputTruncated, true);

  const full = await runs('show', run.id, '--io');
  assert.equal(full.code, 0, full.err);
  assert.match(full.out, /^id:\s+run_/);
  assert.match(full.out, /#3 tool send_email {2}succeeded/);
  assert.match(
    full.out,
    / {2}input:\n {4}\{\n {6}"to": "bob@example.com",\n {6}"body": "the plan"\n {4}\}/,
  );
  assert.ok(
    full.out.includes(`"blob": "${'x'.repeat(20_000)}"`),
    'a truncated step is printed whole',
  );
  assert.match(full.out, /"role": "system",\n\s+"content": "be brief"/);
  if (EXEC_SKIP === undefined) {
    assert.match(full.out, /exit code: 3\n {2}stdout:\n {4}\| out\n {2}stderr:\n {4}\| err\n/);
    await sandbox.manager.endRun(run.id);
  }
  const plain = await runs('show', run.id);
  assert.equal(plain.code, 0, plain.err);
  assert.match(plain.out, /INPUT → OUTPUT/);
  assert.equal(plain.out.includes('x'.repeat(20_000)), false);

  const tenantId = (
    await keel.request('GET', '/v1/admin/tenants', undefined, keel.adminKey)
  ).body.tenants.find((x: { name: string }) => x.name === 'test').id;
  const policy = '{"fields":["password"],"tools":{"send_email":["input.body"]}}';
  const updated = await captureCli(runTenantsCommand, env, [
    'update',
    tenantId,
    '--redact',
    policy,
  ]);
  assert.equal(updated.code, 0, updated.err);
  assert.match(updated.out, /redact\s+fields=password; send_email=input.body/);
  const redacted = await runs('show', run.id, '--io');
  assert.equal(redacted.out.includes('hunter2'), false, redacted.out);
  assert.equal(redacted.out.includes('the plan'), false, 'nor in the model’s call of the tool');
  assert.match(redacted.out, /"body": "\[redacted\]"/);
  const badPolicy = await captureCli(runTenantsCommand, env, [
    'update',
    tenantId,
    '--redact',
    '{"tools":{"x":["body"]}}',
  ]);
  assert.equal(badPolicy.code, 1);
  assert.match(badPolicy.err, /validation_failed/);
  const cleared = await captureCli(runTenantsCommand, env, [
    'update',
    tenantId,
    '--redact',
    'none',
  ]);
  assert.match(cleared.out, /redact\s+none/);
});

test('Postgres: steps with inputs and outputs, the whole step, and the tenant’s redaction, over HTTP', {
  skip: !(await postgresAvailable()),
}, async (t) => {
  const schema = `keel_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const store = new PostgresStore({ connectionString: TEST_DATABASE_URL, schema, poolSize: 4 });
  await store.migrate();
  const registry = new AgentRegistry();
  registry.register(inspect);
  const orchestrator = new Orchestrator({
    store,
    registry,
    gateway: new ModelGateway([scripted]),
    pollIntervalMs: 50,
  });
  const apiKey = generateApiKey();
  await store.createTenant('pg-redact', hashApiKey(apiKey), {
    redact: { fields: ['password'], tools: { send_email: ['input.body'] } },
  });
  orchestrator.start();
  const app = await buildApi({ store, registry, stepPreviewMaxBytes: 1024 });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(async () => {
    await app.close();
    await orchestrator.stop();
    await store.close();
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  });
  const get = async (path: string) => {
    const res = await fetch(url + path, { headers: { authorization: `Bearer ${apiKey}` } });
    return { status: res.status, body: (await res.json()) as any };
  };
  const created = await fetch(`${url}/v1/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agent: 'inspect', input: { password: 'hunter2' } }),
  });
  const id = ((await created.json()) as { id: string }).id;
  const deadline = Date.now() + 20_000;
  while (!TERMINAL.has((await get(`/v1/runs/${id}`)).body.status)) {
    assert.ok(Date.now() < deadline, 'the run did not finish');
    await new Promise((r) => setTimeout(r, 50));
  }
  const run = (await get(`/v1/runs/${id}`)).body;
  assert.equal(run.status, 'succeeded');
  assert.deepEqual(run.input, { password: '[redacted]' });
  const steps = (await get(`/v1/runs/${id}/steps`)).body.steps;
  assert.deepEqual(steps[0].output, { password: '[redacted]', subject: 'hi' });
  assert.deepEqual(steps[1].input.messages[1], { role: 'user', content: 'write to bob about hi' });
  assert.deepEqual(steps[2].input, { to: 'bob@example.com', body: '[redacted]' });
  assert.equal(steps[3].outputTruncated, true);
  assert.ok(
    Buffer.byteLength(JSON.stringify(steps[3].output)) <= 1024,
    'the configured limit holds',
  );
  assert.equal(steps[1].inputTruncated, false);
  const whole = await get(`/v1/runs/${id}/steps/4`);
  assert.equal(whole.body.step.output.blob.length, 20_000);
  const missing = await get(`/v1/runs/${id}/steps/40`);
  assert.equal(missing.body.error.code, 'step_not_found');
});
