// The SDK adapters' example agents on a real `keel dev` process (agent code in isolates, SQLite
// file, real HTTP) against a fake OpenAI-compatible provider (a real HTTP server): Keel is killed
// with SIGKILL while a model call is in flight, after earlier model calls and the side-effect tool
// completed, and restarted on the same data. The provider must receive each completed call exactly
// once, the side effect must have happened once (a ledger outside Keel), and the run must succeed
// with the right answer — for the Vercel AI SDK (`generateText` with tools) and for the OpenAI
// Agents SDK (a tool, a handoff to another agent, its tool). The AI SDK's streamText example then
// runs in the restarted process.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startFakeOpenAi, type FakeProviderServer } from './support/fake-openai-server.ts';
import type { FakeBehaviour } from './support/fake-provider-core.ts';
import { keelScene, type KeelScene } from './support/keel-scene.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const AGENTS = join(ROOT, 'test/fixtures/adapter-agents.ts');
const API_KEY = 'adapters-dev-key-0123456789';
const DEADLINE_MS = 60_000;
/** Both SDKs load in the main thread and in every isolate: slow on a busy machine. */
const STARTUP_TIMEOUT_MS = 90_000;
// The examples import `keel/ai-sdk` and `keel/openai-agents` by name: the package's build.
const BUILT =
  existsSync(join(ROOT, 'dist/adapters/ai-sdk/index.js')) &&
  existsSync(join(ROOT, 'dist/adapters/openai-agents/index.js'));
const skip = BUILT || process.env.CI === 'true' ? false : 'dist/ is not built (npm run build)';

type Reply = Extract<FakeBehaviour, { kind: 'reply' }>;

interface Script {
  /** The model's turns, by the number of assistant messages in the conversation so far. */
  turns: Reply[];
  /** The turn whose first request is held open until Keel is killed. */
  holdTurn: number;
}

const assistantTurns = (body: any): number =>
  (body.messages as any[]).filter((m) => m.role === 'assistant').length;

/** A fake provider playing `script`, holding the first request of `holdTurn` unanswered. */
async function fakeProvider(t: TestContext, script: Script): Promise<FakeProviderServer> {
  let held = false;
  const fake = await startFakeOpenAi((body) => {
    const turn = assistantTurns(body);
    if (turn === script.holdTurn && !held) {
      held = true;
      return { kind: 'hang' };
    }
    return script.turns[turn] ?? { kind: 'status', status: 400, message: `no turn ${turn}` };
  });
  t.after(() => fake.close());
  return fake;
}

interface Scene extends KeelScene {
  outbox: string;
}

async function scene(t: TestContext, fake: FakeProviderServer): Promise<Scene> {
  const model = (name: string) => ({
    name,
    provider: 'openai',
    providerModel: 'gpt-test',
    baseUrl: `${fake.url}/v1`,
    apiKeyEnv: 'TEST_PROVIDER_KEY',
  });
  const s = await keelScene(t, {
    agents: AGENTS,
    apiKey: API_KEY,
    prefix: 'keel-adapters-',
    startupTimeoutMs: STARTUP_TIMEOUT_MS,
    env: (dir) => {
      const modelsFile = join(dir, 'keel.models.json');
      if (!existsSync(modelsFile))
        writeFileSync(
          modelsFile,
          JSON.stringify({ models: [model('assistant'), model('desk-model')] }),
        );
      return {
        KEEL_MODELS_FILE: modelsFile,
        TEST_PROVIDER_KEY: 'sk-test-0123456789',
        EXAMPLE_OUTBOX: join(dir, 'outbox.jsonl'),
      };
    },
  });
  return Object.assign(s, { outbox: join(s.dir, 'outbox.jsonl') });
}

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
): Promise<T> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const sent = (s: Scene): string[] =>
  existsSync(s.outbox) ? readFileSync(s.outbox, 'utf8').split('\n').filter(Boolean) : [];

/**
 * Starts Keel, submits a run of `agent`, kills Keel once the held model call is in flight,
 * restarts it and waits for the run to end; answers the ended run.
 */
async function crashMidLoop(s: Scene, fake: FakeProviderServer, agent: string, script: Script) {
  const keel = await s.start();
  const created = (await s.api('POST', '/v1/runs', { agent, input: { prompt: 'go' } })).body;
  assert.ok(created.id, JSON.stringify(created));
  await until('the held model call', () =>
    fake.requests.some((r) => assistantTurns(r.body) === script.holdTurn) && fake.open > 0
      ? true
      : undefined,
  );
  const before = fake.requests.length;
  const sentBefore = sent(s);
  await keel.kill('SIGKILL');
  assert.equal(keel.child.signalCode, 'SIGKILL');
  await s.start();
  const run = await until('the run to end', async () => {
    const r = (await s.api('GET', `/v1/runs/${created.id}`)).body;
    return ['succeeded', 'failed', 'cancelled'].includes(r.status) ? r : undefined;
  });
  return { run, before, sentBefore, id: created.id as string };
}

/** Each distinct conversation the provider was asked about, with how often it was asked. */
function callsByConversation(fake: FakeProviderServer): Map<number, number> {
  const counts = new Map<number, number>();
  for (const r of fake.requests) {
    const turn = assistantTurns(r.body);
    counts.set(turn, (counts.get(turn) ?? 0) + 1);
  }
  return counts;
}

test('Vercel AI SDK: a generateText loop killed mid-loop resumes without re-sending completed model calls or re-running the email', {
  skip,
  timeout: 300_000,
}, async (t) => {
  const script: Script = {
    turns: [
      { kind: 'reply', toolCalls: [{ name: 'get_weather', args: { city: 'Paris' } }] },
      {
        kind: 'reply',
        toolCalls: [
          { name: 'send_email', args: { to: 'ada@example.com', subject: 'Paris', body: 'Sunny.' } },
        ],
      },
      { kind: 'reply', text: 'Sent: Paris is sunny.' },
    ],
    holdTurn: 2,
  };
  const fake = await fakeProvider(t, script);
  const s = await scene(t, fake);
  const { run, before, sentBefore, id } = await crashMidLoop(s, fake, 'weather-mailer', script);

  assert.equal(
    before,
    3,
    'two completed model calls and the held one reached the provider before the kill',
  );
  assert.equal(sentBefore.length, 1, 'the email was sent before the kill');
  assert.equal(run.status, 'succeeded', JSON.stringify(run));
  assert.deepEqual(run.result, { text: 'Sent: Paris is sunny.', steps: 3 });
  assert.deepEqual(
    [...callsByConversation(fake)],
    [
      [0, 1],
      [1, 1],
      [2, 2],
    ],
    'each completed call reached the provider once; only the call in flight at the kill was sent again',
  );
  assert.equal(sent(s).length, 1, 'the side-effect tool ran once');
  assert.deepEqual(JSON.parse(sent(s)[0]!).to, 'ada@example.com');
  // What the AI SDK sent through Keel: its system prompt, the tools' JSON Schemas, the tool
  // results (from the journal, after the restart) in the conversation.
  const last = fake.requests.at(-1)!.body;
  assert.equal(last.messages[0].role, 'system');
  assert.deepEqual(last.tools.map((tool: any) => tool.function.name).sort(), [
    'get_weather',
    'send_email',
  ]);
  const toolResults = last.messages
    .filter((m: any) => m.role === 'tool')
    .map((m: any) => JSON.parse(m.content));
  assert.deepEqual(toolResults[0], { city: 'Paris', sky: 'sunny', celsius: 21 });
  assert.equal(toolResults[1].sent, true);
  const steps = (await s.api('GET', `/v1/runs/${id}/steps`)).body.steps as any[];
  assert.deepEqual(
    steps.map((step) => `${step.kind}:${step.name}`),
    [
      'model:assistant',
      'tool:get_weather',
      'model:assistant',
      'tool:send_email',
      'model:assistant',
    ],
  );
  // The same loop with streamText, in the restarted process's isolate: the model's stream parts
  // come from each completed call.
  const streamed = (
    await s.api('POST', '/v1/runs', {
      agent: 'weather-mailer-streaming',
      input: { prompt: 'go' },
    })
  ).body;
  const streamedRun = await until('the streamed run to end', async () => {
    const r = (await s.api('GET', `/v1/runs/${streamed.id}`)).body;
    return ['succeeded', 'failed', 'cancelled'].includes(r.status) ? r : undefined;
  });
  assert.equal(streamedRun.status, 'succeeded', JSON.stringify(streamedRun));
  assert.deepEqual(streamedRun.result, { text: 'Sent: Paris is sunny.', steps: 3 });
  assert.equal(sent(s).length, 2, 'its email was sent once');
});

test('OpenAI Agents SDK: a run with a handoff killed mid-loop resumes without re-sending completed model calls or re-running the email', {
  skip,
  timeout: 300_000,
}, async (t) => {
  const script: Script = {
    turns: [
      { kind: 'reply', toolCalls: [{ name: 'lookup_forecast', args: { city: 'Oslo' } }] },
      { kind: 'reply', toolCalls: [{ name: 'transfer_to_Mailer', args: {} }] },
      {
        kind: 'reply',
        toolCalls: [
          { name: 'email_forecast', args: { to: 'ada@example.com', text: 'Oslo: snow.' } },
        ],
      },
      { kind: 'reply', text: 'Emailed the Oslo forecast.' },
    ],
    holdTurn: 3,
  };
  const fake = await fakeProvider(t, script);
  const s = await scene(t, fake);
  const { run, before, sentBefore, id } = await crashMidLoop(s, fake, 'forecast-desk', script);

  assert.equal(
    before,
    4,
    'three completed model calls and the held one reached the provider before the kill',
  );
  assert.equal(sentBefore.length, 1, 'the email was sent before the kill');
  assert.equal(run.status, 'succeeded', JSON.stringify(run));
  assert.deepEqual(run.result, { answer: 'Emailed the Oslo forecast.', agent: 'Mailer' });
  assert.deepEqual(
    [...callsByConversation(fake)],
    [
      [0, 1],
      [1, 1],
      [2, 1],
      [3, 2],
    ],
    'each completed call reached the provider once; only the call in flight at the kill was sent again',
  );
  assert.equal(sent(s).length, 1, 'the side-effect tool ran once');
  // The handoff: the first two calls are the Forecaster's (its tool and the transfer offered), the
  // last two the Mailer's, resumed after the restart.
  const systemOf = (body: any) => body.messages.find((m: any) => m.role === 'system')?.content;
  const toolsOf = (body: any) => (body.tools ?? []).map((tool: any) => tool.function.name).sort();
  const [first, , third] = fake.requests;
  assert.match(systemOf(first!.body), /look up the forecast/);
  assert.deepEqual(toolsOf(first!.body), ['lookup_forecast', 'transfer_to_Mailer']);
  assert.match(systemOf(third!.body), /email the forecast/);
  assert.deepEqual(toolsOf(third!.body), ['email_forecast']);
  const last = fake.requests.at(-1)!.body;
  assert.match(systemOf(last), /email the forecast/);
  const steps = (await s.api('GET', `/v1/runs/${id}/steps`)).body.steps as any[];
  assert.deepEqual(
    steps.map((step) => `${step.kind}:${step.name}`),
    [
      'model:desk-model',
      'tool:lookup_forecast',
      'model:desk-model',
      'model:desk-model',
      'tool:email_forecast',
      'model:desk-model',
    ],
  );
});
