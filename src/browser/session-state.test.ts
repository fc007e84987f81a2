import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  reclaimReasonOf,
  SESSION_STATES,
  SESSION_TRANSITIONS,
  transition,
  type SessionEvent,
} from './session-state.ts';

const EVENTS: SessionEvent[] = ['ready', 'done', 'use', 'reclaim', 'finish', 'crash'];

describe('browser session states', () => {
  it('goes starting → active ⇄ idle → reclaiming → closed', () => {
    let state = transition('starting', 'ready');
    state = transition(state, 'done');
    state = transition(state, 'use');
    state = transition(state, 'done');
    state = transition(state, 'reclaim');
    assert.equal(transition(state, 'finish'), 'closed');
  });

  it('closes a crashed session by a reclaim, and never uses it again', () => {
    assert.equal(transition(transition('active', 'crash'), 'reclaim'), 'closed');
    assert.throws(() => transition('crashed', 'use'), /illegal browser session transition/);
  });

  it('lets nothing leave closed, and every move lands on a known state', () => {
    for (const event of EVENTS) assert.throws(() => transition('closed', event));
    for (const state of SESSION_STATES)
      for (const to of Object.values(SESSION_TRANSITIONS[state]))
        assert.ok(SESSION_STATES.includes(to));
  });

  it('names the reclaim after how the run left the process', () => {
    assert.equal(reclaimReasonOf('succeeded'), 'ended');
    assert.equal(reclaimReasonOf('cancelled'), 'ended');
    assert.equal(reclaimReasonOf('waiting'), 'waiting');
    assert.equal(reclaimReasonOf('queued'), 'preempted');
    assert.equal(reclaimReasonOf('lost'), 'lost');
  });
});
