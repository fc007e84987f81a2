// The workload + capacity section against hand-computed cases for each environment policy (the
// arithmetic is written out beside each expectation), and properties: demand never falls as
// arrivals rise, pausing never holds more memory than staying resident, and at maxArrivalPerSec the
// bottleneck is exactly full and nothing is over.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { capacity as capacityArb, close, workload as workloadArb } from './arbitraries.test.ts';
import { planCapacity, RESOURCES } from './capacity.ts';
import type { Capacity, EnvPolicy, Workload } from './scenario.ts';

/**
 * λ = 0.5/s, R = 8 rounds, M = 4 s, T = 2 s, G = 1 GiB, P = 10 s, Pc = 5 s, pause 0.5 s/GiB, resume
 * 0.5 s/GiB.
 */
const base = (policy: EnvPolicy, overrides: Partial<Workload> = {}): Workload => ({
  arrivalPerSec: 0.5,
  roundsPerTask: 8,
  modelSecondsPerRound: 4,
  toolSecondsPerRound: 2,
  env: {
    memoryGiB: 1,
    policy,
    prepSeconds: 10,
    prepCpuSeconds: 5,
    pauseSecondsPerGiB: 0.5,
    resumeSecondsPerGiB: 0.5,
  },
  ...overrides,
});
const CAPACITY: Capacity = { cpuCores: 16, memoryGiB: 32, modelSlots: 64 };

describe('planCapacity', () => {
  it('resident: holds the environment for the whole task', () => {
    const r = planCapacity(base('resident'), CAPACITY);
    close(r.taskSeconds.value, 58); // P + R·(M + T) = 10 + 8·(4 + 2)
    close(r.envHeldSecondsPerTask.value, 58); // the whole task
    close(r.envGiBSecondsPerTask.value, 58); // 58 s × 1 GiB
    close(r.environmentsInUse.value, 29); // Little: λ·held = 0.5 × 58
    close(r.environmentsCreatedPerSec.value, 0.5); // one preparation per task: λ × 1
    close(r.demand.cpuCores.value, 10.5); // λ·(R·T + Pc) = 0.5 × (16 + 5)
    close(r.demand.modelSlots.value, 16); // λ·R·M = 0.5 × 8 × 4
    close(r.demand.memoryGiB.value, 29); // 29 environments × 1 GiB
    close(r.resources!.cpuCores.utilization.value, 10.5 / 16); // 65.6%
    close(r.resources!.modelSlots.utilization.value, 16 / 64); // 25%
    close(r.resources!.memoryGiB.utilization.value, 29 / 32); // 90.6%: the highest
    assert.equal(r.bottleneck, 'memoryGiB');
    close(r.maxArrivalPerSec!.value, 32 / 58); // capacity ÷ GiB·s per task = 0.5517 tasks/s
    assert.equal(r.pausesDuringModelWait, null);
    assert.match(r.recommendation, /^memoryGiB saturates first, at 0\.552 tasks\/s/);
    assert.match(r.recommendation, /Policy 'pause' would raise that to 0\.762 tasks\/s/);
  });

  it('rebuild: holds the environment only for preparation + tool time, and prepares every round', () => {
    const r = planCapacity(base('rebuild'), CAPACITY);
    close(r.taskSeconds.value, 128); // R·(P + M + T) = 8 × (10 + 4 + 2)
    close(r.envHeldSecondsPerTask.value, 96); // R·(P + T) = 8 × 12
    close(r.environmentsInUse.value, 48); // 0.5 × 96
    close(r.environmentsCreatedPerSec.value, 4); // λ·R = 0.5 × 8
    close(r.demand.cpuCores.value, 28); // λ·R·(T + Pc) = 0.5 × 8 × 7
    close(r.demand.memoryGiB.value, 48);
    close(r.resources!.cpuCores.utilization.value, 1.75); // 28 ÷ 16: over capacity
    assert.equal(r.bottleneck, 'cpuCores'); // 1.75 > memory's 48 ÷ 32 = 1.5
    close(r.maxArrivalPerSec!.value, 16 / 56); // 16 cores ÷ 56 core·s per task
    assert.match(
      r.recommendation,
      /^cpuCores is over capacity \(175\.0%\): at most 0\.286 tasks\/s fit against 0\.5 arriving; add 12 cores or lower the arrival rate\./,
    ); // 28 − 16
  });

  it('pause: releases memory in a model wait longer than pausing + resuming', () => {
    const r = planCapacity(base('pause'), CAPACITY);
    assert.equal(r.pausesDuringModelWait?.value, true); // M = 4 > G·(0.5 + 0.5) = 1
    close(r.taskSeconds.value, 58); // unchanged: the resume ends before the tool call
    close(r.envHeldSecondsPerTask.value, 34); // P + R·(T + G·(p + r)) = 10 + 8 × (2 + 1)
    close(r.demand.memoryGiB.value, 17); // 0.5 × 34 × 1
    close(r.demand.cpuCores.value, 10.5); // as resident: one preparation
    assert.equal(r.bottleneck, 'cpuCores'); // 21 core·s ÷ 16 > 34 GiB·s ÷ 32 > 32 slot·s ÷ 64
    close(r.maxArrivalPerSec!.value, 16 / 21);
  });

  it('pause: stays resident through a model wait shorter than pausing + resuming', () => {
    const r = planCapacity(base('pause', { modelSecondsPerRound: 0.8 }), CAPACITY);
    assert.equal(r.pausesDuringModelWait?.value, false); // 0.8 < 1
    close(r.envHeldSecondsPerTask.value, 32.4); // P + R·(T + min(M, 1)) = 10 + 8 × 2.8 = resident's 10 + 8 × (0.8 + 2)
    close(
      r.envHeldSecondsPerTask.value,
      planCapacity(base('resident', { modelSecondsPerRound: 0.8 }), CAPACITY).envHeldSecondsPerTask
        .value,
    );
  });

  it('compares all three policies on the same workload', () => {
    const r = planCapacity(base('resident'), CAPACITY);
    assert.deepEqual(
      r.policies.map((p) => p.policy),
      ['resident', 'rebuild', 'pause'],
    );
    close(r.policies[1]!.memoryGiB.value, 48);
    close(r.policies[2]!.envGiBSecondsPerTask.value, 34);
    assert.equal(r.policies[1]!.bottleneck, 'cpuCores');
  });

  it('without capacity: demand only, and a recommendation to add capacity', () => {
    const r = planCapacity(base('resident'), undefined);
    close(r.demand.memoryGiB.value, 29);
    assert.equal(r.resources, null);
    assert.equal(r.bottleneck, null);
    assert.equal(r.maxArrivalPerSec, null);
    assert.match(r.recommendation, /add a "capacity" section/);
  });

  it('a task that consumes nothing has no bottleneck and no ceiling', () => {
    const idle = base('rebuild', { roundsPerTask: 0 });
    const r = planCapacity(idle, CAPACITY);
    assert.equal(r.bottleneck, null);
    assert.equal(r.maxArrivalPerSec!.value, Number.POSITIVE_INFINITY);
  });

  it('ties between resources go to the one listed first', () => {
    // per task: cpu R·T + Pc = 1 × 1 + 0 = 1 core·s, model 1 × 1 = 1 slot·s, memory (0 + 1 × 2)·1 =
    // 2 GiB·s; capacities 1, 1, 2.
    const w = base('resident', {
      roundsPerTask: 1,
      modelSecondsPerRound: 1,
      toolSecondsPerRound: 1,
    });
    const r = planCapacity(
      { ...w, env: { ...w.env, prepSeconds: 0, prepCpuSeconds: 0 } },
      { cpuCores: 1, modelSlots: 1, memoryGiB: 2 },
    );
    assert.equal(r.bottleneck, 'cpuCores');
  });
});

describe('planCapacity properties', () => {
  it('more arrivals never lower any demand or utilization', () => {
    fc.assert(
      fc.property(
        workloadArb(),
        capacityArb(),
        fc.double({ min: 0, max: 100, noNaN: true }),
        (w, c, extra) => {
          const low = planCapacity(w, c);
          const high = planCapacity({ ...w, arrivalPerSec: w.arrivalPerSec + extra }, c);
          for (const r of RESOURCES) {
            assert.ok(high.demand[r].value >= low.demand[r].value, r);
            assert.ok(
              high.resources![r].utilization.value >= low.resources![r].utilization.value,
              r,
            );
          }
          assert.ok(high.environmentsInUse.value >= low.environmentsInUse.value);
        },
      ),
    );
  });

  it('pausing never holds more memory than staying resident', () => {
    fc.assert(
      fc.property(workloadArb(), (w) => {
        const held = (policy: EnvPolicy) =>
          planCapacity({ ...w, env: { ...w.env, policy } }, undefined).envHeldSecondsPerTask.value;
        assert.ok(held('pause') <= held('resident'));
      }),
    );
  });

  it('at maxArrivalPerSec the bottleneck is exactly full and no resource is over', () => {
    fc.assert(
      fc.property(workloadArb(), capacityArb(), (w, c) => {
        const r = planCapacity(w, c);
        // A subnormal per-task use overflows the ceiling to Infinity: nothing to scale to.
        if (r.bottleneck === null || !Number.isFinite(r.maxArrivalPerSec!.value)) return;
        const atLimit = planCapacity({ ...w, arrivalPerSec: r.maxArrivalPerSec!.value }, c);
        close(atLimit.resources![r.bottleneck].utilization.value, 1, 'bottleneck utilization');
        for (const res of RESOURCES)
          assert.ok(atLimit.resources![res].utilization.value <= 1 + 1e-9, res);
      }),
    );
  });

  it('more capacity of any resource never lowers maxArrivalPerSec', () => {
    fc.assert(
      fc.property(
        workloadArb(),
        capacityArb(),
        fc.constantFrom(...RESOURCES),
        fc.double({ min: 0, max: 1000, noNaN: true }),
        (w, c, res, more) => {
          const before = planCapacity(w, c).maxArrivalPerSec!.value;
          const after = planCapacity(w, { ...c, [res]: c[res] + more }).maxArrivalPerSec!.value;
          assert.ok(after >= before, `${res}: ${before} → ${after}`);
        },
      ),
    );
  });
});
