// Shared by the planner's tests (this file holds no tests itself; the `.test.ts` name keeps it out
// of the build): fast-check generators of valid scenario sections, a tolerance comparison, and a
// walk over every figure of a result.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Figure } from './formula.ts';
import type {
  Attempt,
  BurstInput,
  CommitsInput,
  PauseInput,
  PrewarmInput,
  QuotaInput,
  RecoveryTreeInput,
  RestartInput,
  RoutingInput,
  Scenario,
  Workload,
} from './scenario.ts';

/** Relative tolerance for floating-point comparisons against hand-computed values. */
export const RELATIVE_TOLERANCE = 1e-9;

export function close(actual: number, expected: number, message?: string): void {
  if (actual === expected) return;
  const tolerance = RELATIVE_TOLERANCE * Math.max(1, Math.abs(expected));
  assert.ok(
    Math.abs(actual - expected) <= tolerance,
    `${message ?? 'value'}: expected ${expected}, got ${actual}`,
  );
}

/** Every figure in a result, with its path: `{ value: number, unit, formula }` objects. */
export function figures(value: unknown, path = ''): Array<{ path: string; figure: Figure }> {
  if (typeof value !== 'object' || value === null) return [];
  const v = value as Record<string, unknown>;
  if (typeof v.value === 'number' && typeof v.unit === 'string' && typeof v.formula === 'string')
    return [{ path, figure: v as unknown as Figure }];
  return Object.entries(v).flatMap(([k, child]) =>
    figures(child, path === '' ? k : `${path}.${k}`),
  );
}

/**
 * Nonnegative numbers of a realistic spread, including 0 and fractions. Positive values start at
 * 1e-9: below that, doubles underflow to denormals where two equal formulas (a × b × c vs a × b
 * then × c) round differently, which no scenario hits and a property would report as a bug.
 */
export const amount = (max = 1_000): fc.Arbitrary<number> => {
  const real = fc.double({ min: 1e-9, max, noNaN: true, noDefaultInfinity: true });
  return max >= 1
    ? fc.oneof(fc.constant(0), real, fc.integer({ min: 1, max: Math.floor(max) }))
    : fc.oneof(fc.constant(0), real);
};
export const positiveAmount = (max = 1_000): fc.Arbitrary<number> =>
  fc.oneof(
    fc.double({ min: 0.001, max, noNaN: true, noDefaultInfinity: true }),
    fc.integer({ min: 1, max }),
  );
export const probability = () =>
  fc.oneof(fc.constantFrom(0, 0.5, 1), fc.double({ min: 0, max: 1, noNaN: true }));

export const workload = (): fc.Arbitrary<Workload> =>
  fc.record({
    arrivalPerSec: amount(100),
    roundsPerTask: amount(50),
    modelSecondsPerRound: amount(60),
    toolSecondsPerRound: amount(60),
    env: fc.record({
      memoryGiB: amount(64),
      policy: fc.constantFrom('resident', 'rebuild', 'pause'),
      prepSeconds: amount(120),
      prepCpuSeconds: amount(60),
      pauseSecondsPerGiB: amount(5),
      resumeSecondsPerGiB: amount(5),
    }),
  });

export const capacity = () =>
  fc.record({
    cpuCores: positiveAmount(10_000),
    memoryGiB: positiveAmount(100_000),
    modelSlots: positiveAmount(10_000),
  });

export const pause = (): fc.Arbitrary<PauseInput> =>
  fc.record({
    memoryGiB: amount(64),
    idleSeconds: amount(600),
    pauseSecondsPerGiB: amount(5),
    resumeSecondsPerGiB: amount(5),
    pricePerGiBSecond: amount(0.01),
    transitionCost: amount(0.01),
  });

export const prewarm = (): fc.Arbitrary<PrewarmInput> =>
  fc.record({
    prepSeconds: amount(120),
    leadSeconds: fc.array(amount(300), { minLength: 1, maxLength: 8 }),
    hitRate: probability(),
    memoryGiB: amount(64),
  });

export const commits = (): fc.Arbitrary<CommitsInput> =>
  fc.record({
    requests: fc.integer({ min: 0, max: 100_000 }),
    workMs: amount(100),
    commitFixedMs: amount(100),
    perRecordMs: amount(10),
    batchSizes: fc.array(fc.integer({ min: 1, max: 10_000 }), { minLength: 1, maxLength: 8 }),
  });

/** Shares that sum to exactly 1 (the last takes the remainder), with some branches giving up. */
function branches(depth: number): fc.Arbitrary<Attempt['onFailure']> {
  if (depth <= 0) return fc.constant(undefined);
  return fc
    .array(
      fc.tuple(fc.integer({ min: 1, max: 10 }), fc.option(attempt(depth - 1), { nil: undefined })),
      { minLength: 0, maxLength: 3 },
    )
    .map((parts) => {
      if (parts.length === 0) return undefined;
      const total = parts.reduce((s, [w]) => s + w, 0);
      return parts.map(([w, next]) =>
        next === undefined ? { share: w / total } : { share: w / total, next },
      );
    });
}

export function attempt(depth: number): fc.Arbitrary<Attempt> {
  return fc
    .record({
      name: fc.constantFrom('primary', 'retry', 'fallback', 'bigger-model'),
      cost: amount(5),
      seconds: amount(300),
      successProbability: probability(),
      onFailure: branches(depth),
    })
    .map((a) => {
      const { onFailure, ...rest } = a;
      return onFailure === undefined ? rest : { ...rest, onFailure };
    });
}

export const recoveryTree = (): fc.Arbitrary<RecoveryTreeInput> =>
  fc.record({ deadlineSeconds: amount(1_000), root: attempt(3) });

export const restart = (): fc.Arbitrary<RestartInput> =>
  fc.record({
    arrivalPerSec: amount(100),
    serviceRatePerSec: amount(100),
    startupSeconds: amount(300),
  });

export const routing = (): fc.Arbitrary<RoutingInput> =>
  fc.record({
    networkMs: amount(50),
    replicas: fc
      .array(
        fc.record({
          queueMs: amount(1_000),
          cacheHit: probability(),
          prefillHitMs: amount(200),
          prefillMissMs: amount(2_000),
        }),
        { minLength: 1, maxLength: 5 },
      )
      .map((rs) => rs.map((r, i) => ({ name: `replica-${i}`, ...r }))),
  });

export const burst = (): fc.Arbitrary<BurstInput> =>
  fc.record({
    calls: fc.integer({ min: 0, max: 500 }),
    secondsPerCall: amount(30),
    cores: fc.integer({ min: 1, max: 64 }),
  });

export const quota = (): fc.Arbitrary<QuotaInput> =>
  fc.record({
    activeRuns: fc.integer({ min: 0, max: 10_000 }),
    windowSeconds: positiveAmount(3_600),
    callsPerRun: amount(100),
    secondsPerCall: amount(60),
    tokensPerCall: amount(100_000),
    rpmLimit: positiveAmount(100_000),
    tpmLimit: positiveAmount(100_000_000),
    concurrencyLimit: positiveAmount(10_000),
  });

/** A whole scenario with each optional section present or not. */
export const scenario = (): fc.Arbitrary<Scenario> =>
  fc.record(
    {
      workload: workload(),
      capacity: capacity(),
      pause: pause(),
      prewarm: prewarm(),
      commits: commits(),
      recoveryTree: recoveryTree(),
      restart: restart(),
      routing: routing(),
      burst: burst(),
      quota: quota(),
    },
    { requiredKeys: ['workload'] },
  );
