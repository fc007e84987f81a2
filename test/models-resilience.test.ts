// Done-when (resilience), through the official SDKs against real HTTP fake provider servers:
// Retry-After is honoured; 4xx and context-length errors fail fast; malformed bodies and hangs are
// retried; the retry budget caps attempts during a sustained 100% failure; the breaker opens, falls
// back, and closes after recovery; with no fallback, calls wait with reason provider_unavailable
// instead of hammering the provider.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isKeelError } from '../src/domain/keel-error.ts';
import { ManualClock } from '../src/domain/clock.ts';
import { ModelGateway } from '../src/models/gateway.ts';
import { defineModel } from '../src/sdk/define.ts';
import type { ModelDefinition } from '../src/sdk/types.ts';
import { startFakeAnthropic } from './support/fake-anthropic-server.ts';
import { startFakeOpenAi } from './support/fake-openai-server.ts';
import type { FakeProviderServer } from './support/fake-provider-core.ts';

const never = new AbortController().signal;
const ask = (model: string, content = 'hello') => ({
  model,
  messages: [{ role: 'user' as const, content }],
});

async function fakes(t: { after(fn: () => unknown): void }) {
  const openai = await startFakeOpenAi();
  const anthropic = await startFakeAnthropic();
  t.after(() => openai.close());
  t.after(() => anthropic.close());
  return { openai, anthropic };
}

function modelOn(
  kind: 'openai' | 'anthropic',
  fake: FakeProviderServer,
  extra: Partial<ModelDefinition> = {},
): ModelDefinition {
  return defineModel({
    name: kind,
    provider: kind,
    baseUrl: kind === 'openai' ? `${fake.url}/v1` : fake.url,
    stream: false,
    ...extra,
  });
}

test('Retry-After (seconds or milliseconds) is honoured before the next attempt', async (t) => {
  const { openai, anthropic } = await fakes(t);
  openai.enqueue({ kind: 'status', status: 429, headers: { 'retry-after-ms': '400' } });
  anthropic.enqueue({ kind: 'status', status: 529, headers: { 'retry-after': '1' } });
  const gateway = new ModelGateway([modelOn('openai', openai), modelOn('anthropic', anthropic)], {
    random: () => 0,
  });
  const [a, b] = await Promise.all([
    gateway.call(ask('openai'), { signal: never }),
    gateway.call(ask('anthropic'), { signal: never }),
  ]);
  assert.equal(a.attempts, 2);
  assert.equal(b.attempts, 2);
  assert.ok(openai.requests[1]!.at - openai.requests[0]!.at >= 390, 'waited the retry-after-ms');
  assert.ok(
    anthropic.requests[1]!.at - anthropic.requests[0]!.at >= 990,
    'waited the retry-after seconds',
  );
  assert.deepEqual(a.attributes.waits, [{ reason: 'retry_after', ms: 400 }]);
  assert.deepEqual(b.attributes.waits, [{ reason: 'retry_after', ms: 1_000 }]);
});

test('400, 401, 403, 404 and context-length errors fail fast with typed errors, after one request', async (t) => {
  const { openai, anthropic } = await fakes(t);
  const gateway = new ModelGateway([
    modelOn('openai', openai, { maxAttempts: 5 }),
    modelOn('anthropic', anthropic, { maxAttempts: 5 }),
  ]);
  const cases = [
    [{ kind: 'status', status: 400 }, 'model_request_invalid'],
    [{ kind: 'status', status: 401 }, 'model_auth_failed'],
    [{ kind: 'status', status: 403 }, 'model_auth_failed'],
    [{ kind: 'status', status: 404 }, 'model_endpoint_not_found'],
    [
      {
        kind: 'status',
        status: 400,
        errorCode: 'context_length_exceeded',
        message: "This model's maximum context length is 8192 tokens",
      },
      'model_context_length_exceeded',
    ],
  ] as const;
  for (const [fake, name] of [
    [openai, 'openai'],
    [anthropic, 'anthropic'],
  ] as const) {
    for (const [behaviour, code] of cases) {
      const before = fake.requests.length;
      fake.enqueue(behaviour);
      await assert.rejects(gateway.call(ask(name), { signal: never }), (error) => {
        assert.ok(isKeelError(error));
        assert.equal(error.code, code, `${name} ${behaviour.status}`);
        assert.equal(error.retryable, false);
        return true;
      });
      assert.equal(fake.requests.length - before, 1, `${name} ${behaviour.status} was not retried`);
    }
  }
});

test('malformed bodies and hung requests are retried (attempt timeout) and then succeed', async (t) => {
  const { openai, anthropic } = await fakes(t);
  openai.enqueue({ kind: 'malformed' }, { kind: 'hang' });
  anthropic.enqueue({ kind: 'hang' }, { kind: 'malformed' });
  const timeouts = { attemptMs: 300, callMs: 10_000 };
  const gateway = new ModelGateway(
    [modelOn('openai', openai, { timeouts }), modelOn('anthropic', anthropic, { timeouts })],
    { random: () => 0 },
  );
  const [a, b] = await Promise.all([
    gateway.call(ask('openai', 'hi'), { signal: never }),
    gateway.call(ask('anthropic', 'hi'), { signal: never }),
  ]);
  assert.equal(a.response.text, 'hi');
  assert.equal(b.response.text, 'hi');
  assert.equal(a.attempts, 3);
  assert.equal(b.attempts, 3);
  // The hung requests were abandoned by the client, not left open.
  const deadline = Date.now() + 2_000;
  while ((openai.open > 0 || anthropic.open > 0) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 10));
  assert.equal(openai.open + anthropic.open, 0);
});

test('a call outliving its per-call timeout fails with model_timeout', async (t) => {
  const { openai } = await fakes(t);
  openai.setDefault(() => ({ kind: 'hang' }));
  const gateway = new ModelGateway(
    [modelOn('openai', openai, { timeouts: { attemptMs: 200, callMs: 500 }, maxAttempts: 10 })],
    { random: () => 0 },
  );
  await assert.rejects(
    gateway.call(ask('openai'), { signal: never }),
    (error) => isKeelError(error) && error.code === 'model_timeout',
  );
  assert.ok(
    openai.requests.length >= 2 && openai.requests.length <= 3,
    `attempts ${openai.requests.length}`,
  );
});

test('the retry budget caps attempts during a sustained 100% failure (amplification within the bound)', async (t) => {
  const { openai } = await fakes(t);
  openai.setDefault(() => ({ kind: 'status', status: 503 }));
  const ratio = 0.1;
  const floor = 2;
  const gateway = new ModelGateway([modelOn('openai', openai, { maxAttempts: 5 })], {
    random: () => 0,
    retryBudget: { ratio, minRetriesPerWindow: floor, windowMs: 60_000, perRun: 1_000 },
    breaker: { consecutiveFailures: 1_000_000, failureRatio: 1, minCalls: 1_000_000 }, // keep the breaker out of this test
  });
  const calls = 60;
  const results = await Promise.allSettled(
    Array.from({ length: calls }, () => gateway.call(ask('openai'), { signal: never })),
  );
  assert.ok(
    results.every(
      (r) =>
        r.status === 'rejected' && isKeelError(r.reason) && r.reason.code === 'model_unavailable',
    ),
  );
  const bound = 1 + ratio + floor / calls;
  const amplification = gateway.stats().providers.openai!.amplification;
  t.diagnostic(
    `attempts ${openai.requests.length} for ${calls} calls: amplification ${amplification.toFixed(3)} (bound ${bound.toFixed(3)}; without the budget it would be 5)`,
  );
  assert.equal(openai.requests.length / calls, amplification);
  assert.ok(amplification <= bound, `amplification ${amplification} > ${bound}`);
  assert.ok(gateway.stats().providers.openai!.retriesDenied > 0);
});

test('the per-run retry budget stops one run from retrying past its share', async (t) => {
  const { openai } = await fakes(t);
  openai.setDefault(() => ({ kind: 'status', status: 500 }));
  const gateway = new ModelGateway([modelOn('openai', openai, { maxAttempts: 10 })], {
    random: () => 0,
    retryBudget: { ratio: 10, minRetriesPerWindow: 100, perRun: 3 },
    breaker: { consecutiveFailures: 1_000 },
  });
  await assert.rejects(
    gateway.call(ask('openai'), { signal: never, runId: 'run_a' }),
    (error) => isKeelError(error) && error.details?.reason === 'run_retry_budget',
  );
  assert.equal(openai.requests.length, 4);
});

test('the breaker opens, calls fall back, and it closes after the provider recovers', async (t) => {
  const { openai, anthropic } = await fakes(t);
  openai.setDefault(() => ({ kind: 'status', status: 500 }));
  const clock = new ManualClock(Date.now());
  const primary = modelOn('openai', openai, { maxAttempts: 1, fallbacks: ['anthropic'] });
  const gateway = new ModelGateway([primary, modelOn('anthropic', anthropic)], {
    clock,
    breaker: { consecutiveFailures: 3, openMs: 5_000 },
  });
  for (let i = 0; i < 3; i += 1) {
    const result = await gateway.call(ask('openai', `q${i}`), { signal: never });
    assert.equal(result.response.model, 'anthropic@1');
    assert.deepEqual(result.attributes.fallbacks, [{ from: 'openai', code: 'model_unavailable' }]);
  }
  assert.equal(gateway.stats().breakers['openai/default'], 'open');
  // Open: calls go straight to the fallback without touching the failing provider.
  const sent = openai.requests.length;
  const whileOpen = await gateway.call(ask('openai', 'while open'), { signal: never });
  assert.equal(whileOpen.response.model, 'anthropic@1');
  assert.equal(whileOpen.attributes.fallbacks[0]!.code, 'provider_unavailable');
  assert.equal(openai.requests.length, sent);
  // Recovery: after the open period one probe goes through; it succeeds and the breaker closes.
  openai.setDefault((body) => ({
    kind: 'reply',
    text: `primary: ${body.messages.at(-1).content}`,
  }));
  clock.advance(5_000);
  assert.equal(gateway.stats().breakers['openai/default'], 'half_open');
  const probe = await gateway.call(ask('openai', 'after'), { signal: never });
  assert.equal(probe.response.text, 'primary: after');
  assert.equal(gateway.stats().breakers['openai/default'], 'closed');
});

test('with every breaker open and no fallback, a call waits (provider_unavailable) without hammering the provider', async (t) => {
  const { openai } = await fakes(t);
  openai.setDefault(() => ({ kind: 'status', status: 502 }));
  const gateway = new ModelGateway([modelOn('openai', openai, { maxAttempts: 1 })], {
    breaker: { consecutiveFailures: 2, openMs: 400 },
  });
  for (let i = 0; i < 2; i += 1)
    await assert.rejects(gateway.call(ask('openai'), { signal: never }));
  assert.equal(gateway.stats().breakers['openai/default'], 'open');
  openai.setDefault(() => ({ kind: 'reply', text: 'back' }));
  const sent = openai.requests.length;
  const waiting = gateway.call(ask('openai'), { signal: never });
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(openai.requests.length, sent, 'nothing is sent while the breaker is open');
  const result = await waiting;
  assert.equal(result.response.text, 'back');
  assert.equal(result.attributes.waits[0]!.reason, 'provider_unavailable');
  assert.equal(openai.requests.length, sent + 1);
});

test('a stream cut mid-way is retried; live deltas restart with the new attempt and the answer is whole', async (t) => {
  const { openai, anthropic } = await fakes(t);
  const text = 'a fairly long streamed answer';
  for (const fake of [openai, anthropic]) {
    fake.enqueue({ kind: 'reply', text, chunkChars: 4, dropAfterPieces: 3 });
    fake.setDefault(() => ({ kind: 'reply', text, chunkChars: 4 }));
  }
  const gateway = new ModelGateway(
    [
      modelOn('openai', openai, { stream: true }),
      modelOn('anthropic', anthropic, { stream: true }),
    ],
    { random: () => 0 },
  );
  for (const name of ['openai', 'anthropic']) {
    const deltas: Array<{ attempt: number; index: number; text: string }> = [];
    const unsubscribe = gateway.live.subscribe(`run_${name}`, (event) =>
      deltas.push(event.data as never),
    );
    const result = await gateway.call(ask(name), { signal: never, runId: `run_${name}`, seq: 1 });
    unsubscribe();
    assert.equal(result.response.text, text, name);
    assert.equal(result.attempts, 2, name);
    const first = deltas.filter((d) => d.attempt === 1);
    const second = deltas.filter((d) => d.attempt === 2);
    assert.ok(
      first.length >= 1 && first.length <= 3,
      `${name}: ${first.length} deltas before the cut`,
    );
    assert.equal(second.map((d) => d.text).join(''), text, name);
    assert.deepEqual(
      second.map((d) => d.index),
      second.map((_, i) => i),
    );
  }
});
