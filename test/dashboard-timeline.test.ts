// The dashboard timeline's queued vs executing split, computed from what a real run journals: two
// model calls that share one model slot (the second one queues), two parallel tools (one retried),
// an input wait. Plus the edge cases of missing timestamps. The bar logic is the web app's own
// module (web/src/timeline-segments.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { segmentsOf } from '../web/src/timeline-segments.ts';
import { research, writer } from './fixtures/dashboard-agents.ts';
import { startKeel } from './support/keel-server.ts';

test('a real run’s journal splits into queued, executing and waiting bars', {
  timeout: 30_000,
}, async (t) => {
  const keel = await startKeel({ agents: [research], models: [writer] });
  t.after(() => keel.close());
  const run = (await keel.request('POST', '/v1/runs', { agent: 'research', input: { topic: 't' } }))
    .body;
  await keel.waitForRun(run.id, (r) => r.status === 'waiting');
  const waiting = (await keel.request('GET', `/v1/runs/${run.id}/steps`)).body.steps;
  const now = Date.now();
  const input = waiting.find((s: any) => s.kind === 'input');
  assert.deepEqual(
    segmentsOf(input, now).map((s) => [s.kind, s.to]),
    [['waiting', now]],
    'an open wait grows until now',
  );

  await keel.request('POST', `/v1/runs/${run.id}/input`, { key: 'approve', value: true });
  await keel.waitForRun(run.id, (r) => r.status === 'succeeded');
  const steps = (await keel.request('GET', `/v1/runs/${run.id}/steps`)).body.steps;
  const bars = (seq: number) =>
    segmentsOf(
      steps.find((s: any) => s.seq === seq),
      Date.now(),
    );
  const kinds = (seq: number) => bars(seq).map((s) => s.kind);

  const models = steps.filter((s: any) => s.kind === 'model').map((s: any) => s.seq);
  assert.equal(models.length, 2);
  const queuedMs = (seq: number) =>
    bars(seq)
      .filter((s) => s.kind === 'queued')
      .reduce((n, s) => n + s.to - s.from, 0);
  const [longer, shorter] = [...models].sort((a: number, b: number) => queuedMs(b) - queuedMs(a));
  assert.ok(
    queuedMs(longer) >= 100,
    `one call queued for about the other's latency (${queuedMs(longer)} ms)`,
  );
  assert.ok(queuedMs(shorter) < queuedMs(longer) / 2, 'the other found the slot free');
  const [queued, executing] = bars(longer);
  assert.ok(
    queued?.kind === 'queued' && executing?.kind === 'executing' && queued.to === executing.from,
    'queued ends where executing starts',
  );

  const fetchPage = steps.find((s: any) => s.name === 'fetch-page');
  assert.equal(fetchPage.attempts, 2, 'the retry is journaled');
  assert.ok(kinds(fetchPage.seq).includes('executing'));
  assert.deepEqual(kinds(input.seq), ['waiting']);
  for (const s of steps)
    for (const bar of segmentsOf(s, Date.now())) assert.ok(bar.to >= bar.from, JSON.stringify(s));
});

test('missing timestamps: no start means executing from queued; no times at all means no bar', () => {
  const at = (ms: number) => new Date(ms).toISOString();
  assert.deepEqual(
    segmentsOf(
      { kind: 'model', status: 'failed', queuedAt: at(1000), startedAt: null, endedAt: at(1500) },
      9999,
    ),
    [{ kind: 'executing', from: 1000, to: 1500 }],
  );
  assert.deepEqual(
    segmentsOf(
      { kind: 'tool', status: 'unknown', queuedAt: null, startedAt: at(2000), endedAt: null },
      5000,
    ),
    [{ kind: 'executing', from: 2000, to: 5000 }],
    'an unknown outcome is open-ended',
  );
  assert.deepEqual(
    segmentsOf(
      { kind: 'step', status: 'succeeded', queuedAt: null, startedAt: null, endedAt: null },
      5000,
    ),
    [],
  );
  assert.deepEqual(
    segmentsOf(
      { kind: 'tool', status: 'succeeded', queuedAt: at(10), startedAt: at(10), endedAt: at(30) },
      99,
    ),
    [{ kind: 'executing', from: 10, to: 30 }],
    'no queued bar when the slot was free at once',
  );
});
