// The `routing` section: which model replica a request should go to. A replica's estimated total is
// network + queue + expected prefill (cache hit → the hit prefill, else the miss prefill); the
// least total wins, the earlier replica on a tie. Also finds, per replica, the queue at which the
// choice flips. Pure arithmetic.
import { brief } from './display.ts';
import { add, chosen, constant, figure, mul, named, sub, type Figure } from './formula.ts';
import type { Replica, RoutingInput } from './scenario.ts';

export interface RoutedReplica {
  name: string;
  expectedPrefillMs: Figure;
  totalMs: Figure;
  /**
   * For the chosen replica, the queue above which another replica wins; for the others, the queue
   * below which this one would win (negative: it cannot win on queue alone). Infinity when there is
   * no other replica.
   */
  flipQueueMs: Figure;
}

export interface RoutingResult {
  replicas: RoutedReplica[];
  choice: string;
  recommendation: string;
}

interface Estimate {
  replica: Replica;
  prefill: Figure;
  total: Figure;
}

export function planRouting(input: RoutingInput): RoutingResult {
  const network = named('networkMs', input.networkMs);
  const estimates = input.replicas.map((replica): Estimate => {
    const hit = named(`cacheHit(${replica.name})`, replica.cacheHit);
    const prefill = figure(
      add(
        mul(hit, named(`prefillHitMs(${replica.name})`, replica.prefillHitMs)),
        mul(sub(constant(1), hit), named(`prefillMissMs(${replica.name})`, replica.prefillMissMs)),
      ),
      'ms',
    );
    const total = figure(
      add(
        network,
        named(`queueMs(${replica.name})`, replica.queueMs),
        named(`expectedPrefillMs(${replica.name})`, prefill),
      ),
      'ms',
    );
    return { replica, prefill, total };
  });
  // Strictly less: a tie keeps the earlier replica, so the listed order is the tie-break.
  const best = estimates.reduce((a, b) => (b.total.value < a.total.value ? b : a));
  const others = estimates.filter((e) => e !== best);
  const runnerUp =
    others.length === 0
      ? undefined
      : others.reduce((a, b) => (b.total.value < a.total.value ? b : a));
  const replicas = estimates.map(
    (e): RoutedReplica => ({
      name: e.replica.name,
      expectedPrefillMs: e.prefill,
      totalMs: e.total,
      flipQueueMs: flipQueue(e, e === best ? runnerUp : best),
    }),
  );
  const flip = replicas[estimates.indexOf(best)]!.flipQueueMs;
  const recommendation =
    runnerUp === undefined
      ? `Route to ${best.replica.name}, the only replica (${brief(best.total.value)} ms).`
      : `Route to ${best.replica.name} (${brief(best.total.value)} ms against ${brief(runnerUp.total.value)} ms on ${runnerUp.replica.name}); that holds until its queue passes ${brief(flip.value)} ms.`;
  return { replicas, choice: best.replica.name, recommendation };
}

/** The queue of `e` at which its total equals `rival`'s: rival total − (e's total − e's queue). */
function flipQueue(e: Estimate, rival: Estimate | undefined): Figure {
  if (rival === undefined)
    return chosen(Number.POSITIVE_INFINITY, 'ms', 'no other replica: the choice never flips');
  const own = named(`totalMs(${e.replica.name})`, e.total);
  const queue = named(`queueMs(${e.replica.name})`, e.replica.queueMs);
  return figure(sub(named(`totalMs(${rival.replica.name})`, rival.total), sub(own, queue)), 'ms');
}
