// The `recoveryTree` section: a tree of attempts (each with a cost, a duration and a success
// probability; its failures split by share into further attempts or giving up) flattened into every
// path from the first attempt to success or giving up, and summed into success odds, on-time odds
// and spend. Every attempt on a path is paid for and takes its full seconds, failed or not. Pure
// arithmetic; the scenario schema bounds the tree's size.
import assert from 'node:assert/strict';
import { brief, percent } from './display.ts';
import {
  add,
  chosen,
  constant,
  div,
  figure,
  mul,
  named,
  sub,
  sum,
  type Expr,
  type Figure,
} from './formula.ts';
import type { Attempt, RecoveryTreeInput } from './scenario.ts';

/**
 * Path probabilities must total 1; each attempt's shares may stray by the schema's tolerance, so
 * allow some slack.
 */
const PATH_TOTAL_TOLERANCE = 1e-3;

export type PathOutcome = 'success' | 'gave up';

export interface RecoveryPath {
  /**
   * 1, 2, …: the totals' formulas call this path's probability, cost and seconds `P1`, `cost1`,
   * `seconds1`.
   */
  index: number;
  attempts: string[];
  outcome: PathOutcome;
  probability: Figure;
  cost: Figure;
  seconds: Figure;
  /** Succeeded within deadlineSeconds. */
  onTime: boolean;
}

export interface RecoveryTreeResult {
  successProbability: Figure;
  onTimeSuccessProbability: Figure;
  expectedSpend: Figure;
  expectedSeconds: Figure;
  /** All spend ÷ successes: failed tasks' spend is carried by the successful ones. */
  costPerSuccess: Figure;
  costPerOnTimeSuccess: Figure;
  paths: RecoveryPath[];
  recommendation: string;
}

interface Walk {
  attempts: string[];
  factors: Expr[];
  costs: Expr[];
  seconds: Expr[];
}

type Ended = Walk & { outcome: PathOutcome };

/**
 * Depth-first, in the order the scenario lists branches: success first, then each failure share.
 */
function pathsOf(root: Attempt): Ended[] {
  const done: Ended[] = [];
  const pending: Array<{ attempt: Attempt; walk: Walk } | { ended: Ended }> = [
    { attempt: root, walk: { attempts: [], factors: [], costs: [], seconds: [] } },
  ];
  while (pending.length > 0) {
    const item = pending.pop()!;
    if ('ended' in item) {
      done.push(item.ended);
      continue;
    }
    const { attempt, walk: before } = item;
    const walk: Walk = {
      attempts: [...before.attempts, attempt.name],
      factors: before.factors,
      costs: [...before.costs, named(`cost(${attempt.name})`, attempt.cost)],
      seconds: [...before.seconds, named(`seconds(${attempt.name})`, attempt.seconds)],
    };
    const failed = sub(constant(1), named(`p(${attempt.name})`, attempt.successProbability));
    const branches = attempt.onFailure ?? [];
    const next: Array<{ attempt: Attempt; walk: Walk } | { ended: Ended }> = [
      {
        ended: {
          ...walk,
          factors: [...walk.factors, named(`p(${attempt.name})`, attempt.successProbability)],
          outcome: 'success',
        },
      },
    ];
    if (branches.length === 0)
      next.push({ ended: { ...walk, factors: [...walk.factors, failed], outcome: 'gave up' } });
    for (const branch of branches) {
      const share = named(`share(${attempt.name}→${branch.next?.name ?? 'give up'})`, branch.share);
      const factors = [...walk.factors, failed, share];
      next.push(
        branch.next === undefined
          ? { ended: { ...walk, factors, outcome: 'gave up' } }
          : { attempt: branch.next, walk: { ...walk, factors } },
      );
    }
    pending.push(...next.reverse()); // the stack pops them in listed order
  }
  return done;
}

export function planRecoveryTree(input: RecoveryTreeInput): RecoveryTreeResult {
  const paths = pathsOf(input.root).map((walk, i): RecoveryPath => {
    const [firstFactor, ...factors] = walk.factors;
    const [firstCost, ...costs] = walk.costs;
    const [firstSeconds, ...seconds] = walk.seconds;
    assert.ok(
      firstFactor !== undefined && firstCost !== undefined && firstSeconds !== undefined,
      'a path has at least one attempt',
    );
    const secondsFigure = figure(add(firstSeconds, ...seconds), 's');
    return {
      index: i + 1,
      attempts: walk.attempts,
      outcome: walk.outcome,
      probability: figure(mul(firstFactor, ...factors), 'probability'),
      cost: figure(add(firstCost, ...costs), 'cost'),
      seconds: secondsFigure,
      onTime: walk.outcome === 'success' && secondsFigure.value <= input.deadlineSeconds,
    };
  });
  const total = paths.reduce((s, p) => s + p.probability.value, 0);
  assert.ok(
    Math.abs(total - 1) <= PATH_TOTAL_TOLERANCE,
    `path probabilities total ${total}, not 1`,
  );
  const prob = (p: RecoveryPath) => named(`P${p.index}`, p.probability);
  const success = figure(
    sum(paths.filter((p) => p.outcome === 'success').map(prob), 'P(paths that succeed)'),
    'probability',
  );
  const onTime = figure(
    sum(
      paths.filter((p) => p.onTime).map(prob),
      `P(paths that succeed within deadlineSeconds = ${input.deadlineSeconds})`,
    ),
    'probability',
  );
  const spend = figure(
    sum(
      paths.map((p) => mul(prob(p), named(`cost${p.index}`, p.cost))),
      'P × cost over all paths',
    ),
    'cost',
  );
  const perSuccess = (name: string, odds: Figure): Figure =>
    odds.value === 0
      ? chosen(Number.POSITIVE_INFINITY, 'cost', `no path ${name}: ${odds.formula}`)
      : figure(div(named('expectedSpend', spend), named(name, odds)), 'cost');
  const result = {
    successProbability: success,
    onTimeSuccessProbability: onTime,
    expectedSpend: spend,
    expectedSeconds: figure(
      sum(
        paths.map((p) => mul(prob(p), named(`seconds${p.index}`, p.seconds))),
        'P × seconds over all paths',
      ),
      's',
    ),
    costPerSuccess: perSuccess('successProbability', success),
    costPerOnTimeSuccess: perSuccess('onTimeSuccessProbability', onTime),
    paths,
  };
  return { ...result, recommendation: recommend(result) };
}

function recommend(r: Omit<RecoveryTreeResult, 'recommendation'>): string {
  const head = `${percent(r.successProbability.value)} of tasks succeed, ${percent(r.onTimeSuccessProbability.value)} on time; each success costs ${brief(r.costPerSuccess.value)} and each on-time success ${brief(r.costPerOnTimeSuccess.value)}.`;
  const late = r.paths
    .filter((p) => p.outcome === 'success' && !p.onTime)
    .sort((a, b) => b.probability.value - a.probability.value)[0];
  const lost = r.paths
    .filter((p) => p.outcome === 'gave up')
    .sort((a, b) => b.probability.value - a.probability.value)[0];
  const worst = [late, lost]
    .filter((p) => p !== undefined)
    .sort((a, b) => b.probability.value - a.probability.value)[0];
  if (worst === undefined) return head;
  const what = worst.outcome === 'success' ? 'misses the deadline' : 'gives up';
  return `${head} The likeliest miss ${what}: ${worst.attempts.join(' → ')} (${percent(worst.probability.value)}).`;
}
