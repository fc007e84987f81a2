// Done-when: TPM limits hold within 5% over a minute of load. The gateway runs on a ManualClock
// (the limiter reads time only through it), so three virtual minutes of 40 concurrent callers take
// well under a second of real time. The provider reports actual usage below the reservation
// (estimated input + max output), as real models do, so the test also covers settling reservations
// to actual usage.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ManualClock } from '../src/domain/clock.ts';
import { ModelGateway } from '../src/models/gateway.ts';
import type { ModelProvider, ProviderRequest } from '../src/models/provider.ts';
import { estimateTokens } from '../src/models/prefix-fingerprint.ts';
import { defineAgent, defineModel } from '../src/sdk/define.ts';
import { TERMINAL, startKeel } from './support/keel-server.ts';

const TPM = 60_000;
const TENANT_TPM = 20_000;
const MAX_OUTPUT = 400;
const STEP_MS = 100;
const VIRTUAL_MS = 180_000;

interface Dispatch {
  at: number;
  tokens: number;
  tenant: string;
}

function loadProvider(clock: ManualClock, log: Dispatch[], random: () => number): ModelProvider {
  return {
    name: 'load',
    async complete(request: ProviderRequest) {
      const inputTokens = estimateTokens(request.messages.map((m) => m.content).join('').length);
      const outputTokens = 50 + Math.floor(random() * (MAX_OUTPUT - 50));
      const tenant = request.messages[0]!.content.split(':')[0]!;
      log.push({ at: clock.now(), tokens: inputTokens + outputTokens, tenant });
      return { text: 'ok', toolCalls: [], inputTokens, outputTokens };
    },
  };
}

function maxWindowSum(log: Dispatch[], filter: (d: Dispatch) => boolean): number {
  let max = 0;
  for (let start = 0; start + 60_000 <= VIRTUAL_MS; start += STEP_MS) {
    let sum = 0;
    for (const d of log) if (d.at >= start && d.at < start + 60_000 && filter(d)) sum += d.tokens;
    max = Math.max(max, sum);
  }
  return max;
}

test('TPM limits per model and per tenant hold within 5% over every 60 s window of sustained load', async (t) => {
  const clock = new ManualClock(1_000_000);
  const start = clock.now();
  const log: Dispatch[] = [];
  let seed = 42;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const model = defineModel({
    name: 'limited',
    provider: 'load' as 'mock',
    maxOutputTokens: MAX_OUTPUT,
    limits: { tpm: TPM },
  });
  const gateway = new ModelGateway([model], {
    providers: [loadProvider(clock, log, random)],
    clock,
    tenantLimits: { tenants: { small: { tpm: TENANT_TPM } } },
  });
  const stop = new AbortController();
  const worker = async (tenant: string, id: number): Promise<void> => {
    for (let i = 0; !stop.signal.aborted; i += 1) {
      const content = `${tenant}: call ${id}.${i} ${'x'.repeat(100 + ((id * 37 + i * 11) % 400))}`;
      try {
        await gateway.call(
          { model: 'limited', messages: [{ role: 'user', content }] },
          { signal: stop.signal, tenantId: tenant },
        );
      } catch (error) {
        if (stop.signal.aborted) return;
        throw error;
      }
    }
  };
  const workers = [
    ...Array.from({ length: 30 }, (_, i) => worker('big', i)),
    ...Array.from({ length: 10 }, (_, i) => worker('small', i)),
  ];
  for (let elapsed = 0; elapsed < VIRTUAL_MS; elapsed += STEP_MS) {
    for (let turn = 0; turn < 3; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    clock.advance(STEP_MS);
  }
  stop.abort(new Error('done'));
  await Promise.all(workers);
  for (const d of log) d.at -= start;

  const overall = maxWindowSum(log, () => true);
  const small = maxWindowSum(log, (d) => d.tenant === 'small');
  t.diagnostic(
    `max 60 s window: model ${overall}/${TPM}, tenant small ${small}/${TENANT_TPM}; calls ${log.length}`,
  );
  assert.ok(overall <= TPM * 1.05, `model TPM: max 60 s window ${overall} > ${TPM} + 5%`);
  assert.ok(
    small <= TENANT_TPM * 1.05,
    `tenant TPM: max 60 s window ${small} > ${TENANT_TPM} + 5%`,
  );
  // The limit is used, not merely respected: a steady minute runs close to it.
  const steady = log
    .filter((d) => d.at >= 60_000 && d.at < 120_000)
    .reduce((sum, d) => sum + d.tokens, 0);
  t.diagnostic(`steady minute: ${steady} tokens`);
  assert.ok(steady >= TPM * 0.9, `steady-state minute used only ${steady} of ${TPM}`);
  assert.ok(gateway.stats().tenants.small!.calls > 0 && gateway.stats().tenants.big!.calls > 0);
});

test('a call over its rate limit waits with an explainable reason on the run, and can be cancelled while waiting', async (t) => {
  const asker = defineAgent({
    name: 'asker',
    version: '1',
    async run(ctx) {
      return (await ctx.model({ model: 'lim', messages: [{ role: 'user', content: 'hi' }] })).text;
    },
  });
  const gateway = new ModelGateway([
    defineModel({ name: 'lim', provider: 'mock', limits: { rpm: 1 } }),
  ]);
  const keel = await startKeel({ agents: [asker], gateway });
  t.after(() => keel.close());
  const first = (await keel.request('POST', '/v1/runs', { agent: 'asker', input: null })).body.id;
  assert.equal((await keel.waitForRun(first, (r) => TERMINAL.has(r.status))).status, 'succeeded');
  const second = (await keel.request('POST', '/v1/runs', { agent: 'asker', input: null })).body.id;
  const waiting = await keel.waitForRun(second, (r) => r.waitingReason === 'rate_limited');
  assert.equal(waiting.status, 'running');
  const events = (await keel.request('GET', `/v1/runs/${second}/events?format=json`)).body as any[];
  const wait = events.find((e) => e.type === 'model.waiting');
  assert.match(wait.data.detail, /model:lim: 1 requests per minute/);
  assert.equal((await keel.request('POST', `/v1/runs/${second}/cancel`)).status, 202);
  const cancelled = await keel.waitForRun(second, (r) => TERMINAL.has(r.status));
  assert.equal(cancelled.status, 'cancelled');
  assert.equal(cancelled.waitingReason, null);
});

test('models that bill to one provider account share its limits', async () => {
  const clock = new ManualClock(0);
  const models = ['small', 'large'].map((name) =>
    defineModel({ name, provider: 'mock', account: 'org' }),
  );
  const gateway = new ModelGateway(models, { clock, accounts: { org: { rpm: 2 } } });
  const signal = new AbortController().signal;
  const ask = (model: string) =>
    gateway.call({ model, messages: [{ role: 'user', content: model }] }, { signal });
  await ask('small');
  await ask('large');
  let third = false;
  const pending = ask('small').then(() => (third = true));
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(third, false, 'the account allows 2 requests a minute across both models');
  clock.advance(60_000);
  await pending;
  assert.equal(third, true);
  assert.equal(gateway.limiter.usage('account:org').requests, 1);
});
