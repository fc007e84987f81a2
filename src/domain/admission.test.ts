// Deadline-aware admission's estimate and decision: the runs ahead drain at the measured rate, no
// estimate without a measurement, and each `whenLate` applied only to a run expected late.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admission, expectedFinishAt } from './admission.ts';

describe('admission', () => {
  it('expects the runs ahead to drain at the measured rate, then the fastest recent run time', () => {
    // 60 completions in the 60 s window: 1 run/s; 120 ahead: 120 s, plus 3 s.
    assert.equal(expectedFinishAt({ ahead: 120, completed: 60, fastestMs: 3_000 }, 1_000), 124_000);
    assert.equal(expectedFinishAt({ ahead: 0, completed: 60, fastestMs: 3_000 }, 0), 3_000);
  });

  it('gives no estimate when nothing was measured', () => {
    assert.equal(expectedFinishAt({ ahead: 50, completed: 0, fastestMs: null }, 0), null);
  });

  it('applies whenLate only to a run expected after its deadline', () => {
    assert.equal(admission(200, 100, 'refuse'), 'refuse');
    assert.equal(admission(200, 100, 'batch'), 'batch');
    assert.equal(admission(200, 100, 'accept'), 'admit');
    assert.equal(admission(100, 100, 'refuse'), 'admit');
    assert.equal(admission(null, 100, 'refuse'), 'admit');
    assert.equal(admission(200, null, 'refuse'), 'admit');
  });
});
