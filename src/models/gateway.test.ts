import assert from 'node:assert/strict';
import { afterEach, describe, it, mock } from 'node:test';
import { z } from 'zod';
import { KeelError, isKeelError } from '../domain/keel-error.ts';
import { defineModel, defineTool } from '../sdk/define.ts';
import type { ModelDefinition, ModelRequest } from '../sdk/types.ts';
import {
  ModelGateway,
  RETRY_AFTER_MAX_MS,
  RETRY_BASE_DELAY_MS,
  RETRY_MAX_DELAY_MS,
  retryDelayMs,
} from './gateway.ts';
import { MockProvider } from './providers/mock-provider.ts';
import type { ModelProvider, ProviderRequest, ProviderResponse } from './provider.ts';

const never = new AbortController().signal;
const noJitter = (): number => 0;

function ask(content: string, model = 'mock'): ModelRequest {
  return { model, messages: [{ role: 'user', content }] };
}

/** Polls `condition` across event-loop turns; fails instead of hanging if it never holds. */
async function until(condition: () => boolean, maxTurns = 1_000): Promise<void> {
  for (let turn = 0; turn < maxTurns; turn += 1) {
    if (condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.fail('condition never held');
}

async function eventLoopTurns(count: number): Promise<void> {
  for (let turn = 0; turn < count; turn += 1) await new Promise((resolve) => setImmediate(resolve));
}

function activeTimers(): number {
  return process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
}

/** A provider registered as `mock` whose attempts the test decides one by one. */
class FakeProvider implements ModelProvider {
  readonly name = 'mock';
  readonly requests: ProviderRequest[] = [];
  inFlight = 0;
  maxInFlight = 0;
  readonly #answer: (
    attempt: number,
    request: ProviderRequest,
    signal: AbortSignal,
  ) => Promise<ProviderResponse>;

  constructor(
    answer: (
      attempt: number,
      request: ProviderRequest,
      signal: AbortSignal,
    ) => Promise<ProviderResponse>,
  ) {
    this.#answer = answer;
  }

  get attempts(): number {
    return this.requests.length;
  }

  async complete(request: ProviderRequest, signal: AbortSignal): Promise<ProviderResponse> {
    this.requests.push(request);
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      return await this.#answer(this.requests.length, request, signal);
    } finally {
      this.inFlight -= 1;
    }
  }
}

/**
 * Attempts stay in flight until the test calls `releaseNext()` (oldest first) or the signal aborts.
 */
function gatedProvider(): { provider: FakeProvider; releaseNext(): void } {
  const gates: Array<() => void> = [];
  const provider = new FakeProvider(
    (_attempt, request, signal) =>
      new Promise((resolve, reject) => {
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        gates.push(() =>
          resolve({
            text: request.messages.at(-1)?.content ?? '',
            toolCalls: [],
            inputTokens: 1,
            outputTokens: 1,
          }),
        );
      }),
  );
  return {
    provider,
    releaseNext() {
      const gate = gates.shift();
      assert.ok(gate, 'no attempt is waiting');
      gate();
    },
  };
}

const ok: ProviderResponse = { text: 'ok', toolCalls: [], inputTokens: 1, outputTokens: 1 };

describe('ModelGateway resolution', () => {
  it('always has the built-in mock model at version 1', () => {
    const gateway = new ModelGateway();
    assert.equal(gateway.has('mock'), true);
    const resolved = gateway.resolve('mock');
    assert.equal(resolved.version, '1');
    assert.equal(resolved.definition.provider, 'mock');
  });

  it('resolves declared models with their version and lets a definition override mock', () => {
    const planner = defineModel({ name: 'planner', provider: 'mock', version: '2025-01' });
    const mockOverride = defineModel({ name: 'mock', provider: 'mock', version: '7' });
    const gateway = new ModelGateway([planner, mockOverride]);
    assert.equal(gateway.resolve('planner').version, '2025-01');
    assert.equal(gateway.resolve('mock').definition, mockOverride);
  });

  it('throws model_not_found for unknown names, from resolve and from call', async () => {
    const gateway = new ModelGateway();
    assert.equal(gateway.has('gpt-x'), false);
    assert.throws(
      () => gateway.resolve('gpt-x'),
      (error) => isKeelError(error) && error.code === 'model_not_found',
    );
    await assert.rejects(
      gateway.call(ask('hi', 'gpt-x'), { signal: never }),
      (error) => isKeelError(error) && error.code === 'model_not_found',
    );
  });

  it('rejects invalid configuration', () => {
    const invalid = (definitions: ModelDefinition[]): void => {
      assert.throws(
        () => new ModelGateway(definitions),
        (error) => isKeelError(error) && error.code === 'config_invalid',
      );
    };
    invalid([
      defineModel({ name: 'a', provider: 'mock' }),
      defineModel({ name: 'a', provider: 'mock' }),
    ]);
    invalid([defineModel({ name: 'a', provider: 'mock', maxConcurrency: 0 })]);
    invalid([defineModel({ name: 'a', provider: 'mock', maxAttempts: 1.5 })]);
    invalid([defineModel({ name: 'a', provider: 'nope' as 'mock' })]);
  });
});

describe('ModelGateway.call', () => {
  afterEach(() => mock.timers.reset());

  it('echoes through the mock provider and names the resolved model', async () => {
    const { response, attempts } = await new ModelGateway().call(ask('hello there'), {
      signal: never,
    });
    assert.equal(attempts, 1);
    assert.equal(response.text, 'hello there');
    assert.deepEqual(response.toolCalls, []);
    assert.equal(response.model, 'mock@1');
    assert.equal(response.usage.costUsd, 0);
  });

  it('prices the call per million tokens', async () => {
    const priced = defineModel({
      name: 'priced',
      provider: 'mock',
      price: { inputPerMTok: 3, outputPerMTok: 15 },
    });
    const { response } = await new ModelGateway([priced]).call(ask('x'.repeat(4_000), 'priced'), {
      signal: never,
    });
    assert.equal(response.usage.inputTokens, 1_000);
    assert.equal(response.usage.outputTokens, 1_000);
    assert.equal(response.usage.costUsd, (1_000 * 3 + 1_000 * 15) / 1_000_000);
  });

  it('hands providers tools as JSON Schema specs', async () => {
    const provider = new FakeProvider(async () => ok);
    const add = defineTool({
      name: 'add',
      description: 'Adds',
      effect: 'read',
      input: z.object({ a: z.number(), b: z.number() }),
      run: ({ a, b }) => a + b,
    });
    const plain = { name: 'lookup', description: 'Looks up', parameters: { type: 'object' } };
    await new ModelGateway([], { providers: [provider] }).call(
      { ...ask('x'), tools: [add, plain] },
      { signal: never },
    );
    assert.deepEqual(provider.requests[0]?.tools, [
      {
        name: 'add',
        description: 'Adds',
        parameters: {
          type: 'object',
          properties: { a: { type: 'number' }, b: { type: 'number' } },
          required: ['a', 'b'],
        },
      },
      plain,
    ]);
  });

  it('retries a failing model until maxAttempts, then throws model_unavailable', async () => {
    const counting = new FakeProvider((_attempt, request, signal) =>
      new MockProvider().complete(request, signal),
    );
    const flaky = defineModel({
      name: 'flaky',
      provider: 'mock',
      maxAttempts: 4,
      options: { failureRate: 1 },
    });
    const gateway = new ModelGateway([flaky], { providers: [counting], random: noJitter });
    await assert.rejects(gateway.call(ask('x', 'flaky'), { signal: never }), (error) => {
      assert.ok(isKeelError(error));
      assert.equal(error.code, 'model_unavailable');
      assert.deepEqual(error.details, {
        model: 'flaky@1',
        attempts: 4,
        reason: 'attempts',
        lastCode: 'model_unavailable',
      });
      return true;
    });
    assert.equal(counting.attempts, 4);
  });

  it('never fails at failure rate 0', async () => {
    const steady = defineModel({ name: 'steady', provider: 'mock', options: { failureRate: 0 } });
    const gateway = new ModelGateway([steady]);
    for (let i = 0; i < 50; i += 1) {
      const { attempts } = await gateway.call(ask(`q${i}`, 'steady'), { signal: never });
      assert.equal(attempts, 1);
    }
  });

  it('recovers when a retry succeeds and reports the attempts', async () => {
    const provider = new FakeProvider(async (attempt) => {
      if (attempt < 3) throw new KeelError('model_unavailable', 'overloaded', { retryable: true });
      return ok;
    });
    const result = await new ModelGateway([], { providers: [provider], random: noJitter }).call(
      ask('x'),
      { signal: never },
    );
    assert.equal(result.attempts, 3);
    assert.equal(result.response.text, 'ok');
  });

  it('never retries a non-retryable error or a foreign error', async () => {
    for (const thrown of [new KeelError('model_unavailable', 'bad key'), new TypeError('bug')]) {
      const provider = new FakeProvider(async () => {
        throw thrown;
      });
      const gateway = new ModelGateway([], { providers: [provider], random: noJitter });
      await assert.rejects(gateway.call(ask('x'), { signal: never }), (error) => error === thrown);
      assert.equal(provider.attempts, 1);
    }
  });

  it('waits exactly the provider’s Retry-After before retrying', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    const retryAfterMs = 1_000;
    const provider = new FakeProvider(async (attempt) => {
      if (attempt === 1)
        throw new KeelError('model_unavailable', 'rate limited', { retryable: true, retryAfterMs });
      return ok;
    });
    const pending = new ModelGateway([], { providers: [provider], random: noJitter }).call(
      ask('x'),
      { signal: never },
    );
    await until(() => provider.attempts === 1);
    await eventLoopTurns(5); // lets the gateway arm its backoff timer; if it armed later, attempt 2 would never come
    mock.timers.tick(retryAfterMs - 1);
    await eventLoopTurns(5);
    assert.equal(provider.attempts, 1);
    mock.timers.tick(1);
    await until(() => provider.attempts === 2);
    assert.equal((await pending).attempts, 2);
  });

  it('stops at abort during backoff, leaving no timer behind', async () => {
    const timersBefore = activeTimers();
    const provider = new FakeProvider(async () => {
      throw new KeelError('model_unavailable', 'rate limited', {
        retryable: true,
        retryAfterMs: 600_000,
      });
    });
    const controller = new AbortController();
    const pending = new ModelGateway([], { providers: [provider] }).call(ask('x'), {
      signal: controller.signal,
    });
    // Two timers: the call's own deadline and the backoff before attempt 2.
    await until(() => provider.attempts === 1 && activeTimers() > timersBefore + 1);
    const reason = new KeelError('cancelled', 'run cancelled');
    controller.abort(reason);
    await assert.rejects(pending, (error) => error === reason);
    assert.equal(provider.attempts, 1);
    assert.equal(activeTimers(), timersBefore);
  });

  it('stops at abort during the mock’s latency, leaving no timer behind', async () => {
    const timersBefore = activeTimers();
    const slow = defineModel({ name: 'slow', provider: 'mock', options: { latencyMs: 600_000 } });
    const controller = new AbortController();
    const pending = new ModelGateway([slow]).call(ask('x', 'slow'), { signal: controller.signal });
    await until(() => activeTimers() > timersBefore);
    const reason = new KeelError('cancelled', 'run cancelled');
    controller.abort(reason);
    await assert.rejects(pending, (error) => error === reason);
    assert.equal(activeTimers(), timersBefore);
  });

  it('bounds concurrent attempts per model and starts waiting calls in FIFO order', async () => {
    const { provider, releaseNext } = gatedProvider();
    const narrow = defineModel({ name: 'narrow', provider: 'mock', maxConcurrency: 2 });
    const gateway = new ModelGateway([narrow], { providers: [provider] });
    const calls = [0, 1, 2, 3, 4].map((i) =>
      gateway.call(ask(`q${i}`, 'narrow'), { signal: never }),
    );
    await until(() => provider.attempts === 2);
    for (let released = 1; released <= 5; released += 1) {
      releaseNext();
      await until(() => provider.attempts === Math.min(5, released + 2));
    }
    const texts = (await Promise.all(calls)).map((result) => result.response.text);
    assert.deepEqual(texts, ['q0', 'q1', 'q2', 'q3', 'q4']);
    assert.deepEqual(
      provider.requests.map((request) => request.messages[0]?.content),
      texts,
    );
    assert.equal(provider.maxInFlight, 2);
  });

  it('stops at abort while waiting for a slot, without taking or leaking one', async () => {
    const { provider, releaseNext } = gatedProvider();
    const single = defineModel({ name: 'single', provider: 'mock', maxConcurrency: 1 });
    const gateway = new ModelGateway([single], { providers: [provider] });
    const first = gateway.call(ask('first', 'single'), { signal: never });
    await until(() => provider.attempts === 1);
    const controller = new AbortController();
    const waiting = gateway.call(ask('second', 'single'), { signal: controller.signal });
    const reason = new KeelError('cancelled', 'run cancelled');
    controller.abort(reason);
    await assert.rejects(waiting, (error) => error === reason);
    releaseNext();
    assert.equal((await first).response.text, 'first');
    const third = gateway.call(ask('third', 'single'), { signal: never });
    await until(() => provider.attempts === 2);
    releaseNext();
    assert.equal((await third).response.text, 'third');
    assert.deepEqual(
      provider.requests.map((request) => request.messages[0]?.content),
      ['first', 'third'],
    );
  });
});

describe('retryDelayMs', () => {
  it('uses full jitter over an exponential ceiling, capped', () => {
    assert.equal(
      retryDelayMs(1, undefined, () => 0),
      0,
    );
    assert.equal(
      retryDelayMs(1, undefined, () => 0.5),
      RETRY_BASE_DELAY_MS / 2,
    );
    assert.equal(
      retryDelayMs(3, undefined, () => 0.5),
      (RETRY_BASE_DELAY_MS * 4) / 2,
    );
    assert.ok(retryDelayMs(30, undefined, () => 0.999_999) < RETRY_MAX_DELAY_MS);
    assert.ok(retryDelayMs(30, undefined, () => 0.999_999) >= RETRY_MAX_DELAY_MS - 1);
  });

  it('honours Retry-After over jitter, clamped to its maximum', () => {
    assert.equal(
      retryDelayMs(1, 750, () => 0),
      750,
    );
    assert.equal(
      retryDelayMs(5, 0, () => 0.9),
      0,
    );
    assert.equal(
      retryDelayMs(1, 10 * RETRY_AFTER_MAX_MS, () => 0),
      RETRY_AFTER_MAX_MS,
    );
  });
});
