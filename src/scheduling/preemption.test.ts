import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  choosePreemptions,
  PREEMPT_PAUSE_MAX_MS,
  PreemptionPacer,
  requeueDelayMs,
  type HeldRun,
} from './preemption.ts';

const batch = (runId: string, positions: number, startedAt: number, exempt = false): HeldRun => ({
  runId,
  priority: 'batch',
  positions,
  startedAt,
  exempt,
});
const interactive = (runId: string, positions: number, startedAt: number): HeldRun => ({
  runId,
  priority: 'interactive',
  positions,
  startedAt,
  exempt: false,
});

describe('choosePreemptions: when', () => {
  const held = [batch('b1', 3, 10), batch('b2', 5, 20)];

  it('nothing while a slot is free: the process claims the interactive run itself', () => {
    assert.deepEqual(choosePreemptions({ starved: 2, pending: 0, full: false, held }), []);
  });

  it('nothing when no interactive run has waited past the target', () => {
    assert.deepEqual(choosePreemptions({ starved: 0, pending: 0, full: true, held }), []);
  });

  it('as soon as one has, with every slot held', () => {
    assert.deepEqual(choosePreemptions({ starved: 1, pending: 0, full: true, held }), ['b1']);
  });
});

describe('choosePreemptions: how many', () => {
  const held = [batch('b1', 1, 1), batch('b2', 2, 2), batch('b3', 3, 3), batch('b4', 4, 4)];

  it('as many as interactive runs wait', () => {
    assert.equal(choosePreemptions({ starved: 3, pending: 0, full: true, held }).length, 3);
  });

  it('less those already asked to yield (their slots are promised)', () => {
    const withPending = [...held.slice(0, 3), batch('b4', 4, 4, true)];
    assert.deepEqual(choosePreemptions({ starved: 3, pending: 1, full: true, held: withPending }), [
      'b1',
      'b2',
    ]);
    assert.deepEqual(
      choosePreemptions({ starved: 1, pending: 1, full: true, held: withPending }),
      [],
    );
  });

  it('no more than the batch runs it holds', () => {
    assert.equal(choosePreemptions({ starved: 10, pending: 0, full: true, held }).length, 4);
  });
});

describe('choosePreemptions: which', () => {
  it('never an interactive run, nor an exempt one (asked already, ending, on probation)', () => {
    const held = [interactive('i1', 0, 99), batch('x', 0, 98, true), batch('b', 7, 1)];
    assert.deepEqual(choosePreemptions({ starved: 3, pending: 0, full: true, held }), ['b']);
  });

  it('least progressed first (fewest committed positions), then the most recently started', () => {
    const held = [
      batch('old-far', 40, 1),
      batch('old-new', 2, 5),
      batch('young-new', 2, 50),
      batch('young-far', 30, 60),
    ];
    assert.deepEqual(choosePreemptions({ starved: 3, pending: 0, full: true, held }), [
      'young-new',
      'old-new',
      'young-far',
    ]);
  });
});

describe('requeueDelayMs', () => {
  it('is measured by the claim right after a preemption only', () => {
    const preempted = { preemptedAt: 1_000, preemptedLeaseToken: 4 };
    assert.equal(requeueDelayMs({ ...preempted, leaseToken: 5, updatedAt: 1_250 }), 250);
    assert.equal(
      requeueDelayMs({ ...preempted, leaseToken: 6, updatedAt: 9_000 }),
      null,
      'a later claim',
    );
    assert.equal(
      requeueDelayMs({ preemptedAt: null, preemptedLeaseToken: null, leaseToken: 1, updatedAt: 5 }),
      null,
      'never preempted',
    );
  });
});

describe('PreemptionPacer', () => {
  const interactive1 = [{ priority: 'interactive' as const }];

  it('no pause while rounds let interactive runs in', () => {
    const pacer = new PreemptionPacer(2_000);
    assert.equal(pacer.startRound(0, 0), true);
    pacer.claimed(interactive1);
    assert.equal(pacer.startRound(100, 0), true);
    pacer.claimed([{ priority: 'batch' }, ...interactive1]);
    assert.equal(pacer.startRound(200, 0), true);
    assert.equal(pacer.paused(200), false);
  });

  it('a round that let no interactive run in pauses the next: the target, then doubling, up to the cap', () => {
    const pacer = new PreemptionPacer(2_000);
    assert.equal(pacer.startRound(0, 0), true);
    pacer.claimed([{ priority: 'batch' }]); // the freed slot went to batch work
    assert.equal(pacer.startRound(250, 0), false);
    assert.equal(pacer.pauseMs, 2_000);
    assert.equal(pacer.paused(2_000), true);
    assert.equal(pacer.paused(2_250), false);
    assert.equal(pacer.startRound(2_250, 0), true, 'a round after the pause');
    assert.equal(pacer.startRound(2_500, 0), false);
    assert.equal(pacer.pauseMs, 4_000);
    let now = 10_000;
    for (let i = 0; i < 10; i++) {
      pacer.startRound(now, 0);
      pacer.startRound(now + 1, 0);
      now += 100_000;
    }
    assert.equal(pacer.pauseMs, PREEMPT_PAUSE_MAX_MS);
    assert.equal(pacer.startRound(now, 0), true);
    pacer.claimed(interactive1);
    assert.equal(pacer.startRound(now + 1, 0), true, 'success clears the pause');
    assert.equal(pacer.pauseMs, 0);
  });

  it('a round is not judged while its runs have not all yielded (a run in a long step still holds its slot)', () => {
    const pacer = new PreemptionPacer(2_000);
    assert.equal(pacer.startRound(0, 0), true);
    assert.equal(pacer.startRound(250, 1), true, 'one preemption pending: no verdict yet');
    pacer.claimed(interactive1);
    assert.equal(pacer.startRound(500, 0), true);
    assert.equal(pacer.pauseMs, 0);
  });
});
