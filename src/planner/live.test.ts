// The live measurement on hand-made runs and steps, with the arithmetic written out; and the paging
// against an in-memory fake of the runs API (window cut-off, the run cap, steps read per run).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  collectSample,
  computeWorkload,
  LIVE_RUNS_MAX,
  measureWorkload,
  type LiveRun,
  type LiveSource,
  type LiveStep,
} from './live.ts';

const NOW = new Date('2025-01-01T00:10:00.000Z');
const at = (secondsBeforeNow: number): string =>
  new Date(NOW.getTime() - secondsBeforeNow * 1000).toISOString();
const run = (id: string, status: string, createdSecondsAgo: number): LiveRun => ({
  id,
  status,
  createdAt: at(createdSecondsAgo),
});
/**
 * An effect that was queued at q, started at s (or never: null) and ended at e, in seconds before
 * NOW.
 */
const step = (kind: string, q: number, s: number | null, e: number | null): LiveStep => ({
  kind,
  queuedAt: at(q),
  startedAt: s === null ? null : at(s),
  endedAt: e === null ? null : at(e),
});

describe('computeWorkload', () => {
  it('derives each field from the sample', () => {
    const m = computeWorkload({
      windowSeconds: 100,
      now: NOW,
      capped: false,
      runs: [
        // finished: 2 model calls (2 s, 4 s) and tools of 1 s + 3 s
        {
          run: run('a', 'succeeded', 50),
          steps: [
            step('model', 50, 50, 48),
            step('tool', 48, 48, 47),
            step('tool', 48, 47, 44),
            step('model', 44, 44, 40),
            step('step', 40, 40, 40),
          ],
        },
        // finished: 4 model calls; one has no startedAt (duration from queuedAt: 3 s), the others 1
        // s each; tool 2 s
        {
          run: run('b', 'failed', 30),
          steps: [
            step('model', 30, 30, 29),
            step('model', 29, null, 26),
            step('model', 26, 26, 25),
            step('tool', 25, 25, 23),
            step('model', 23, 23, 22),
          ],
        },
        // still running: its ended model call (6 s) counts for model seconds, its calls not for
        // rounds; unended ones not at all
        {
          run: run('c', 'running', 10),
          steps: [step('model', 10, 10, 4), step('model', 4, 4, null), step('tool', 4, 4, 1)],
        },
      ],
    });
    // arrival: 3 runs created ÷ 100 s window
    assert.equal(m.arrivalPerSec, 3 / 100);
    // rounds: model calls in finished runs (2 + 4) ÷ finished runs (2) = 3
    assert.equal(m.roundsPerTask, 3);
    // model seconds: (2 + 4 + 1 + 3 + 1 + 1 + 6) ÷ 7 ended model calls = 18 ÷ 7
    assert.ok(Math.abs(m.modelSecondsPerRound - 18 / 7) < 1e-12);
    // tool seconds per round: tools in finished runs (1 + 3 + 2 = 6) ÷ model calls in finished runs
    // (6) = 1
    assert.equal(m.toolSecondsPerRound, 1);
    assert.deepEqual(
      [m.runsSampled, m.finishedRunsSampled, m.modelCallsTimed, m.capped],
      [3, 2, 7, false],
    );
    assert.equal(m.formulas.roundsPerTask, 'modelCallsInFinishedRuns ÷ finishedRuns = 6 ÷ 2');
    assert.equal(m.formulas.arrivalPerSec, 'runsCreated ÷ windowSeconds = 3 ÷ 100');
    assert.equal(m.since, at(100));
    assert.match(m.notes.join('\n'), /tenant/);
  });

  it('an empty window measures zeros and says why', () => {
    const m = computeWorkload({ windowSeconds: 60, now: NOW, capped: false, runs: [] });
    assert.deepEqual(
      [m.arrivalPerSec, m.roundsPerTask, m.modelSecondsPerRound, m.toolSecondsPerRound],
      [0, 0, 0, 0],
    );
    assert.match(m.formulas.roundsPerTask, /\(no finishedRuns: 0\)$/);
    assert.match(m.notes.join('\n'), /No runs were created in the window/);
  });

  it('a capped sample divides by the seconds it spans, not the window', () => {
    // 2 runs, the oldest created 40 s ago: 2 ÷ 40 s, although the window is 300 s
    const m = computeWorkload({
      windowSeconds: 300,
      now: NOW,
      capped: true,
      runs: [
        { run: run('x', 'running', 5), steps: [] },
        { run: run('y', 'running', 40), steps: [] },
      ],
    });
    assert.equal(m.arrivalPerSec, 2 / 40);
    assert.equal(m.formulas.arrivalPerSec, 'runsSampled ÷ secondsSpanned = 2 ÷ 40');
    assert.match(m.notes.join('\n'), new RegExp(`more than ${LIVE_RUNS_MAX} runs`));
  });
});

/**
 * The runs API over an in-memory list (newest first), pages of `limit`, the cursor being the next
 * index.
 */
function fakeSource(
  runs: LiveRun[],
  steps: (id: string) => LiveStep[],
): LiveSource & { stepCalls: string[] } {
  const stepCalls: string[] = [];
  return {
    stepCalls,
    async listRuns({ limit, cursor }) {
      const from = cursor === undefined ? 0 : Number(cursor);
      const page = runs.slice(from, from + limit);
      return { runs: page, nextCursor: from + limit < runs.length ? String(from + limit) : null };
    },
    async listSteps(id) {
      stepCalls.push(id);
      return steps(id);
    },
  };
}

describe('collectSample', () => {
  it('pages down to the window start, skips runs newer than now, and reads each sampled run’s steps', async () => {
    // 450 runs one second apart, newest 1 s in the future: the window of 300 s holds those created
    // 0…300 s ago
    const runs = Array.from({ length: 450 }, (_, i) => run(`r${i}`, 'succeeded', i - 1));
    const source = fakeSource(runs, () => [step('model', 1, 1, 0)]);
    const sample = await collectSample(source, 300, NOW);
    assert.equal(sample.runs.length, 301);
    assert.equal(sample.runs[0]!.run.id, 'r1');
    assert.equal(sample.runs.at(-1)!.run.id, 'r301');
    assert.equal(sample.capped, false);
    assert.equal(source.stepCalls.length, 301);
    assert.ok(sample.runs.every((r) => r.steps.length === 1));
  });

  it('stops at LIVE_RUNS_MAX and says so', async () => {
    const runs = Array.from({ length: LIVE_RUNS_MAX + 5 }, (_, i) =>
      run(`r${i}`, 'running', i / 100),
    );
    const m = await measureWorkload(
      fakeSource(runs, () => []),
      300,
      NOW,
    );
    assert.equal(m.runsSampled, LIVE_RUNS_MAX);
    assert.equal(m.capped, true);
  });
});
