// Progress and stuck runs for one live run: coalesces the agent's ctx.progress reports into small
// commits of their own (never journal positions, so a replay repeats nothing), and watches that the
// run moves — a progress report, a journal write, a tool attempt starting. A run that has not moved
// for its agent's `stallAfterMs` is marked stalled (`run.stalled`, the run's `stalled` field) and
// its `onStall` policy runs; the next move clears it (`run.unstalled`). It never runs a side effect
// again itself: an aborted tool attempt goes back through the tool runner's retry and
// unknown-outcome rules.
import { KeelError } from '../domain/keel-error.ts';
import type { Json } from '../domain/json.ts';
import type { RunProgress, RunStall, StallPolicy } from '../domain/records.ts';
import type { RunPort } from './run-port.ts';

/** The largest ctx.progress state, as JSON text. */
export const PROGRESS_MAX_BYTES = 16 * 1024;

/** ctx.progress's state, checked where it is called (agent code, in-thread or in an isolate). */
export function checkProgress(state: unknown): Json {
  const text = JSON.stringify(state ?? null);
  if (Buffer.byteLength(text) > PROGRESS_MAX_BYTES)
    throw new KeelError(
      'progress_too_large',
      `ctx.progress state is ${Buffer.byteLength(text)} bytes of JSON; the limit is ${PROGRESS_MAX_BYTES}`,
    );
  return JSON.parse(text) as Json;
}

export class StallWatch {
  readonly #x: RunPort;
  readonly #afterMs: number | undefined;
  readonly #policy: StallPolicy;
  #movedAt: number;
  #stall: RunStall | undefined;
  #timer: NodeJS.Timeout | undefined;
  #pending: RunProgress | undefined;
  #flushing = false;
  #closed = false;

  constructor(x: RunPort, stallAfterMs: number | undefined, policy: StallPolicy = 'alert') {
    this.#x = x;
    this.#afterMs = stallAfterMs;
    this.#policy = policy;
    this.#movedAt = x.clock.now();
    this.#arm(stallAfterMs);
  }

  /** ctx.progress: the latest state wins; at most one progress commit is in flight. */
  progress(state: Json): void {
    this.moved();
    this.#pending = { state, at: this.#x.clock.now() };
    if (!this.#flushing) void this.#flush();
  }

  /** The run moved (a journal write, a tool attempt started, a progress report). */
  moved(): void {
    this.#movedAt = this.#x.clock.now();
    const stall = this.#stall;
    if (stall === undefined || this.#closed) return;
    this.#stall = undefined;
    this.#commitQuietly({
      run: { stalled: null },
      events: [
        {
          type: 'run.unstalled',
          data: {
            since: new Date(stall.since).toISOString(),
            stalledMs: this.#movedAt - stall.since,
          },
        },
      ],
    });
  }

  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    const release = this.#x.hold(); // the run neither parks nor ends under a progress commit
    try {
      while (this.#pending !== undefined && this.#x.stopped === undefined && !this.#closed) {
        const progress = this.#pending;
        this.#pending = undefined;
        await this.#x.commit({ run: { progress } }).catch(() => {});
      }
    } finally {
      release();
      this.#flushing = false;
    }
  }

  #arm(delayMs: number | undefined): void {
    if (delayMs === undefined || this.#closed) return;
    this.#timer = setTimeout(() => this.#check(), Math.max(1, delayMs));
    this.#timer.unref();
  }

  #check(): void {
    const afterMs = this.#afterMs!;
    const due = this.#movedAt + afterMs - this.#x.clock.now();
    const e = this.#x.effects;
    // Not stalled: it moved since, it is stopping, or it waits with a reason (a pool, a rate limit).
    if (due > 0 || this.#x.stopped !== undefined || e.modelWaits > 0 || e.reportedPoolWaits > 0) {
      this.#arm(due > 0 ? due : afterMs);
      return;
    }
    const attempt = [...e.toolAttempts.values()][0];
    const first = this.#stall === undefined;
    this.#stall ??= {
      since: this.#movedAt,
      effect:
        attempt === undefined
          ? null
          : { seq: attempt.seq, kind: 'tool', name: attempt.name, attempt: attempt.attempt },
      policy: this.#policy,
    };
    const stall = this.#stall;
    const view = { ...stall, since: new Date(stall.since).toISOString() } as unknown as Json;
    if (first) {
      this.#x.log('warn', 'run stalled', { runId: this.#x.runId, policy: this.#policy });
      this.#commitQuietly({
        run: { stalled: stall },
        events: [{ type: 'run.stalled', data: view }],
      });
    }
    this.#movedAt = this.#x.clock.now(); // the policy acts again only after another stallAfterMs
    this.#apply(afterMs);
    this.#arm(afterMs);
  }

  #apply(afterMs: number): void {
    const x = this.#x;
    switch (this.#policy) {
      case 'alert':
        return;
      case 'retry-effect':
        for (const attempt of x.effects.toolAttempts.values())
          attempt.abort.abort(
            new KeelError(
              'effect_stalled',
              `tool ${attempt.name} (attempt ${attempt.attempt}) did not end within the run's stallAfterMs of ${afterMs} ms`,
              { details: { seq: attempt.seq, attempt: attempt.attempt } },
            ),
          );
        return;
      case 'fail':
        x.stop({
          kind: 'fail',
          error: new KeelError(
            'run_stalled',
            `run ${x.runId} did not move for its stallAfterMs of ${afterMs} ms`,
            { details: { stallAfterMs: afterMs, effect: this.#stall?.effect ?? null } },
          ),
        });
        return;
      default: {
        const never: never = this.#policy;
        throw new Error(`unknown stall policy ${String(never)}`);
      }
    }
  }

  #commitQuietly(commit: Parameters<RunPort['commit']>[0]): void {
    if (this.#x.stopped !== undefined) return;
    const release = this.#x.hold();
    void this.#x
      .commit(commit)
      .catch(() => {})
      .finally(release);
  }
}
