// The effect state machine: the moves the engine makes are allowed, and a settled effect never
// moves again.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertEffectMove, EffectStatus } from './effect-status.ts';

test('the moves the engine journals are allowed', () => {
  const moves: Array<[EffectStatus, EffectStatus]> = [
    ['pending', 'succeeded'],
    ['pending', 'failed'],
    ['pending', 'waiting'],
    ['pending', 'running'],
    ['running', 'succeeded'],
    ['running', 'unknown'],
    ['running', 'running'],
    ['unknown', 'succeeded'],
    ['waiting', 'waiting'],
    ['waiting', 'succeeded'],
    ['waiting', 'failed'],
    ['waiting', 'running'], // a side-effect tool call parked before it was made (its pool's queue was full) starts
  ];
  for (const [from, to] of moves)
    assert.doesNotThrow(() => assertEffectMove(from, to, 'test'), `${from} → ${to}`);
});

test('a settled effect never moves, and nothing skips back to pending', () => {
  for (const from of ['succeeded', 'failed'] as const) {
    for (const to of Object.values(EffectStatus))
      if (to !== from)
        assert.throws(() => assertEffectMove(from, to, 'test'), /illegal effect transition/);
  }
  assert.throws(() => assertEffectMove('waiting', 'unknown', 'test'), /illegal effect transition/);
  assert.throws(() => assertEffectMove('waiting', 'pending', 'test'), /illegal effect transition/);
  assert.throws(() => assertEffectMove('running', 'pending', 'test'), /illegal effect transition/);
});
