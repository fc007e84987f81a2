// Fan-in over branches (ctx.all / ctx.any / ctx.race): watches the branches, decides once, and
// hands the decision to the site that journals it; on replay a journaled decision is returned as it
// was, whatever order the branches settle in this time. The same code serves the main thread's ctx
// and an isolate's (agent code in a worker thread): it never commits, cancels or touches a run
// itself — the site does, on the main thread (decision-commit.ts).
import { KeelError, deserializeError, serializeError } from '../domain/keel-error.ts';
import type { SerializedError } from '../domain/keel-error.ts';
import type { Json } from '../domain/json.ts';
import type { AgentContext } from '../sdk/types.ts';
import { toJson } from './journal-cursor.ts';

export const FAN_IN_MODES = ['all', 'any', 'race'] as const;
export type FanInMode = (typeof FAN_IN_MODES)[number];

/** Branches one fan-in may watch: a bound on what one decision journals. */
export const FAN_IN_BRANCHES_MAX = 256;

/** How a branch ended, as far as the fan-in saw before its decision. */
export type BranchState = 'pending' | 'succeeded' | 'failed' | 'refused';

/** What a fan-in decided: journaled once, at its position (`args` is everything but the outcome). */
export interface Decision {
  mode: FanInMode;
  /** The branch that decided it (its index); null when all succeeded or every branch failed. */
  branch: number | null;
  /** That branch's journal position, when it was a ctx call of this run. */
  branchSeq: number | null;
  ok: boolean;
  value: Json;
  error: SerializedError | null;
  /**
   * Positions of the branches still pending at the decision (ctx calls only): abandoned, and their
   * child runs cancelled with the decision.
   */
  losers: number[];
  /** Branches whose value `verify` refused, and branches that failed, before the decision. */
  refused: number[];
  failed: number[];
}

/** Where a fan-in runs: its journal position, and the way to journal its decision. */
export interface FanInSite {
  /** What the journal holds at the fan-in's position (undefined: no decision yet). */
  journaled: { status: string; result: Json; error: SerializedError | null } | undefined;
  /** The journal position of a branch made by a ctx call of this run, if it was one. */
  positionOf(branch: Promise<unknown>): number | undefined;
  /** Journals the decision (and cancels the losers) before the fan-in settles with it. */
  commit(decision: Decision): Promise<void>;
}

/** Checks a fan-in's arguments before it takes a position (a call failing them takes none). */
export function checkFanIn(mode: FanInMode, branches: unknown, verify: unknown): void {
  if (!Array.isArray(branches) || branches.some((b) => !(b instanceof Promise)))
    throw new TypeError(`ctx.${mode}() expects an array of promises (ctx calls)`);
  if (branches.length > FAN_IN_BRANCHES_MAX)
    throw new TypeError(`ctx.${mode}() takes at most ${FAN_IN_BRANCHES_MAX} branches`);
  if (mode !== 'all' && branches.length === 0)
    throw new TypeError(`ctx.${mode}() needs at least one branch`);
  if (verify !== undefined && typeof verify !== 'function')
    throw new TypeError(`ctx.${mode}() options.verify must be a function`);
}

/**
 * Remembers which journal position each ctx call's promise stands for, so a losing branch can be
 * cancelled. `tag` wraps a ctx method; `taken` is called where the method takes its position
 * (synchronously, before its first await).
 */
export class BranchPositions {
  readonly #positions = new WeakMap<Promise<unknown>, number>();
  #last: number | undefined;

  taken(seq: number): void {
    this.#last = seq;
  }

  tag<A extends unknown[], R>(method: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
    return (...args: A) => {
      this.#last = undefined;
      const promise = method(...args);
      if (this.#last !== undefined) this.#positions.set(promise, this.#last);
      this.#last = undefined;
      return promise;
    };
  }

  positionOf(branch: Promise<unknown>): number | undefined {
    return this.#positions.get(branch);
  }
}

/** The ctx with each effect method's promise tagged with its position (fan-ins look them up). */
export function tagEffects(ctx: AgentContext, branches: BranchPositions): AgentContext {
  return {
    ...ctx,
    step: branches.tag(ctx.step) as AgentContext['step'],
    model: branches.tag(ctx.model),
    tool: branches.tag(ctx.tool) as AgentContext['tool'],
    waitForInput: branches.tag(ctx.waitForInput) as AgentContext['waitForInput'],
    sleep: branches.tag(ctx.sleep),
    child: branches.tag(ctx.child) as AgentContext['child'],
  };
}

/**
 * Settles a fan-in: from its journaled decision on replay, else from the branches as they settle.
 * `all` resolves with every value (its success needs no decision of its own: replay finds the same
 * values) and fails with the first failure seen; `any` takes the first success `verify` accepts
 * (`fan_in_exhausted` when none is left); `race` takes the first branch to settle, either way.
 */
export function settleFanIn(
  mode: FanInMode,
  branches: ReadonlyArray<Promise<unknown>>,
  verify: ((value: never) => boolean) | undefined,
  site: FanInSite,
): Promise<Json> {
  // The fan-in answers for its branches: a losing branch's failure is nobody's unhandled rejection.
  for (const branch of branches) branch.catch(() => {});
  const journaled = site.journaled;
  if (journaled?.status === 'failed')
    return Promise.reject(
      deserializeError(journaled.error ?? { code: 'internal', message: 'decision without error' }),
    );
  if (journaled?.status === 'succeeded' && mode !== 'all') return Promise.resolve(journaled.result);
  return new Promise<Json>((resolve, reject) => {
    const states: BranchState[] = branches.map(() => 'pending');
    const values: Json[] = branches.map(() => null);
    let decided = false;
    const decide = (branch: number | null, ok: boolean, value: Json, error: unknown): void => {
      decided = true;
      const decision: Decision = {
        mode,
        branch,
        branchSeq: branch === null ? null : (site.positionOf(branches[branch]!) ?? null),
        ok,
        value: ok ? value : null,
        error: ok ? null : serializeError(error, 'agent_error'),
        losers: pendingPositions(branches, states, site),
        refused: indexesIn(states, 'refused'),
        failed: indexesIn(states, 'failed'),
      };
      site
        .commit(decision)
        .then(() => (ok ? resolve(value) : reject(deserializeError(decision.error!))), reject);
    };
    const settled = (i: number, ok: boolean, value: unknown, error: unknown): void => {
      if (decided) return;
      const accepted = ok && (mode !== 'any' || verify === undefined || passes(verify, value));
      states[i] = ok ? (accepted ? 'succeeded' : 'refused') : 'failed';
      if (ok) values[i] = toJson(value);
      const verdict = verdictAfter(mode, i, states, values, error);
      if (verdict !== undefined) decide(verdict.branch, verdict.ok, verdict.value, verdict.error);
    };
    if (branches.length === 0) return decide(null, true, [], null); // ctx.all([])
    for (const [i, branch] of branches.entries())
      branch.then(
        (value) => settled(i, true, value, null),
        (error: unknown) => settled(i, false, null, error),
      );
  });
}

/**
 * Whether branch `i` settling (its state just recorded) decides the fan-in, and how: `race` on any
 * settle, `any` on an accepted value or when none is left, `all` on a failure or when all
 * succeeded. Undefined: keep watching.
 */
function verdictAfter(
  mode: FanInMode,
  i: number,
  states: readonly BranchState[],
  values: readonly Json[],
  error: unknown,
): { branch: number | null; ok: boolean; value: Json; error: unknown } | undefined {
  const state = states[i]!;
  switch (mode) {
    case 'race':
      return { branch: i, ok: state === 'succeeded', value: values[i]!, error };
    case 'any':
      if (state === 'succeeded') return { branch: i, ok: true, value: values[i]!, error: null };
      if (states.includes('pending')) return undefined;
      return { branch: null, ok: false, value: null, error: exhausted(states) };
    case 'all':
      if (state === 'failed') return { branch: i, ok: false, value: null, error };
      if (states.includes('pending')) return undefined;
      return { branch: null, ok: true, value: values as Json[], error: null };
    default:
      return mode satisfies never;
  }
}

/** A `verify` that throws refuses the value (a broken check must not pick a winner). */
function passes(verify: (value: never) => boolean, value: unknown): boolean {
  try {
    return verify(toJson(value) as never) === true;
  } catch {
    return false;
  }
}

function pendingPositions(
  branches: ReadonlyArray<Promise<unknown>>,
  states: readonly BranchState[],
  site: FanInSite,
): number[] {
  const positions: number[] = [];
  states.forEach((state, i) => {
    const seq = state === 'pending' ? site.positionOf(branches[i]!) : undefined;
    if (seq !== undefined) positions.push(seq);
  });
  return positions;
}

function indexesIn(states: readonly BranchState[], wanted: BranchState): number[] {
  const out: number[] = [];
  states.forEach((state, i) => {
    if (state === wanted) out.push(i);
  });
  return out;
}

function exhausted(states: readonly BranchState[]): KeelError {
  return new KeelError(
    'fan_in_exhausted',
    `no branch of ctx.any() succeeded and passed verification (${states.length} branches)`,
    { details: { branches: states.map((outcome, index) => ({ index, outcome })) } },
  );
}
