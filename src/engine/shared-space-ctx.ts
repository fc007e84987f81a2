// ctx.shared for both ctx implementations (the in-thread ctx and an isolate's): checks each call's
// arguments before a position is taken (a bad path fails the same way on every replay) and hands
// the call, with its journal name, to the ctx's own dispatch. Holds no state and reaches no store.
import {
  checkExpectedVersion,
  checkSharedContent,
  checkSharedPath,
  checkSharedPrefix,
} from '../domain/shared-space.ts';
import type { Json, SharedSpace } from '../sdk/types.ts';

/** One shared-space call, as journaled and sent across threads. */
export type SharedCall =
  | { op: 'read'; path: string }
  | { op: 'write'; path: string; content: string; expectedVersion: number }
  | { op: 'list'; prefix: string };

/** The journal name of a call: what a replay checks its position against. */
export function sharedCallName(call: SharedCall): string {
  return call.op === 'list' ? `list:${call.prefix}` : `${call.op}:${call.path}`;
}

/** `dispatch` takes the call's position synchronously (before its first await) and runs it. */
export function sharedSpace(dispatch: (call: SharedCall) => Promise<Json>): SharedSpace {
  return {
    read: async (path) => dispatch({ op: 'read', path: checkSharedPath(path) }) as never,
    write: async (path, content, options) => {
      const call: SharedCall = {
        op: 'write',
        path: checkSharedPath(path),
        content: checkSharedContent(content),
        expectedVersion: checkExpectedVersion(options?.expectedVersion),
      };
      return dispatch(call) as never;
    },
    list: async (prefix) => dispatch({ op: 'list', prefix: checkSharedPrefix(prefix) }) as never,
  };
}
