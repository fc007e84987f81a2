// Model tiering: ordered rules that route a model call to a cheaper model when the tenant's daily
// budget runs low or a pool's backlog grows, and escalate a call hinted `risky` or `complex` to a
// stronger one. Pure: the gateway supplies the conditions (the budget share left, queue lengths),
// applies the decision and the engine journals it, so a replay never decides again. It never reads
// a clock, a store or a pool itself, and never names a model the rules do not.
import { KeelError } from '../domain/keel-error.ts';

/** What a call may say about itself (`ctx.model({ …, hint })`): escalation rules match on it. */
export const TIERING_HINTS = ['risky', 'complex'] as const;
export type TieringHint = (typeof TIERING_HINTS)[number];

export interface TieringRoute {
  /** The model asked for. */
  from: string;
  /** The model called instead. */
  to: string;
}

/** One rule of the models file's `tiering` list; the first rule that applies decides. */
export type TieringRule =
  | { when: { budgetRemainingBelow: number }; route: TieringRoute }
  | { when: { poolBacklogAbove: { pool: string; queued: number } }; route: TieringRoute }
  | { when: { hint: TieringHint }; escalate: { to: string } };

/** What the rules look at, as the gateway measured it when the call was about to go out. */
export interface TieringConditions {
  /**
   * Share (0 to 1) of the tenant's daily budget still unspent, the tighter of tokens and cost;
   * null when the tenant has no daily budget (budget rules never apply).
   */
  budgetRemaining: number | null;
  /** Calls queued in a pool (`model:<name>`) of this process now. */
  backlog(pool: string): number;
  hint: TieringHint | undefined;
}

export type TieringReason = 'budget' | 'backlog' | 'hint';

/** The decision, as journaled on the model call (`attributes.tiering`). */
export interface TieringDecision {
  requested: string;
  /** The model called: `requested` unless a rule routed or escalated the call. */
  model: string;
  /** Position of the deciding rule in the configured list. */
  rule: number;
  reason: TieringReason;
  /** Why, for operators: the condition as measured. */
  detail: string;
}

/**
 * The deciding rule for a call of `requested`, or null when no rule applies (the call keeps its
 * model). Escalation rules are looked at first, so a hinted call is never downgraded; among routes,
 * the first (in order) whose `from` is the requested model and whose condition holds wins. One rule
 * decides: routes do not chain.
 * @example
 * decideTier(rules, 'large', { budgetRemaining: 0.1, backlog: () => 0, hint: undefined });
 * // { requested: 'large', model: 'small', rule: 0, reason: 'budget', detail: '…' }
 */
export function decideTier(
  rules: readonly TieringRule[],
  requested: string,
  conditions: TieringConditions,
): TieringDecision | null {
  if (conditions.hint !== undefined) {
    for (const [index, rule] of rules.entries()) {
      if ('escalate' in rule && rule.when.hint === conditions.hint)
        return {
          requested,
          model: rule.escalate.to,
          rule: index,
          reason: 'hint',
          detail: `the call is hinted ${conditions.hint}`,
        };
    }
  }
  for (const [index, rule] of rules.entries()) {
    if (!('route' in rule) || rule.route.from !== requested) continue;
    const detail = conditionHolds(rule, conditions);
    if (detail !== null)
      return {
        requested,
        model: rule.route.to,
        rule: index,
        reason: 'budgetRemainingBelow' in rule.when ? 'budget' : 'backlog',
        detail,
      };
  }
  return null;
}

function conditionHolds(
  rule: Extract<TieringRule, { route: TieringRoute }>,
  conditions: TieringConditions,
): string | null {
  if ('budgetRemainingBelow' in rule.when) {
    const left = conditions.budgetRemaining;
    const below = rule.when.budgetRemainingBelow;
    return left !== null && left < below
      ? `the tenant has ${percent(left)} of its daily budget left (below ${percent(below)})`
      : null;
  }
  const { pool, queued } = rule.when.poolBacklogAbove;
  const backlog = conditions.backlog(pool);
  return backlog > queued ? `${backlog} calls queued in ${pool} (above ${queued})` : null;
}

function percent(share: number): string {
  return `${Math.round(share * 1000) / 10}%`;
}

/**
 * Checks rules against the configured models: every model a rule names must be configured, a route
 * must change the model. Throws `config_invalid` naming the rule (by its position) otherwise.
 */
export function checkTieringRules(
  rules: readonly TieringRule[],
  models: ReadonlySet<string>,
): void {
  const problems: string[] = [];
  for (const [index, rule] of rules.entries()) {
    const named = 'route' in rule ? [rule.route.from, rule.route.to] : [rule.escalate.to];
    for (const model of named)
      if (!models.has(model)) problems.push(`tiering.${index}: model ${model} is not configured`);
    if ('route' in rule && rule.route.from === rule.route.to)
      problems.push(
        `tiering.${index}: a route must name another model (from = to = ${rule.route.to})`,
      );
  }
  if (problems.length > 0)
    throw new KeelError('config_invalid', `tiering rules are invalid:\n  ${problems.join('\n  ')}`);
}
