// The fan-in decision rules (fan-in.ts) on their own: what each mode decides from branches settling
// in a given order, what the decision names as losers, and that a journaled decision is returned on
// replay without waiting for any branch. The commits behind a decision are tested end to end in
// test/fan-in.test.ts and test/fan-in-crash.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeelError } from '../domain/keel-error.ts';
import {
  BranchPositions,
  checkFanIn,
  settleFanIn,
  type Decision,
  type FanInMode,
  type FanInSite,
} from './fan-in.ts';

/** A branch the test settles by hand. */
function branch() {
  let resolve!: (value: unknown) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<unknown>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A site recording the decisions it is asked to journal; branch i stands for position 10 + i. */
function site(branches: Array<{ promise: Promise<unknown> }>, journaled?: FanInSite['journaled']) {
  const decisions: Decision[] = [];
  const positions = new Map(branches.map((b, i) => [b.promise, 10 + i]));
  const s: FanInSite = {
    journaled,
    positionOf: (p) => positions.get(p),
    commit: async (d) => {
      decisions.push(d);
    },
  };
  return { s, decisions };
}

const tick = () => new Promise((r) => setImmediate(r));

function fan(mode: FanInMode, n: number, verify?: (v: never) => boolean) {
  const bs = Array.from({ length: n }, branch);
  const { s, decisions } = site(bs);
  const result = settleFanIn(
    mode,
    bs.map((b) => b.promise),
    verify,
    s,
  );
  result.catch(() => {});
  return { bs, result, decisions };
}

describe('settleFanIn', () => {
  it('any with verify: a refused value does not win; the next accepted one does, the rest lose', async () => {
    const { bs, result, decisions } = fan('any', 3, ((v: { ok: boolean }) => v.ok) as never);
    bs[0]!.resolve({ ok: false });
    await tick();
    assert.equal(decisions.length, 0);
    bs[1]!.resolve({ ok: true, n: 1 });
    assert.deepEqual(await result, { ok: true, n: 1 });
    assert.equal(decisions.length, 1);
    const d = decisions[0]!;
    assert.deepEqual(
      [d.branch, d.branchSeq, d.ok, d.refused, d.failed, d.losers],
      [1, 11, true, [0], [], [12]],
    );
    bs[2]!.resolve({ ok: true });
    await tick();
    assert.equal(decisions.length, 1, 'decided once');
  });

  it('any: a verify that throws refuses; none left is fan_in_exhausted', async () => {
    const { bs, result, decisions } = fan('any', 2, (() => {
      throw new Error('broken check');
    }) as never);
    bs[0]!.resolve(1);
    bs[1]!.reject(new KeelError('child_failed', 'no'));
    await assert.rejects(result, { code: 'fan_in_exhausted' });
    assert.deepEqual([decisions[0]!.refused, decisions[0]!.failed], [[0], [1]]);
  });

  it('race: the first to settle decides, a failure included', async () => {
    const { bs, result, decisions } = fan('race', 2);
    bs[1]!.reject(new KeelError('step_failed', 'boom'));
    await assert.rejects(result, { code: 'step_failed' });
    assert.deepEqual([decisions[0]!.branch, decisions[0]!.losers], [1, [10]]);
  });

  it('all: every value in branch order; a failure decides and names the pending as losers', async () => {
    const ok = fan('all', 2);
    ok.bs[1]!.resolve('b');
    ok.bs[0]!.resolve('a');
    assert.deepEqual(await ok.result, ['a', 'b']);
    assert.deepEqual([ok.decisions[0]!.ok, ok.decisions[0]!.branch], [true, null]);

    const bad = fan('all', 3);
    bad.bs[0]!.resolve('a');
    bad.bs[2]!.reject(new KeelError('child_failed', 'c failed'));
    await assert.rejects(bad.result, { code: 'child_failed' });
    assert.deepEqual([bad.decisions[0]!.branch, bad.decisions[0]!.losers], [2, [11]]);
  });

  it('a journaled decision is returned as it was, whatever the branches do now', async () => {
    const bs = [branch(), branch()];
    const { s, decisions } = site(bs, { status: 'succeeded', result: { winner: 0 }, error: null });
    const result = settleFanIn(
      'any',
      bs.map((b) => b.promise),
      undefined,
      s,
    );
    bs[1]!.reject(new Error('a loser failing on replay is nobody’s unhandled rejection'));
    assert.deepEqual(await result, { winner: 0 });
    assert.equal(decisions.length, 0, 'nothing journaled again');

    const failed = site(bs, {
      status: 'failed',
      result: null,
      error: { code: 'fan_in_exhausted', message: 'none' },
    });
    await assert.rejects(
      settleFanIn(
        'race',
        bs.map((b) => b.promise),
        undefined,
        failed.s,
      ),
      { code: 'fan_in_exhausted' },
    );
  });
});

describe('checkFanIn and BranchPositions', () => {
  it('refuses what is not an array of promises, an empty any/race and a verify that is no function', () => {
    assert.throws(() => checkFanIn('all', 'x', undefined), TypeError);
    assert.throws(() => checkFanIn('all', [1], undefined), TypeError);
    assert.throws(() => checkFanIn('any', [], undefined), TypeError);
    assert.throws(() => checkFanIn('any', [Promise.resolve()], 'yes'), TypeError);
    checkFanIn('all', [], undefined);
  });

  it('tags the promise of a method with the position it took, and nothing else', () => {
    const positions = new BranchPositions();
    const take = positions.tag(async (seq: number) => {
      positions.taken(seq);
      return seq;
    });
    const none = positions.tag(async () => 0);
    const p = take(7);
    assert.equal(positions.positionOf(p), 7);
    assert.equal(positions.positionOf(none()), undefined);
  });
});
