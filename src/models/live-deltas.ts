// Ephemeral run events — `model.delta` token deltas, `tool.output` pieces of a tool's output —
// fanned out in-process to whoever follows a run live (the SSE route, an embedded follower).
// Nothing here is durable or replayed: the final model message and the tool's result are committed
// once by the engine; a subscriber that joins late or resumes sees only the committed events.
// Listeners must be cheap and must not throw; a throwing listener is dropped rather than allowed to
// break a model or tool call.

export interface LiveEvent {
  type: 'model.delta' | 'tool.output';
  data: Record<string, unknown>;
}

export class LiveDeltas {
  readonly #listeners = new Map<string, Set<(event: LiveEvent) => void>>();

  /** Whether anyone follows `runId` (publishers skip building events nobody reads). */
  has(runId: string): boolean {
    return this.#listeners.has(runId);
  }

  publish(runId: string, event: LiveEvent): void {
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
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(runId);
    };
  }
}
