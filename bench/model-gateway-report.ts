// The RESULTS.md section for scenario 8 (model gateway overhead per call), kept beside report.ts so
// the gateway's figures and their wording live with the gateway's bench. Rendering only: it
// measures nothing.
import type { ModelGatewayResult } from './scenarios/model-gateway.ts';

/** Target: the gateway's own overhead per call, p50. */
export const GATEWAY_OVERHEAD_P50_MS_MAX = 1;

export function modelGatewaySection(g: ModelGatewayResult | undefined): string[] {
  if (g === undefined) return [];
  const ms = (v: number) => `${v} ms`;
  const met = (v: number) => (v <= GATEWAY_OVERHEAD_P50_MS_MAX ? 'yes' : '**no**');
  return [
    '## 8. Model gateway overhead per call',
    '',
    `${g.calls} calls one at a time (after ${g.warmupCalls} warm-up calls) from a \`ModelGateway\` through the official \`openai\` SDK`,
    "to the fake OpenAI-compatible server of the test tree on loopback. Overhead = the call's time in `gateway.call` minus the",
    'time inside the provider (the SDK round trip), per call: name resolution, budget check, prefix fingerprint, rate-limit',
    'reservation and settlement, breaker, routing, retry budget, pricing and accounting. Target: p50 ≤ 1 ms.',
    '',
    '| | Overhead p50 | Overhead p99 | SDK round trip p50 / p99 | Total p50 / p99 | p50 target met? |',
    '|---|---|---|---|---|---|',
    `| Non-streamed | **${ms(g.nonStreamed.overhead.p50Ms)}** | ${ms(g.nonStreamed.overhead.p99Ms)} | ${ms(g.nonStreamed.providerTime.p50Ms)} / ${ms(g.nonStreamed.providerTime.p99Ms)} | ${ms(g.nonStreamed.total.p50Ms)} / ${ms(g.nonStreamed.total.p99Ms)} | ${met(g.nonStreamed.overhead.p50Ms)} |`,
    `| Streamed (SSE; deltas reach the live-event bus, no follower) | **${ms(g.streamed.overhead.p50Ms)}** | ${ms(g.streamed.overhead.p99Ms)} | ${ms(g.streamed.providerTime.p50Ms)} / ${ms(g.streamed.providerTime.p99Ms)} | ${ms(g.streamed.total.p50Ms)} / ${ms(g.streamed.total.p99Ms)} | ${met(g.streamed.overhead.p50Ms)} |`,
    '',
    'The p99 of the overhead is dominated by event-loop pauses (GC, other processes on the shared cores), not by gateway work.',
    '',
  ];
}
