// The `workload` + `capacity` section: per-task demand for CPU, model slots and environment memory
// under an environment policy, turned into steady-state demand by Little's law (in use = arrival
// rate × time held), compared with capacity to name the bottleneck and the arrival rate at which it
// saturates. Mean values only: no queueing delay, no variance. Never reads files or formats text
// beyond the one-line recommendation.
import {
  add,
  chosen,
  constant,
  div,
  figure,
  greaterThan,
  min,
  mul,
  named,
  type Expr,
  type Figure,
  type Verdict,
} from './formula.ts';
import { brief, percent } from './display.ts';
import { ENV_POLICIES, type Capacity, type EnvPolicy, type Workload } from './scenario.ts';

export const RESOURCES = ['cpuCores', 'modelSlots', 'memoryGiB'] as const;
export type Resource = (typeof RESOURCES)[number];
const RESOURCE_UNITS = {
  cpuCores: 'cores',
  modelSlots: 'slots',
  memoryGiB: 'GiB',
} as const satisfies Record<Resource, Figure['unit']>;
/**
 * Another policy is suggested only when it raises the saturating arrival rate by more than this
 * fraction.
 */
const POLICY_GAIN_MIN_FRACTION = 0.01;

export interface ResourceUse {
  demand: Figure;
  capacity: Figure;
  utilization: Figure;
}

/**
 * What one policy would mean for the same workload: its memory and CPU demand and (with capacity)
 * its ceiling.
 */
export interface PolicyOutcome {
  policy: EnvPolicy;
  envGiBSecondsPerTask: Figure;
  memoryGiB: Figure;
  cpuCores: Figure;
  maxArrivalPerSec: Figure | null;
  bottleneck: Resource | null;
}

export interface CapacityResult {
  policy: EnvPolicy;
  /** Wall time of one task from environment preparation to its last tool call. */
  taskSeconds: Figure;
  envHeldSecondsPerTask: Figure;
  envGiBSecondsPerTask: Figure;
  /** Environments resident at once (Little's law). */
  environmentsInUse: Figure;
  environmentsCreatedPerSec: Figure;
  /**
   * Policy `pause` only: whether the model wait outlasts pausing + resuming, so memory is released
   * in it.
   */
  pausesDuringModelWait: Verdict | null;
  demand: Record<Resource, Figure>;
  /** Demand against capacity; null when the scenario has no `capacity`. */
  resources: Record<Resource, ResourceUse> | null;
  /**
   * The resource with the highest utilization; null without capacity or when a task consumes
   * nothing.
   */
  bottleneck: Resource | null;
  /**
   * The arrival rate at which the bottleneck reaches 100% (Infinity when no resource is consumed).
   */
  maxArrivalPerSec: Figure | null;
  policies: PolicyOutcome[];
  recommendation: string;
}

/** Per-task quantities of one policy, as expressions over the workload's inputs. */
interface PerTask {
  taskSeconds: Expr;
  heldSeconds: Expr;
  preparations: Expr;
  cpuSeconds: Expr;
  modelSlotSeconds: Expr;
  pausesDuringModelWait: Verdict | null;
}

function inputs(w: Workload) {
  return {
    arrival: named('arrivalPerSec', w.arrivalPerSec),
    rounds: named('roundsPerTask', w.roundsPerTask),
    model: named('modelSecondsPerRound', w.modelSecondsPerRound),
    tool: named('toolSecondsPerRound', w.toolSecondsPerRound),
    memory: named('env.memoryGiB', w.env.memoryGiB),
    prep: named('env.prepSeconds', w.env.prepSeconds),
    prepCpu: named('env.prepCpuSeconds', w.env.prepCpuSeconds),
    pause: named('env.pauseSecondsPerGiB', w.env.pauseSecondsPerGiB),
    resume: named('env.resumeSecondsPerGiB', w.env.resumeSecondsPerGiB),
  };
}

/**
 * How long one task holds an environment, and what it costs, under `policy`. A round is a model
 * wait followed by a tool call, and every tool second occupies one core. `resident` prepares once
 * and holds the environment for the whole task; `rebuild` prepares in every round and holds it only
 * for preparation + tool time; `pause` prepares once and, in each model wait longer than pausing +
 * resuming, holds memory only during those two transitions.
 */
function perTask(w: Workload, policy: EnvPolicy): PerTask {
  const x = inputs(w);
  const modelSlotSeconds = mul(x.rounds, x.model);
  const onceTaskSeconds = add(x.prep, mul(x.rounds, add(x.model, x.tool)));
  switch (policy) {
    case 'resident':
      return {
        taskSeconds: onceTaskSeconds,
        heldSeconds: onceTaskSeconds,
        preparations: constant(1),
        cpuSeconds: add(mul(x.rounds, x.tool), x.prepCpu),
        modelSlotSeconds,
        pausesDuringModelWait: null,
      };
    case 'rebuild':
      return {
        taskSeconds: mul(x.rounds, add(x.prep, x.model, x.tool)),
        heldSeconds: mul(x.rounds, add(x.prep, x.tool)),
        preparations: x.rounds,
        cpuSeconds: mul(x.rounds, add(x.tool, x.prepCpu)),
        modelSlotSeconds,
        pausesDuringModelWait: null,
      };
    case 'pause': {
      const transition = mul(x.memory, add(x.pause, x.resume));
      return {
        taskSeconds: onceTaskSeconds,
        // Memory stays held while pausing and resuming; a wait too short to pay for both is spent
        // resident.
        heldSeconds: add(x.prep, mul(x.rounds, add(x.tool, min(x.model, transition)))),
        preparations: constant(1),
        cpuSeconds: add(mul(x.rounds, x.tool), x.prepCpu),
        modelSlotSeconds,
        pausesDuringModelWait: greaterThan(x.model, transition),
      };
    }
    default: {
      const unknown: never = policy;
      throw new Error(`unknown policy ${String(unknown)}`);
    }
  }
}

/** Per-task consumption of each resource (core-seconds, slot-seconds, GiB-seconds). */
function perTaskUse(w: Workload, t: PerTask): Record<Resource, Expr> {
  return {
    cpuCores: t.cpuSeconds,
    modelSlots: t.modelSlotSeconds,
    memoryGiB: mul(
      named('envHeldSecondsPerTask', t.heldSeconds),
      named('env.memoryGiB', w.env.memoryGiB),
    ),
  };
}

function demandOf(w: Workload, use: Record<Resource, Expr>, t: PerTask): Record<Resource, Figure> {
  const arrival = named('arrivalPerSec', w.arrivalPerSec);
  const inUse = mul(arrival, named('envHeldSecondsPerTask', t.heldSeconds));
  return {
    cpuCores: figure(mul(arrival, use.cpuCores), 'cores'),
    modelSlots: figure(mul(arrival, use.modelSlots), 'slots'),
    memoryGiB: figure(
      mul(named('environmentsInUse', inUse), named('env.memoryGiB', w.env.memoryGiB)),
      'GiB',
    ),
  };
}

/**
 * The resource that saturates first: highest per-task use ÷ capacity (= utilization ÷ arrival
 * rate); ties go to the earlier one.
 */
function ceiling(
  use: Record<Resource, Expr>,
  capacity: Capacity,
): { bottleneck: Resource | null; maxArrivalPerSec: Figure } {
  let bottleneck: Resource | null = null;
  let best = 0;
  for (const r of RESOURCES) {
    const load = use[r].value / capacity[r];
    if (load > best) [bottleneck, best] = [r, load];
  }
  if (bottleneck === null)
    return {
      bottleneck,
      maxArrivalPerSec: chosen(
        Number.POSITIVE_INFINITY,
        'tasks/s',
        'no resource is consumed per task: unbounded',
      ),
    };
  return {
    bottleneck,
    maxArrivalPerSec: figure(
      div(named(`capacity.${bottleneck}`, capacity[bottleneck]), use[bottleneck]),
      'tasks/s',
    ),
  };
}

export function planCapacity(w: Workload, capacity: Capacity | undefined): CapacityResult {
  const t = perTask(w, w.env.policy);
  const use = perTaskUse(w, t);
  const demand = demandOf(w, use, t);
  const held = figure(t.heldSeconds, 's');
  const x = inputs(w);
  const resources = capacity === undefined ? null : resourceUse(demand, capacity);
  const limit = capacity === undefined ? null : ceiling(use, capacity);
  const policies = ENV_POLICIES.map((policy) => policyOutcome(w, policy, capacity));
  const result: Omit<CapacityResult, 'recommendation'> = {
    policy: w.env.policy,
    taskSeconds: figure(t.taskSeconds, 's'),
    envHeldSecondsPerTask: held,
    envGiBSecondsPerTask: figure(use.memoryGiB, 'GiB·s'),
    environmentsInUse: figure(mul(x.arrival, named('envHeldSecondsPerTask', held)), 'environments'),
    environmentsCreatedPerSec: figure(mul(x.arrival, t.preparations), 'environments/s'),
    pausesDuringModelWait: t.pausesDuringModelWait,
    demand,
    resources,
    bottleneck: limit?.bottleneck ?? null,
    maxArrivalPerSec: limit?.maxArrivalPerSec ?? null,
    policies,
  };
  return { ...result, recommendation: recommend(w, result) };
}

function resourceUse(
  demand: Record<Resource, Figure>,
  capacity: Capacity,
): Record<Resource, ResourceUse> {
  const one = (r: Resource): ResourceUse => {
    const cap = named(`capacity.${r}`, capacity[r]);
    return {
      demand: demand[r],
      capacity: figure(cap, RESOURCE_UNITS[r]),
      utilization: figure(div(named(`demand.${r}`, demand[r]), cap), 'ratio'),
    };
  };
  return { cpuCores: one('cpuCores'), modelSlots: one('modelSlots'), memoryGiB: one('memoryGiB') };
}

function policyOutcome(
  w: Workload,
  policy: EnvPolicy,
  capacity: Capacity | undefined,
): PolicyOutcome {
  const t = perTask(w, policy);
  const use = perTaskUse(w, t);
  const demand = demandOf(w, use, t);
  const limit = capacity === undefined ? null : ceiling(use, capacity);
  return {
    policy,
    envGiBSecondsPerTask: figure(use.memoryGiB, 'GiB·s'),
    memoryGiB: demand.memoryGiB,
    cpuCores: demand.cpuCores,
    maxArrivalPerSec: limit?.maxArrivalPerSec ?? null,
    bottleneck: limit?.bottleneck ?? null,
  };
}

function recommend(w: Workload, r: Omit<CapacityResult, 'recommendation'>): string {
  const d = r.demand;
  if (r.resources === null || r.maxArrivalPerSec === null) {
    return `Demand is ${brief(d.cpuCores.value)} cores, ${brief(d.modelSlots.value)} model slots and ${brief(d.memoryGiB.value)} GiB; add a "capacity" section to find the bottleneck.`;
  }
  if (r.bottleneck === null)
    return 'A task consumes no CPU, model time or memory: any arrival rate fits.';
  const b = r.bottleneck;
  const use = r.resources[b];
  const max = r.maxArrivalPerSec.value;
  const head =
    use.utilization.value > 1
      ? `${b} is over capacity (${percent(use.utilization.value)}): at most ${brief(max)} tasks/s fit against ${brief(w.arrivalPerSec)} arriving; add ${brief(use.demand.value - use.capacity.value)} ${RESOURCE_UNITS[b]} or lower the arrival rate.`
      : `${b} saturates first, at ${brief(max)} tasks/s (${percent(use.utilization.value)} used at ${brief(w.arrivalPerSec)} tasks/s).`;
  const better = r.policies
    .filter(
      (p) =>
        p.policy !== r.policy &&
        p.maxArrivalPerSec !== null &&
        p.maxArrivalPerSec.value > max * (1 + POLICY_GAIN_MIN_FRACTION),
    )
    .sort((a, c) => (c.maxArrivalPerSec?.value ?? 0) - (a.maxArrivalPerSec?.value ?? 0))[0];
  return better === undefined
    ? head
    : `${head} Policy '${better.policy}' would raise that to ${brief(better.maxArrivalPerSec?.value ?? 0)} tasks/s.`;
}
