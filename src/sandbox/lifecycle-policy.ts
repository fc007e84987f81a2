// Lifecycle policies and the `auto` rule. After a call the environment goes idle (the model thinks,
// the run waits); `auto` pauses or rebuilds only when the memory freed over the expected idle time
// is worth more than the measured cost of doing it: memoryPrice × memoryGiB × expectedIdleSeconds >
// transitionCost. A pause that frees no memory (a cgroup freeze) saves nothing, so `auto` never
// picks it on such tiers.
export const POLICIES = ['one-shot', 'resident', 'rebuild', 'pause', 'auto'] as const;
export type LifecyclePolicy = (typeof POLICIES)[number];
export type IdleAction = 'keep' | 'pause' | 'rebuild';

export interface AutoInputs {
  /** Price of holding one GiB for one second (any currency, same as the costs). */
  memoryPricePerGiBSecond: number;
  memoryGiB: number;
  expectedIdleSeconds: number;
  /**
   * Measured cost of pausing and later resuming, in the same currency; undefined when the tier
   * cannot pause.
   */
  pauseCost: number | undefined;
  pauseFreesMemory: boolean;
  /** Measured cost of destroying and later rebuilding from the manifest. */
  rebuildCost: number;
}

export interface AutoDecision {
  action: IdleAction;
  /**
   * Value of the memory an idle environment would hold: memoryPrice × memoryGiB ×
   * expectedIdleSeconds.
   */
  holdValue: number;
  reason: string;
}

export function decideAuto(inputs: AutoInputs): AutoDecision {
  const holdValue = inputs.memoryPricePerGiBSecond * inputs.memoryGiB * inputs.expectedIdleSeconds;
  const options: Array<{ action: IdleAction; cost: number }> = [
    { action: 'rebuild', cost: inputs.rebuildCost },
  ];
  if (inputs.pauseFreesMemory && inputs.pauseCost !== undefined)
    options.push({ action: 'pause', cost: inputs.pauseCost });
  const worth = options.filter((option) => holdValue > option.cost).sort((a, b) => a.cost - b.cost);
  const best = worth[0];
  if (best === undefined)
    return {
      action: 'keep',
      holdValue,
      reason: `holding costs ${fmt(holdValue)}, less than any transition (${options.map((o) => `${o.action} ${fmt(o.cost)}`).join(', ')})`,
    };
  return {
    action: best.action,
    holdValue,
    reason: `holding costs ${fmt(holdValue)} > ${best.action} ${fmt(best.cost)}`,
  };
}

const fmt = (value: number): string => value.toPrecision(3);

/** What a fixed policy does when a call ends; `auto` asks decideAuto. */
export function idleActionOf(policy: Exclude<LifecyclePolicy, 'auto'>): IdleAction | 'destroy' {
  switch (policy) {
    case 'one-shot':
      return 'destroy';
    case 'resident':
      return 'keep';
    case 'rebuild':
      return 'rebuild';
    case 'pause':
      return 'pause';
    default: {
      const never: never = policy;
      throw new Error(`unknown policy ${String(never)}`);
    }
  }
}
