// The `keel sim` scenario file: tenants (weights, arrival patterns), the agent mix, the fake model
// and fake browser (latency and failure models), fault windows counted from the scenario's start,
// and the capacity the planner compares against. One zod schema and one parse that names every bad
// field; it computes nothing from a scenario.
import { z } from 'zod';
import { KeelError } from '../domain/keel-error.ts';
import { LatencyModelSchema, SIMULATED_LATENCY_MAX_MS } from '../models/providers/mock-latency.ts';

/** Runs one scenario may submit in all: a typo cannot ask for a billion runs. */
export const SIM_RUNS_MAX = 100_000;
/** Rounds of one simulated agent. */
export const SIM_ROUNDS_MAX = 1_000;
/** Longest arrival window and drain allowance, in seconds. */
export const SIM_SECONDS_MAX = 24 * 3_600;

const seconds = z.number().min(0).max(SIM_SECONDS_MAX);
const name = z
  .string()
  .min(1)
  .max(60)
  .regex(/^[a-z0-9][a-z0-9-]*$/, 'must be lower-case letters, digits and dashes');
const count = (max: number) => z.number().int().min(0).max(max);

const ArrivalSchema = z.discriminatedUnion('kind', [
  /** Runs spread evenly at `perSecond` over the scenario's duration. */
  z.strictObject({ kind: z.literal('steady'), perSecond: z.number().gt(0).max(10_000) }),
  /** `runs` submitted at once at `atSeconds` (default 0). */
  z.strictObject({
    kind: z.literal('burst'),
    runs: count(SIM_RUNS_MAX).min(1),
    atSeconds: seconds.default(0),
  }),
]);

const TenantSchema = z.strictObject({
  name,
  /** Fair-share weight (Keel's tenant weight). */
  weight: z.number().int().min(1).max(1_000).default(1),
  arrival: ArrivalSchema,
});

const AgentMixSchema = z.strictObject({
  name,
  /** Relative share of submitted runs that are this agent. */
  share: z.number().gt(0).max(1_000).default(1),
  rounds: count(SIM_ROUNDS_MAX).min(1),
  /** Per round, in this order: model calls, tool calls, browser steps, then one input wait. */
  modelCalls: count(100).default(1),
  toolCalls: count(100).default(0),
  browserSteps: count(100).default(0),
  /** A wait for input no one answers: the run parks, releasing its worker, for this long. */
  inputWaitMs: z.number().min(0).max(SIMULATED_LATENCY_MAX_MS).default(0),
});

const ModelSchema = z.strictObject({
  latency: LatencyModelSchema,
  /** Concurrent calls this Keel process makes to the model: the model pool's slots. */
  maxConcurrency: z.number().int().min(1).max(100_000),
  maxAttempts: z.number().int().min(1).max(10).default(6),
  price: z
    .strictObject({ inputPerMTok: z.number().min(0), outputPerMTok: z.number().min(0) })
    .default({ inputPerMTok: 1, outputPerMTok: 4 }),
});

const ToolSchema = z.strictObject({ latency: LatencyModelSchema });

const BrowserSchema = z.strictObject({
  latency: LatencyModelSchema,
  /** Probability an attempt fails (retried by the tool's retry policy). */
  failureRate: z.number().min(0).max(1).default(0),
  maxAttempts: z.number().int().min(1).max(10).default(3),
  /** The `browser` pool's limit: sessions at once in this process. */
  limit: z.number().int().min(1).max(100_000),
});

const window = { fromSeconds: seconds, toSeconds: seconds };
const FaultSchema = z
  .discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('model-outage'), ...window }),
    z.strictObject({
      kind: z.literal('model-rate-limit'),
      ...window,
      retryAfterMs: z.number().min(0).max(SIMULATED_LATENCY_MAX_MS).default(1_000),
      share: z.number().min(0).max(1).default(1),
    }),
    /** The model's latency scales linearly to `toScale` over the window, and stays there. */
    z.strictObject({
      kind: z.literal('model-slowdown'),
      ...window,
      toScale: z.number().gt(0).max(1_000),
    }),
    z.strictObject({ kind: z.literal('browser-outage'), ...window }),
  ])
  .refine((f) => f.fromSeconds <= f.toSeconds, {
    message: 'fromSeconds must be ≤ toSeconds',
  });

export const SimScenarioSchema = z
  .strictObject({
    name,
    description: z.string().max(2_000).optional(),
    seed: z.number().int().min(0).max(0xffffffff).default(1),
    /** Seconds over which steady arrivals are submitted. */
    durationSeconds: seconds.gt(0),
    /** After the last arrival, how long runs may take to end before the simulation gives up. */
    drainSeconds: seconds.default(300),
    tenants: z.array(TenantSchema).min(1).max(1_000),
    agents: z.array(AgentMixSchema).min(1).max(100),
    model: ModelSchema,
    tool: ToolSchema.default({ latency: { kind: 'fixed', ms: 0 } }),
    browser: BrowserSchema.optional(),
    faults: z.array(FaultSchema).max(100).default([]),
    /** The machine, for the planner's prediction (cores for tool time). */
    capacity: z
      .strictObject({ cpuCores: z.number().gt(0), memoryGiB: z.number().gt(0) })
      .default({ cpuCores: 2, memoryGiB: 4 }),
  })
  .superRefine((s, ctx) => {
    const runs = totalRuns(s);
    if (runs > SIM_RUNS_MAX)
      ctx.addIssue({
        code: 'custom',
        path: ['tenants'],
        message: `the arrivals add up to ${runs} runs; at most ${SIM_RUNS_MAX}`,
      });
    if (s.agents.some((a) => a.browserSteps > 0) && s.browser === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['browser'],
        message: 'an agent takes browser steps: describe the fake browser ("browser")',
      });
    for (const [i, t] of s.tenants.entries())
      if (s.tenants.findIndex((u) => u.name === t.name) !== i)
        ctx.addIssue({ code: 'custom', path: ['tenants', i, 'name'], message: 'repeats a name' });
  });

export type SimScenario = z.infer<typeof SimScenarioSchema>;
export type SimTenant = SimScenario['tenants'][number];
export type SimAgentMix = SimScenario['agents'][number];
export type SimFault = SimScenario['faults'][number];

/** Runs a tenant submits over the scenario. */
export function tenantRuns(tenant: SimTenant, durationSeconds: number): number {
  return tenant.arrival.kind === 'burst'
    ? tenant.arrival.runs
    : Math.max(1, Math.round(tenant.arrival.perSecond * durationSeconds));
}

function totalRuns(s: { tenants: SimTenant[]; durationSeconds: number }): number {
  return s.tenants.reduce((sum, t) => sum + tenantRuns(t, s.durationSeconds), 0);
}

/**
 * Validates a parsed scenario file.
 * @throws KeelError `validation_failed` naming each bad field, e.g. `tenants[0].arrival.perSecond: …`.
 * @example
 * const scenario = parseSimScenario(JSON.parse(readFileSync('examples/sim/steady.json', 'utf8')));
 */
export function parseSimScenario(raw: unknown, source = 'the scenario'): SimScenario {
  const parsed = SimScenarioSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => {
    const path = i.path
      .map((k, n) => (typeof k === 'number' ? `[${k}]` : `${n === 0 ? '' : '.'}${String(k)}`))
      .join('');
    return `${path || '(root)'}: ${i.code === 'unrecognized_keys' ? `unknown field(s) ${i.keys.join(', ')}` : i.message}`;
  });
  throw new KeelError('validation_failed', `${source} is invalid:\n  ${issues.join('\n  ')}`, {
    details: { issues },
  });
}
