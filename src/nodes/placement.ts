// Where a sandboxed call goes: power-of-k choices over a stale view of the nodes' load plus the
// placer's own placements since that view was read. Pure: no I/O, no clock, randomness passed in,
// so the simulator (bench/placement-sim.ts) and the property tests drive the same code as the
// runtime. It never decides admission: the node accepts or refuses by its real local capacity, and
// a refusal only moves the call to the next candidate of the order this module returns.

/** One node as the placer last saw it (a heartbeat read from the store). */
export interface NodeLoad {
  id: string;
  /** Sandboxed calls the node runs at once (its admission limit). */
  slots: number;
  /** Calls the node reported running at its last heartbeat. */
  active: number;
}

/** How a placer orders the nodes: the seed design's, and the two it is compared against. */
export const STRATEGIES = ['power-of-k', 'least-loaded', 'random'] as const;
export type Strategy = (typeof STRATEGIES)[number];

/** Default number of nodes sampled per choice (k = 2: "the power of two choices"). */
export const DEFAULT_PLACEMENT_K = 2;
/** Most candidates one call tries before it waits: a bound on refusals per call. */
export const DEFAULT_PLACEMENT_CANDIDATES = 4;

export interface PlacementOptions {
  strategy?: Strategy;
  k?: number;
  /** How many nodes the order names at most (the call's refusal budget). */
  candidates?: number;
  /** Uniform in [0, 1): Math.random in the runtime, a seeded generator in tests and the simulator. */
  random: () => number;
}

/**
 * A node's load for ordering: what it reported plus what this placer sent it since, over its
 * slots (a node without slots is full).
 */
export function loadOf(node: NodeLoad, recent: ReadonlyMap<string, number>): number {
  if (node.slots <= 0) return Number.POSITIVE_INFINITY;
  return (node.active + (recent.get(node.id) ?? 0)) / node.slots;
}

/**
 * The nodes to try, best first, at most `candidates` distinct ids. power-of-k: each position is the
 * least loaded of k nodes sampled (without replacement) from those not yet named; least-loaded:
 * the view sorted by load (ties by id); random: a uniform sample.
 * @example
 * const order = placementOrder(view, recent, { random: Math.random });
 * // try order[0]; on a refusal order[1]; ...
 */
export function placementOrder(
  view: readonly NodeLoad[],
  recent: ReadonlyMap<string, number>,
  options: PlacementOptions,
): string[] {
  const strategy = options.strategy ?? 'power-of-k';
  const want = Math.min(options.candidates ?? DEFAULT_PLACEMENT_CANDIDATES, view.length);
  if (want <= 0) return [];
  if (strategy === 'least-loaded') {
    return [...view]
      .sort((a, b) => loadOf(a, recent) - loadOf(b, recent) || (a.id < b.id ? -1 : 1))
      .slice(0, want)
      .map((node) => node.id);
  }
  const k = strategy === 'random' ? 1 : Math.max(1, options.k ?? DEFAULT_PLACEMENT_K);
  // A partial Fisher–Yates over a copy: each step draws from the nodes not yet named.
  const pool = [...view];
  const order: string[] = [];
  let left = pool.length;
  while (order.length < want) {
    let best: NodeLoad | undefined;
    let bestAt = -1;
    for (let draw = 0; draw < Math.min(k, left); draw++) {
      const at = draw + Math.floor(options.random() * (left - draw));
      [pool[draw], pool[at]] = [pool[at]!, pool[draw]!];
      const node = pool[draw]!;
      if (best === undefined || loadOf(node, recent) < loadOf(best, recent)) {
        best = node;
        bestAt = draw;
      }
    }
    order.push(best!.id);
    // Move the chosen node past the end of the live part so it is never drawn again.
    left--;
    [pool[bestAt], pool[left]] = [pool[left]!, pool[bestAt]!];
  }
  return order;
}

/**
 * A placer's memory between two refreshes of the view: the view itself and the placements made
 * since, counted as load so a burst does not pile onto the node that looked emptiest. Holds no
 * durable state: a restarted placer starts from the next view.
 */
export class PlacementView {
  #nodes: NodeLoad[] = [];
  readonly #recent = new Map<string, number>();

  /** A fresh view (from heartbeats): the placements counted so far are in it now, or ended. */
  refresh(nodes: readonly NodeLoad[]): void {
    this.#nodes = [...nodes];
    this.#recent.clear();
  }

  get nodes(): readonly NodeLoad[] {
    return this.#nodes;
  }

  order(options: PlacementOptions, exclude: ReadonlySet<string> = new Set()): string[] {
    const view = exclude.size === 0 ? this.#nodes : this.#nodes.filter((n) => !exclude.has(n.id));
    return placementOrder(view, this.#recent, options);
  }

  /** A node accepted a call: it counts as load until the next refresh. */
  placed(nodeId: string): void {
    this.#recent.set(nodeId, (this.#recent.get(nodeId) ?? 0) + 1);
  }

  recentOf(nodeId: string): number {
    return this.#recent.get(nodeId) ?? 0;
  }
}
