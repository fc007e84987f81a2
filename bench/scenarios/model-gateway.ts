// Scenario 8, the model gateway's own overhead per call: a real ModelGateway calls the fake
// OpenAI-compatible server on loopback through the official SDK, one call at a time. Each call's
// overhead is its gateway time minus the time spent inside the provider (the SDK round trip),
// measured per call around `provider.complete`; the SDK's direct latency to the same server is
// measured alongside for scale. Both non-streamed and streamed calls.
import { createHistogram } from 'node:perf_hooks';
import { ModelGateway } from '../../src/models/gateway.ts';
import type { ModelProvider, ProviderHooks, ProviderRequest } from '../../src/models/provider.ts';
import { OpenAiProvider } from '../../src/models/providers/openai-provider.ts';
import { defineModel } from '../../src/sdk/define.ts';
import { startFakeOpenAi } from '../../test/support/fake-openai-server.ts';
import { progress, recordMs, summarize, type LatencySummary } from '../support.ts';

export interface ModelGatewayResult {
  calls: number;
  warmupCalls: number;
  nonStreamed: { overhead: LatencySummary; providerTime: LatencySummary; total: LatencySummary };
  streamed: { overhead: LatencySummary; providerTime: LatencySummary; total: LatencySummary };
}

/** Wraps the real OpenAI provider and records the time each attempt spends inside it. */
class TimedProvider implements ModelProvider {
  readonly name = 'openai';
  readonly inner = new OpenAiProvider();
  lastMs = 0;

  async complete(request: ProviderRequest, signal: AbortSignal, hooks?: ProviderHooks) {
    const started = performance.now();
    try {
      return await this.inner.complete(request, signal, hooks);
    } finally {
      this.lastMs = performance.now() - started;
    }
  }
}

export async function runModelGateway(options: { quick: boolean }): Promise<ModelGatewayResult> {
  const calls = options.quick ? 300 : 2_000;
  const warmupCalls = options.quick ? 50 : 200;
  const fake = await startFakeOpenAi((body) => ({
    kind: 'reply',
    text: `answer to ${body.messages.length} messages`,
    chunkChars: 8,
  }));
  try {
    const provider = new TimedProvider();
    const models = [false, true].map((stream) =>
      defineModel({
        name: stream ? 'streamed' : 'plain',
        provider: 'openai',
        baseUrl: `${fake.url}/v1`,
        stream,
        price: { inputPerMTok: 1, outputPerMTok: 2 },
        limits: { rpm: 1_000_000, tpm: 1_000_000_000 },
      }),
    );
    const gateway = new ModelGateway(models, {
      providers: [provider],
      tenantLimits: { default: { rpm: 1_000_000, tpm: 1_000_000_000 } },
    });
    const measure = async (model: string) => {
      const overhead = createHistogram();
      const providerTime = createHistogram();
      const total = createHistogram();
      const signal = new AbortController().signal;
      for (let i = 0; i < warmupCalls + calls; i += 1) {
        const request = {
          model,
          messages: [
            { role: 'system' as const, content: 'You are terse.' },
            { role: 'user' as const, content: `question ${i}` },
          ],
        };
        const started = performance.now();
        await gateway.call(request, { signal, tenantId: 'bench', runId: `run_${i % 50}`, seq: 1 });
        const elapsed = performance.now() - started;
        if (i < warmupCalls) continue;
        recordMs(total, elapsed);
        recordMs(providerTime, provider.lastMs);
        recordMs(overhead, Math.max(0.000_001, elapsed - provider.lastMs));
      }
      return {
        overhead: summarize(overhead),
        providerTime: summarize(providerTime),
        total: summarize(total),
      };
    };
    const nonStreamed = await measure('plain');
    progress(
      `model gateway, non-streamed: overhead p50 ${nonStreamed.overhead.p50Ms} ms, p99 ${nonStreamed.overhead.p99Ms} ms (SDK round trip p50 ${nonStreamed.providerTime.p50Ms} ms)`,
    );
    const streamed = await measure('streamed');
    progress(
      `model gateway, streamed: overhead p50 ${streamed.overhead.p50Ms} ms, p99 ${streamed.overhead.p99Ms} ms (SDK round trip p50 ${streamed.providerTime.p50Ms} ms)`,
    );
    return { calls, warmupCalls, nonStreamed, streamed };
  } finally {
    await fake.close();
  }
}

if (import.meta.main) {
  const result = await runModelGateway({ quick: process.argv.includes('--quick') });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
