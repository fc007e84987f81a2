// Fans store change notifications out to the SSE streams that follow a run, so a stream wakes when
// its run gets new events instead of polling. One store subscription for the whole API; listeners
// are removed when streams close.
import type { Store } from '../store/store.ts';

export class EventHub {
  readonly #listeners = new Map<string, Set<() => void>>();
  /** Tenant-wide streams (GET /v1/events): woken by every change. */
  readonly #everything = new Set<() => void>();
  readonly #unsubscribe: () => void;

  constructor(store: Store) {
    this.#unsubscribe = store.onChange((changes) => {
      if (changes.length > 0) for (const listener of this.#everything) listener();
      for (const change of changes) {
        // '*': the store may have missed changes (its change feed reconnected): every stream
        // re-reads.
        const sets =
          change.runId === '*'
            ? [...this.#listeners.values()]
            : [this.#listeners.get(change.runId)];
        for (const set of sets) if (set !== undefined) for (const listener of set) listener();
      }
    });
  }

  /** Calls `listener` whenever the run changes; returns the unsubscribe function. */
  subscribe(runId: string, listener: () => void): () => void {
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

  /** Calls `listener` whenever any run changes; returns the unsubscribe function. */
  subscribeAll(listener: () => void): () => void {
    this.#everything.add(listener);
    return () => this.#everything.delete(listener);
  }

  close(): void {
    this.#everything.clear();
    this.#unsubscribe();
    this.#listeners.clear();
  }
}
