// Placement simulator (issue 24): 160 virtual sandbox nodes, bursts of 5,000 requests/s from several
// placers that share one stale load view (refreshed every HEARTBEAT_MS, as heartbeats reach the
// store) and each count only their own placements since. Compares power-of-k, least-loaded and
// random with the placement code the runtime uses (src/nodes/placement.ts). Deterministic (seeded),
// CPU only: `npm run bench:placement` (or `node bench/placement-sim.ts [--json]`).
import { performance } from 'node:perf_hooks';
import {
  type NodeLoad,
  PlacementView,
  placementOrder,
  type Strategy,
} from '../src/nodes/placement.ts';
import { seededRandom } from '../src/nodes/seeded-random.ts';

const NODES = 160;
/** Slots per node: a mix of small, medium and large hosts (mean 24). */
const SLOT_MIX = [8, 16, 24, 32, 40];
const PLACERS = 4;
/** How often the shared view is refreshed: a fresh-ish and a stale view. */
const REFRESHES_MS = [500, 2_000];
const DURATION_MS = 20_000;
/** Offered load: 5,000 requests/s for a second, then 1,500/s for a second, repeated. */
const BURST_PER_S = 5_000;
const LULL_PER_S = 1_500;
/** Mean sandboxed-call duration (exponential). 5,000/s × 0.9 s ≈ 4,500 busy of 3,840 slots: over. */
const MEAN_CALL_MS = 900;
const CANDIDATES = 4;
const SEED = 20_261_202;

interface Result {
  strategy: string;
  refreshMs: number;
  requests: number;
  /** Attempts that reached a full node (each one a refusal the node had to give). */
  overloads: number;
  /** Calls every candidate refused (they wait and retry). */
  unplaced: number;
  /** Mean over 100 ms samples of max/mean utilisation across nodes, during bursts. */
  imbalance: number;
  /** Placement decisions/s measured on the order computation alone. */
  decisionsPerS: number;
}

function simulate(strategy: Strategy, k: number, refreshMs: number): Result {
  const random = seededRandom(SEED);
  const slots = Array.from({ length: NODES }, (_, i) => SLOT_MIX[i % SLOT_MIX.length]!);
  const active = new Array<number>(NODES).fill(0);
  const ends: number[][] = Array.from({ length: DURATION_MS + 60_000 }, () => []);
  const placers = Array.from({ length: PLACERS }, () => new PlacementView());
  const ids = slots.map((_, i) => String(i));
  const refresh = () => {
    const view: NodeLoad[] = slots.map((s, i) => ({ id: ids[i]!, slots: s, active: active[i]! }));
    for (const placer of placers) placer.refresh(view);
  };
  refresh();
  let requests = 0;
  let overloads = 0;
  let unplaced = 0;
  let decisionMs = 0;
  let decisions = 0;
  const imbalances: number[] = [];
  let carry = 0;
  for (let t = 0; t < DURATION_MS; t++) {
    for (const node of ends[t]!) active[node]!--;
    if (t % refreshMs === 0 && t > 0) refresh();
    const burst = Math.floor(t / 1_000) % 2 === 0;
    carry += (burst ? BURST_PER_S : LULL_PER_S) / 1_000;
    for (; carry >= 1; carry--) {
      requests++;
      const placer = placers[requests % PLACERS]!;
      const started = performance.now();
      const order = placer.order({ strategy, k, candidates: CANDIDATES, random });
      decisionMs += performance.now() - started;
      decisions++;
      let placed = false;
      for (const id of order) {
        const node = Number(id);
        if (active[node]! >= slots[node]!) {
          overloads++;
          continue;
        }
        active[node]!++;
        placer.placed(id);
        const duration = Math.max(1, Math.round(-Math.log(1 - random()) * MEAN_CALL_MS));
        ends[t + duration]!.push(node);
        placed = true;
        break;
      }
      if (!placed) unplaced++;
    }
    if (burst && t % 100 === 99) {
      const utilisation = active.map((a, i) => a / slots[i]!);
      const mean = utilisation.reduce((s, u) => s + u, 0) / NODES;
      if (mean > 0) imbalances.push(Math.max(...utilisation) / mean);
    }
  }
  return {
    strategy: strategy === 'power-of-k' ? `power-of-k (k=${k})` : strategy,
    refreshMs,
    requests,
    overloads,
    unplaced,
    imbalance: imbalances.reduce((s, x) => s + x, 0) / imbalances.length,
    decisionsPerS: decisions / (decisionMs / 1_000),
  };
}

/** The orders of a 160-node view, alone: the cost of one decision without the simulation around it. */
function decisionRate(strategy: Strategy, k: number): number {
  const random = seededRandom(SEED);
  const view = Array.from({ length: NODES }, (_, i) => ({
    id: String(i),
    slots: SLOT_MIX[i % SLOT_MIX.length]!,
    active: Math.floor(random() * 20),
  }));
  const recent = new Map<string, number>();
  const count = 100_000;
  const started = performance.now();
  for (let i = 0; i < count; i++)
    placementOrder(view, recent, { strategy, k, candidates: CANDIDATES, random });
  return count / ((performance.now() - started) / 1_000);
}

const runs: Array<[Strategy, number]> = [
  ['power-of-k', 2],
  ['power-of-k', 3],
  ['least-loaded', 1],
  ['random', 1],
];
const isolated = new Map(
  runs.map(([strategy, k]) => [`${strategy}/${k}`, decisionRate(strategy, k)]),
);
const results = REFRESHES_MS.flatMap((refreshMs) =>
  runs.map(([strategy, k]) => ({
    ...simulate(strategy, k, refreshMs),
    isolatedDecisionsPerS: isolated.get(`${strategy}/${k}`)!,
  })),
);
if (process.argv.includes('--json')) {
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
} else {
  process.stdout.write(
    `${NODES} nodes (${SLOT_MIX.join('/')} slots, ${slots()} in all), ${PLACERS} placers, ` +
      `${DURATION_MS / 1_000} s alternating ${BURST_PER_S}/s and ${LULL_PER_S}/s, calls ${MEAN_CALL_MS} ms mean, ` +
      `${CANDIDATES} candidates per call, seed ${SEED}\n\n`,
  );
  process.stdout.write(
    '| View refreshed every | Strategy | Requests | Placed on a full node (refusals) | Refusals per request | Unplaced (all candidates full) | Imbalance max/mean (bursts) | Decisions/s (in sim) | Decisions/s (alone) |\n|---|---|---|---|---|---|---|---|---|\n',
  );
  for (const r of results) {
    process.stdout.write(
      `| ${r.refreshMs} ms | ${r.strategy} | ${r.requests} | ${r.overloads} | ${(r.overloads / r.requests).toFixed(3)} | ${r.unplaced} | ${r.imbalance.toFixed(2)} | ${Math.round(r.decisionsPerS).toLocaleString('en')} | ${Math.round(r.isolatedDecisionsPerS).toLocaleString('en')} |\n`,
    );
  }
}

function slots(): number {
  let total = 0;
  for (let i = 0; i < NODES; i++) total += SLOT_MIX[i % SLOT_MIX.length]!;
  return total;
}
