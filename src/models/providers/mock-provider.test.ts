import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeelError, isKeelError } from '../../domain/keel-error.ts';
import { defineModel } from '../../sdk/define.ts';
import type { ChatMessage, MockModelOptions } from '../../sdk/types.ts';
import { MockProvider } from './mock-provider.ts';
import type { ProviderRequest } from '../provider.ts';

function request(messages: ChatMessage[], options?: MockModelOptions): ProviderRequest {
  const definition = defineModel({
    name: 'm',
    provider: 'mock',
    ...(options === undefined ? {} : { options }),
  });
  return { model: { name: 'm', version: '1', definition }, messages, tools: [] };
}

function activeTimers(): number {
  return process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
}

/** Polls `condition` across event-loop turns; fails instead of hanging if it never holds. */
async function until(condition: () => boolean, maxTurns = 1_000): Promise<void> {
  for (let turn = 0; turn < maxTurns; turn += 1) {
    if (condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.fail('condition never held');
}

const signal = new AbortController().signal;

describe('MockProvider', () => {
  it('echoes the last user message', async () => {
    const reply = await new MockProvider().complete(
      request([
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'second question' },
      ]),
      signal,
    );
    assert.equal(reply.text, 'second question');
    assert.deepEqual(reply.toolCalls, []);
    assert.equal(reply.inputTokens, Math.ceil('be brieffirstoksecond question'.length / 4));
    assert.equal(reply.outputTokens, Math.ceil('second question'.length / 4));
  });

  it('counts at least one token for empty text', async () => {
    const reply = await new MockProvider().complete(
      request([{ role: 'user', content: '' }]),
      signal,
    );
    assert.equal(reply.text, '');
    assert.equal(reply.inputTokens, 1);
    assert.equal(reply.outputTokens, 1);
  });

  it('follows the script by assistant turn, with deterministic tool call ids, then echoes', async () => {
    const script: MockModelOptions['script'] = [
      {
        text: 'looking',
        toolCalls: [
          { name: 'search', args: { q: 'a' } },
          { name: 'fetch', args: { url: 'u' } },
        ],
      },
      { text: 'done' },
    ];
    const provider = new MockProvider();
    const first = await provider.complete(
      request([{ role: 'user', content: 'go' }], { script }),
      signal,
    );
    assert.equal(first.text, 'looking');
    assert.deepEqual(first.toolCalls, [
      { id: 'call_0_0', name: 'search', args: { q: 'a' } },
      { id: 'call_0_1', name: 'fetch', args: { url: 'u' } },
    ]);
    const again = await provider.complete(
      request([{ role: 'user', content: 'go' }], { script }),
      signal,
    );
    assert.deepEqual(again, first);

    const turnOne: ChatMessage[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'looking', toolCalls: first.toolCalls },
      { role: 'tool', content: '"r"', toolCallId: 'call_0_0' },
    ];
    const second = await provider.complete(request(turnOne, { script }), signal);
    assert.equal(second.text, 'done');
    assert.deepEqual(second.toolCalls, []);

    const past = await provider.complete(
      request(
        [...turnOne, { role: 'assistant', content: 'done' }, { role: 'user', content: 'more' }],
        { script },
      ),
      signal,
    );
    assert.equal(past.text, 'more');
  });

  it('fails retryably on every attempt at failure rate 1 and never at 0', async () => {
    const provider = new MockProvider();
    await assert.rejects(
      provider.complete(request([{ role: 'user', content: 'x' }], { failureRate: 1 }), signal),
      (error) => {
        assert.ok(isKeelError(error));
        assert.equal(error.code, 'model_unavailable');
        assert.equal(error.retryable, true);
        return true;
      },
    );
    for (let i = 0; i < 50; i += 1) {
      const reply = await provider.complete(
        request([{ role: 'user', content: 'x' }], { failureRate: 0 }),
        signal,
      );
      assert.equal(reply.text, 'x');
    }
  });

  it('rejects with the abort reason during latency and leaves no timer behind', async () => {
    const timersBefore = activeTimers();
    const controller = new AbortController();
    const reason = new KeelError('cancelled', 'run cancelled');
    const pending = new MockProvider().complete(
      request([{ role: 'user', content: 'x' }], { latencyMs: 600_000 }),
      controller.signal,
    );
    await until(() => activeTimers() > timersBefore);
    controller.abort(reason);
    await assert.rejects(pending, (error) => error === reason);
    assert.equal(activeTimers(), timersBefore);
  });

  it('rejects at once when the signal is already aborted', async () => {
    const reason = new Error('gone');
    await assert.rejects(
      new MockProvider().complete(
        request([{ role: 'user', content: 'x' }]),
        AbortSignal.abort(reason),
      ),
      (error) => error === reason,
    );
  });

  it('stops at the output cap: a longer reply is cut there, its tool calls lost, and billed at the cap', async () => {
    const long = 'y'.repeat(1_504); // 376 tokens
    const whole = await new MockProvider().complete(
      request([{ role: 'user', content: long }]),
      signal,
    );
    assert.equal(whole.outputTokens, 376);
    const cut = await new MockProvider().complete(
      { ...request([{ role: 'user', content: long }]), maxOutputTokens: 300 },
      signal,
    );
    assert.equal(cut.outputTokens, 300);
    assert.equal(cut.text, 'y'.repeat(300 * 4));
    const fits = await new MockProvider().complete(
      { ...request([{ role: 'user', content: 'short' }]), maxOutputTokens: 300 },
      signal,
    );
    assert.deepEqual([fits.text, fits.outputTokens], ['short', 2]);
    const script = [{ text: 'calling', toolCalls: [{ name: 'add', args: { a: 2, b: 3 } }] }];
    const calls = await new MockProvider().complete(
      { ...request([{ role: 'user', content: 'go' }], { script }), maxOutputTokens: 3 },
      signal,
    );
    assert.deepEqual([calls.text, calls.toolCalls, calls.outputTokens], ['calling', [], 3]);
    const room = await new MockProvider().complete(
      { ...request([{ role: 'user', content: 'go' }], { script }), maxOutputTokens: 300 },
      signal,
    );
    assert.equal(room.toolCalls.length, 1);
  });
});

describe('MockProvider simulation options', () => {
  const simulated = (options: MockModelOptions) =>
    request([{ role: 'user', content: 'hi' }], options);

  it('answers 429 with retry-after inside a rate-limit window and 503 inside an outage, counted from startAtMs', async () => {
    let now = 1_000_000;
    const provider = new MockProvider({ now: () => now });
    const faults: MockModelOptions['faults'] = [
      { kind: 'rate-limit', fromSeconds: 0, toSeconds: 10, retryAfterMs: 750 },
      { kind: 'outage', fromSeconds: 10, toSeconds: 20 },
    ];
    const req = simulated({ startAtMs: now, faults });
    await assert.rejects(provider.complete(req, signal), (error: unknown) => {
      assert.ok(error instanceof KeelError);
      assert.equal(error.code, 'model_rate_limited');
      assert.equal(error.retryAfterMs, 750);
      return true;
    });
    now += 15_000;
    await assert.rejects(provider.complete(req, signal), (error: unknown) => {
      assert.ok(isKeelError(error) && error.code === 'model_unavailable' && error.retryable);
      return true;
    });
    now += 10_000;
    assert.equal((await provider.complete(req, signal)).text, 'hi');
  });

  it('refuses invalid simulation options with config_invalid', async () => {
    await assert.rejects(
      new MockProvider().complete(
        simulated({ latency: { kind: 'uniform', minMs: 10, maxMs: 1 } }),
        signal,
      ),
      (error: unknown) => isKeelError(error) && error.code === 'config_invalid',
    );
  });
});
