// The lifecycle of one run's environment as the manager sees it. Every change goes through
// transition(), which asserts: a paused environment must be resumed before a command runs, a
// destroyed one is never used again.
import assert from 'node:assert/strict';

export const ENV_STATE = {
  busy: 'busy',
  idle: 'idle',
  paused: 'paused',
  /** Torn down; its files live on in the latest manifest and a rebuild restores them. */
  released: 'released',
} as const;
export type EnvState = (typeof ENV_STATE)[keyof typeof ENV_STATE];
export type EnvEvent = 'built' | 'call_started' | 'call_ended' | 'paused' | 'resumed' | 'released';

const TRANSITIONS: Record<EnvState, Partial<Record<EnvEvent, EnvState>>> = {
  busy: { call_ended: 'idle', released: 'released' },
  idle: { call_started: 'busy', paused: 'paused', released: 'released' },
  paused: { resumed: 'idle', released: 'released' },
  released: { built: 'idle' },
};

export function transition(from: EnvState, event: EnvEvent): EnvState {
  const to = TRANSITIONS[from][event];
  assert.ok(to !== undefined, `environment cannot go from ${from} on ${event}`);
  return to;
}
