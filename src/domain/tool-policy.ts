// Tool policy: what a tenant or an agent allows the model to call. The schema of a policy, and
// `evaluatePolicy`, a pure function from (policies, proposed call) to allow | deny | approval,
// checked by the engine before every tool dispatch. Nothing here reads a store, a clock or a
// request: the same call under the same policies always gets the same answer.
import { z } from 'zod';
import type { Json } from './json.ts';

/** How dangerous a tool is, in increasing order. A tool that declares none is `low`. */
export const RISK_LEVELS = ['low', 'medium', 'high', 'critical'] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

/** Default time a pending approval waits for a human before it resolves as denied, in ms. */
export const APPROVAL_EXPIRES_AFTER_MS_DEFAULT = 24 * 60 * 60 * 1000;
/** Longest expiry a policy may set, in ms (30 days). */
export const APPROVAL_EXPIRES_AFTER_MS_MAX = 30 * 24 * 60 * 60 * 1000;
/** Most patterns, constraints and rules in one list of a policy: a policy is a document, not a dataset. */
export const POLICY_LIST_MAX_ITEMS = 200;

const Pattern = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9._:/*-]+$/, 'tool patterns use letters, digits, . _ : / - and * (any run)');
const Patterns = z.array(Pattern).max(POLICY_LIST_MAX_ITEMS);
const Risk = z.enum(RISK_LEVELS);

/**
 * A refinement of one argument of matching tools, at a dotted path (`to`, `payment.amount`,
 * `items.0.sku`). A call whose value breaks it is denied, or, with `approval: 'required'`, waits for
 * a human. A missing value breaks only `required: true`.
 */
export const ArgumentConstraint = z
  .object({
    tool: Pattern,
    path: z.string().min(1).max(200),
    required: z.boolean().optional(),
    pattern: z
      .string()
      .max(500)
      .refine((source) => {
        try {
          new RegExp(source, 'u');
          return true;
        } catch {
          return false;
        }
      }, 'pattern must be a valid regular expression')
      .optional(),
    enum: z
      .array(z.union([z.string(), z.number(), z.boolean(), z.null()]))
      .max(POLICY_LIST_MAX_ITEMS)
      .optional(),
    minimum: z.number().optional(),
    maximum: z.number().optional(),
    maxLength: z.number().int().nonnegative().optional(),
    approval: z.literal('required').optional(),
  })
  .strict();
export type ArgumentConstraint = z.infer<typeof ArgumentConstraint>;

/**
 * A tool policy. Every field is optional; the empty policy allows everything.
 * @example
 * { allow: ['search', 'mcp:github.*'], deny: ['exec'], maxRisk: 'high',
 *   constraints: [{ tool: 'pay', path: 'amount', maximum: 100, approval: 'required' }],
 *   approval: { tools: ['send_email'], risk: 'high', expiresAfterMs: 3600000 } }
 */
export const ToolPolicy = z
  .object({
    /** Tool name patterns the model may call; absent: every tool not denied. */
    allow: Patterns.optional(),
    /** Tool name patterns the model may never call (wins over `allow`). */
    deny: Patterns.optional(),
    /** Calls of tools riskier than this are denied. */
    maxRisk: Risk.optional(),
    /** Calls whose declared cost (US dollars) is above this are denied. */
    maxCost: z.number().nonnegative().optional(),
    constraints: z.array(ArgumentConstraint).max(POLICY_LIST_MAX_ITEMS).optional(),
    /** Calls that wait for a human decision before they are dispatched. */
    approval: z
      .object({
        tools: Patterns.optional(),
        /** Calls of tools at this risk or above. */
        risk: Risk.optional(),
        /** Calls whose declared cost is above this. */
        costAbove: z.number().nonnegative().optional(),
        /** How long a request waits before it resolves as denied (`approval_expired`). */
        expiresAfterMs: z.number().int().min(1_000).max(APPROVAL_EXPIRES_AFTER_MS_MAX).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type ToolPolicy = z.infer<typeof ToolPolicy>;

/** What the engine knows about a proposed call when it asks the policy. */
export interface ProposedCall {
  tool: string;
  args: Json;
  risk: RiskLevel;
  /** The call's declared cost in US dollars (0 when the tool declares none). */
  cost: number;
}

export type PolicyDecision =
  | { kind: 'allow' }
  | { kind: 'deny'; rule: string; message: string }
  | { kind: 'approval'; rule: string; message: string; expiresAfterMs: number };

const SEVERITY = { allow: 0, approval: 1, deny: 2 } as const;

/** True when `name` matches the pattern (`*` stands for any run of characters, `:` and `.` too). */
export function matchesPattern(pattern: string, name: string): boolean {
  if (!pattern.includes('*')) return pattern === name;
  const parts = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\/-]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*')}$`, 's').test(name);
}

const matchesAny = (patterns: readonly string[] | undefined, name: string): string | undefined =>
  patterns?.find((pattern) => matchesPattern(pattern, name));

const riskRank = (risk: RiskLevel): number => RISK_LEVELS.indexOf(risk);

/** The value at a dotted path inside the arguments; undefined when absent. */
export function valueAtPath(args: Json, path: string): Json | undefined {
  let at: Json | undefined = args;
  for (const key of path.split('.')) {
    if (at === null || typeof at !== 'object') return undefined;
    at = Array.isArray(at) ? at[Number(key)] : (at as Record<string, Json>)[key];
  }
  return at;
}

/** Why `value` breaks the constraint, or undefined when it holds. */
export function constraintBreach(
  c: ArgumentConstraint,
  value: Json | undefined,
): string | undefined {
  if (value === undefined) return c.required === true ? `${c.path} is required` : undefined;
  if (c.enum !== undefined && !c.enum.some((allowed) => allowed === value))
    return `${c.path} must be one of ${JSON.stringify(c.enum)}`;
  if (
    c.pattern !== undefined &&
    !(typeof value === 'string' && new RegExp(c.pattern, 'u').test(value))
  )
    return `${c.path} must match /${c.pattern}/`;
  if (c.minimum !== undefined && !(typeof value === 'number' && value >= c.minimum))
    return `${c.path} must be a number ≥ ${c.minimum}`;
  if (c.maximum !== undefined && !(typeof value === 'number' && value <= c.maximum))
    return `${c.path} must be a number ≤ ${c.maximum}`;
  if (c.maxLength !== undefined) {
    const length =
      typeof value === 'string'
        ? [...value].length
        : Array.isArray(value)
          ? value.length
          : undefined;
    if (length === undefined || length > c.maxLength)
      return `${c.path} must be a string or array of at most ${c.maxLength}`;
  }
  return undefined;
}

/** One policy's answer (see evaluatePolicy for several). Rules are checked in a fixed order. */
export function evaluateOne(policy: ToolPolicy, call: ProposedCall): PolicyDecision {
  const deny = (rule: string, message: string): PolicyDecision => ({ kind: 'deny', rule, message });
  const denied = matchesAny(policy.deny, call.tool);
  if (denied !== undefined)
    return deny(`deny:${denied}`, `tool ${call.tool} is denied (${denied})`);
  if (policy.allow !== undefined && matchesAny(policy.allow, call.tool) === undefined)
    return deny('allow', `tool ${call.tool} is not in the allow list`);
  if (policy.maxRisk !== undefined && riskRank(call.risk) > riskRank(policy.maxRisk))
    return deny('maxRisk', `tool ${call.tool} is ${call.risk} risk, above ${policy.maxRisk}`);
  if (policy.maxCost !== undefined && call.cost > policy.maxCost)
    return deny('maxCost', `the call costs ${call.cost}, above ${policy.maxCost}`);
  let approval: PolicyDecision | undefined;
  const expiresAfterMs = policy.approval?.expiresAfterMs ?? APPROVAL_EXPIRES_AFTER_MS_DEFAULT;
  const ask = (rule: string, message: string): PolicyDecision => ({
    kind: 'approval',
    rule,
    message,
    expiresAfterMs,
  });
  for (const [index, c] of (policy.constraints ?? []).entries()) {
    if (!matchesPattern(c.tool, call.tool)) continue;
    const breach = constraintBreach(c, valueAtPath(call.args, c.path));
    if (breach === undefined) continue;
    if (c.approval !== 'required') return deny(`constraints.${index}`, breach);
    approval ??= ask(`constraints.${index}`, breach);
  }
  if (approval !== undefined) return approval;
  const gate = policy.approval;
  const asked = matchesAny(gate?.tools, call.tool);
  if (asked !== undefined)
    return ask(`approval.tools:${asked}`, `tool ${call.tool} needs approval`);
  if (gate?.risk !== undefined && riskRank(call.risk) >= riskRank(gate.risk))
    return ask('approval.risk', `tool ${call.tool} is ${call.risk} risk`);
  if (gate?.costAbove !== undefined && call.cost > gate.costAbove)
    return ask('approval.costAbove', `the call costs ${call.cost}, above ${gate.costAbove}`);
  return { kind: 'allow' };
}

/**
 * The answer of several policies at once (the tenant's and the agent's): the stricter applies —
 * deny over approval over allow; of two approvals, the shorter expiry; among equals, the first.
 */
export function evaluatePolicy(
  policies: readonly (ToolPolicy | undefined)[],
  call: ProposedCall,
): PolicyDecision {
  return policies
    .filter((policy) => policy !== undefined)
    .map((policy) => evaluateOne(policy, call))
    .reduce(stricter, { kind: 'allow' });
}

/** The stricter of two decisions (see evaluatePolicy). */
export function stricter(a: PolicyDecision, b: PolicyDecision): PolicyDecision {
  if (SEVERITY[b.kind] > SEVERITY[a.kind]) return b;
  if (a.kind === 'approval' && b.kind === 'approval' && b.expiresAfterMs < a.expiresAfterMs)
    return { ...a, expiresAfterMs: b.expiresAfterMs };
  return a;
}
