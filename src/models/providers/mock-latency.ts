// Simulated latency and faults for the `mock` provider and the simulator's fake tools: latency
// distributions (fixed, uniform, lognormal given p50/p99) drawn from a seeded generator, a latency
// ramp over time, and fault windows (rate-limit bursts answering 429 with a retry-after, outages)
// placed in seconds after a start instant. Pure functions of (seed, draw order, elapsed time): it
// never sleeps and never reads the clock itself.
import { z } from 'zod';

/** z for a standard normal's 99th percentile: ln(p99 / p50) = σ · Z_P99 for a lognormal. */
const Z_P99 = 2.3263478740408408;
/** Longest simulated latency, so a typo (a p99 in hours) cannot park a simulation. */
export const SIMULATED_LATENCY_MAX_MS = 600_000;

const ms = z.number().min(0).max(SIMULATED_LATENCY_MAX_MS);
const seconds = z
  .number()
  .min(0)
  .max(7 * 24 * 3_600);

export const LatencyModelSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('fixed'), ms }),
  z
    .strictObject({ kind: z.literal('uniform'), minMs: ms, maxMs: ms })
    .refine((m) => m.minMs <= m.maxMs, { message: 'minMs must be ≤ maxMs' }),
  z
    .strictObject({ kind: z.literal('lognormal'), p50Ms: ms.gt(0), p99Ms: ms.gt(0) })
    .refine((m) => m.p50Ms <= m.p99Ms, { message: 'p50Ms must be ≤ p99Ms' }),
]);
export type LatencyModel = z.infer<typeof LatencyModelSchema>;

/** Latency scaled linearly from `fromScale` at `fromSeconds` to `toScale` at `toSeconds`, held after. */
export const LatencyRampSchema = z
  .strictObject({
    fromSeconds: seconds,
    toSeconds: seconds,
    fromScale: z.number().gt(0).max(1_000).default(1),
    toScale: z.number().gt(0).max(1_000),
  })
  .refine((r) => r.fromSeconds <= r.toSeconds, { message: 'fromSeconds must be ≤ toSeconds' });
export type LatencyRamp = z.infer<typeof LatencyRampSchema>;

export const FaultWindowSchema = z
  .discriminatedUnion('kind', [
    z.strictObject({
      kind: z.literal('rate-limit'),
      fromSeconds: seconds,
      toSeconds: seconds,
      retryAfterMs: ms.default(1_000),
      /** Share of the window's calls answered 429 (default all). */
      share: z.number().min(0).max(1).default(1),
    }),
    z.strictObject({
      kind: z.literal('outage'),
      fromSeconds: seconds,
      toSeconds: seconds,
      share: z.number().min(0).max(1).default(1),
    }),
  ])
  .refine((w) => w.fromSeconds <= w.toSeconds, { message: 'fromSeconds must be ≤ toSeconds' });
export type FaultWindow = z.infer<typeof FaultWindowSchema>;

/**
 * A seeded generator of uniform numbers in [0, 1): sfc32 keyed by splitmix32 of the seed. Written
 * out (20 lines) rather than taken from a library: Keel's dependencies have no seedable PRNG, and
 * simulated latencies must repeat exactly for a given seed.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  const splitmix = (): number => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  let [a, b, c, d] = [splitmix(), splitmix(), splitmix(), splitmix()];
  return () => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t / 4_294_967_296;
  };
}

/** One latency draw in milliseconds (before any ramp), never negative, capped at the maximum. */
export function sampleLatencyMs(model: LatencyModel, random: () => number): number {
  switch (model.kind) {
    case 'fixed':
      return model.ms;
    case 'uniform':
      return model.minMs + (model.maxMs - model.minMs) * random();
    case 'lognormal': {
      const sigma = Math.log(model.p99Ms / model.p50Ms) / Z_P99;
      const value = model.p50Ms * Math.exp(sigma * standardNormal(random));
      return Math.min(value, SIMULATED_LATENCY_MAX_MS);
    }
    default: {
      const unknown: never = model;
      throw new Error(`unknown latency model ${JSON.stringify(unknown)}`);
    }
  }
}

/** The mean of a latency model in milliseconds (the planner's input), before any ramp. */
export function meanLatencyMs(model: LatencyModel): number {
  switch (model.kind) {
    case 'fixed':
      return model.ms;
    case 'uniform':
      return (model.minMs + model.maxMs) / 2;
    case 'lognormal': {
      const sigma = Math.log(model.p99Ms / model.p50Ms) / Z_P99;
      return model.p50Ms * Math.exp((sigma * sigma) / 2);
    }
    default: {
      const unknown: never = model;
      throw new Error(`unknown latency model ${JSON.stringify(unknown)}`);
    }
  }
}

/** The ramp's scale at `elapsedSeconds` after the start: 1 before it begins when absent. */
export function rampScale(ramp: LatencyRamp | undefined, elapsedSeconds: number): number {
  if (ramp === undefined) return 1;
  if (elapsedSeconds <= ramp.fromSeconds) return ramp.fromScale;
  if (elapsedSeconds >= ramp.toSeconds) return ramp.toScale;
  const progress = (elapsedSeconds - ramp.fromSeconds) / (ramp.toSeconds - ramp.fromSeconds);
  return ramp.fromScale + (ramp.toScale - ramp.fromScale) * progress;
}

/** The window in force at `elapsedSeconds` (the first listed wins when windows overlap). */
export function activeFault(
  windows: readonly FaultWindow[] | undefined,
  elapsedSeconds: number,
): FaultWindow | undefined {
  return windows?.find((w) => elapsedSeconds >= w.fromSeconds && elapsedSeconds < w.toSeconds);
}

/** Box–Muller: one standard normal draw from two uniform ones (u1 kept off 0 for the log). */
function standardNormal(random: () => number): number {
  const u1 = Math.max(random(), Number.MIN_VALUE);
  const u2 = random();
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/** The simulation fields of the mock model's options, validated once per model definition. */
export const MockSimulationSchema = z.object({
  latency: LatencyModelSchema.optional(),
  seed: z.number().int().min(0).max(0xffffffff).optional(),
  startAtMs: z.number().min(0).optional(),
  latencyRamp: LatencyRampSchema.optional(),
  faults: z.array(FaultWindowSchema).max(1_000).optional(),
});
export type MockSimulation = z.infer<typeof MockSimulationSchema>;
