import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  RUN_PHASES,
  acceptsWork,
  allows,
  isSettling,
  transition,
  type RunPhase,
  type RunPhaseEvent,
} from './run-phase.ts';

const EVENTS: RunPhaseEvent[] = [
  'finish',
  'park',
  'commit',
  'refused',
  'cancel',
  'fail',
  'lost',
  'shutdown',
  'preempt',
  'yield',
  'end',
];

// The lifecycle written out by hand, one legal move per line: everything not listed must be
// refused.
const LEGAL = `
running finish finishing
running park parking
running cancel stopping
running fail stopping
running lost stopping
running shutdown stopping
running preempt preempting
running end done
finishing commit committing
finishing park parking
finishing cancel stopping
finishing fail stopping
finishing lost stopping
finishing shutdown stopping
finishing end done
parking cancel stopping
parking fail stopping
parking lost stopping
parking shutdown stopping
parking end done
committing refused finishing
committing cancel finalizing
committing fail finalizing
committing lost finalizing
committing shutdown finalizing
committing end done
stopping commit finalizing
stopping end done
finalizing refused stopping
finalizing end done
preempting yield yielding
preempting cancel stopping
preempting shutdown stopping
preempting end done
yielding refused preempting
yielding cancel stopping
yielding end done
`;

const legal = new Map<string, RunPhase>();
for (const line of LEGAL.trim().split('\n')) {
  const [from, event, to] = line.split(' ') as [RunPhase, RunPhaseEvent, RunPhase];
  legal.set(`${from} ${event}`, to);
}

test('every legal phase move lands where the lifecycle says', () => {
  for (const [key, to] of legal) {
    const [from, event] = key.split(' ') as [RunPhase, RunPhaseEvent];
    assert.equal(transition(from, event), to, key);
    assert.equal(allows(from, event), true, key);
  }
});

test('every other move is refused with an error naming it', () => {
  let refused = 0;
  for (const from of RUN_PHASES) {
    for (const event of EVENTS) {
      if (legal.has(`${from} ${event}`)) continue;
      refused++;
      assert.equal(allows(from, event), false, `${from} ${event}`);
      assert.throws(() => transition(from, event), {
        message: `illegal run phase transition: ${from} --${event}-->`,
      });
    }
  }
  assert.equal(refused, RUN_PHASES.length * EVENTS.length - legal.size);
  assert.equal(RUN_PHASES.length, 9);
});

test('done is final, and every phase but done can end', () => {
  for (const event of EVENTS) assert.equal(allows('done', event), false, event);
  for (const from of RUN_PHASES)
    if (from !== 'done') assert.equal(transition(from, 'end'), 'done', from);
});

test('only a running execution accepts new work; a stopped one is not settling, so a heartbeat still reaches it', () => {
  assert.deepEqual(RUN_PHASES.filter(acceptsWork), ['running']);
  assert.deepEqual(RUN_PHASES.filter(isSettling), ['finishing', 'parking', 'committing', 'done']);
});
