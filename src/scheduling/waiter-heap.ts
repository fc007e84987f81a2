// A min-heap of pool waiters by their order key (then arrival), with lazy removal: a waiter that
// left the queue (granted elsewhere, aborted) is marked gone by its pool and dropped when it reaches
// the top. It only orders; it never grants and never counts waiters (the pool's lane does).

export interface HeapWaiter {
  /** Order inside its tenant and class: smaller goes first. */
  key: number;
  /** Arrival number in its pool: breaks ties of keys, so equal keys are served first come. */
  seq: number;
  /** False once the waiter left the queue; the heap then drops it lazily. */
  queued: boolean;
}

const before = (a: HeapWaiter, b: HeapWaiter): boolean =>
  a.key !== b.key ? a.key < b.key : a.seq < b.seq;

export class WaiterHeap<W extends HeapWaiter> {
  readonly #items: W[] = [];

  push(waiter: W): void {
    const items = this.#items;
    items.push(waiter);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(items[i]!, items[parent]!)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  /** Drops every waiter (all have left the queue: nothing lingers in a lane that emptied). */
  clear(): void {
    this.#items.length = 0;
  }

  /** The first waiter still queued, or undefined. */
  peek(): W | undefined {
    while (this.#items.length > 0 && !this.#items[0]!.queued) this.#pop();
    return this.#items[0];
  }

  #pop(): void {
    const items = this.#items;
    const last = items.pop()!;
    if (items.length === 0) return;
    items[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let min = i;
      if (l < items.length && before(items[l]!, items[min]!)) min = l;
      if (r < items.length && before(items[r]!, items[min]!)) min = r;
      if (min === i) return;
      [items[i], items[min]] = [items[min]!, items[i]!];
      i = min;
    }
  }
}
