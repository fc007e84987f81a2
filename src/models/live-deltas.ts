// Ephemeral run events — `model.delta` token deltas, `tool.output` pieces of a tool's output —
// fanned out in-process to whoever follows a run live (the SSE route, an embedded follower), and
// through a relay (src/domain/live-events.ts) to and from other processes on the same database.
// Nothing here is durable or replayed: the final model message and the tool's result are committed
// once by the engine; a subscriber that joins late or resumes sees only the committed events.
// Listeners must be cheap and must not throw; a throwing listener is dropped rather than allowed to
// break a model or tool call.

import type { LiveEvent, LiveRelay } from '../domain/live-events.ts';

export type { LiveEvent } from '../domain/live-events.ts';

export class LiveDeltas {
  readonly #listeners = new Map<string, Set<(event: LiveEvent) => void>>();
  #relay: LiveRelay | undefined;
  /** Per followed run: ends this process's announcement to the relay. */
  readonly #following = new Map<string, () => void>();

  /**
   * Carries events to and from other processes on the same database: events of runs followed
   * elsewhere are sent there; events sent from elsewhere reach this process's followers.
   */
  attachRelay(relay: LiveRelay): void {
    this.#relay = relay;
    relay.onEvent((runId, event) => this.#deliver(runId, event));
    for (const runId of this.#listeners.keys()) this.#following.set(runId, relay.follow(runId));
  }

  /** Whether anyone follows `runId`, here or elsewhere (publishers skip building events nobody reads). */
  has(runId: string): boolean {
    return this.#listeners.has(runId) || this.#relay?.followedElsewhere(runId) === true;
  }

  publish(runId: string, event: LiveEvent): void {
    this.#deliver(runId, event);
    if (this.#relay?.followedElsewhere(runId) === true) this.#relay.send(runId, event);
  }

  /**
   * Resolves once `runId`'s live events sent to other processes have gone out: awaited before a
   * step's result is committed, so a follower elsewhere sees the output before the completion.
   */
  settled(runId: string): Promise<void> | undefined {
    return this.#relay?.followedElsewhere(runId) === true ? this.#relay.settled(runId) : undefined;
  }

  #deliver(runId: string, event: LiveEvent): void {
    const set = this.#listeners.get(runId);
    if (set === undefined) return;
    for (const listener of set) {
      try {
        listener(event);
      } catch {
        set.delete(listener);
      }
    }
  }

  /** Calls `listener` for each live event of `runId`; returns the unsubscribe function. */
  subscribe(runId: string, listener: (event: LiveEvent) => void): () => void {
    let set = this.#listeners.get(runId);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(runId, set);
      if (this.#relay !== undefined) this.#following.set(runId, this.#relay.follow(runId));
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.#listeners.get(runId) === set) {
        this.#listeners.delete(runId);
        this.#following.get(runId)?.();
        this.#following.delete(runId);
      }
    };
  }
}
