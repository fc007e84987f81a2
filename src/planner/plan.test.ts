// plan(): validates, runs exactly the sections the scenario has, never yields NaN for any valid
// scenario, and its JSON form round-trips (infinite figures as "Infinity").
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { figures, scenario } from './arbitraries.test.ts';
import { formatPlanJson, plan, ScenarioError, SECTION_NAMES, type Scenario } from './index.ts';

const example = (name: string): Scenario =>
  JSON.parse(readFileSync(new URL(`../../examples/${name}`, import.meta.url), 'utf8'));

describe('plan', () => {
  it('runs every section of the full example and leads with the capacity recommendation', () => {
    const result = plan(example('plan-agents.json'));
    assert.deepEqual(Object.keys(result.sections), [...SECTION_NAMES]);
    assert.equal(result.recommendation, result.sections.capacity.recommendation);
    assert.equal(result.sections.capacity.bottleneck, 'memoryGiB');
    assert.match(result.description ?? '', /Coding agents/);
  });

  it('runs only capacity for the minimal example', () => {
    const result = plan(example('plan-minimal.json'));
    assert.deepEqual(Object.keys(result.sections), ['capacity']);
    assert.equal(result.description, undefined);
  });

  it('validates its input even when called from JavaScript with anything', () => {
    assert.throws(
      () => plan({ workload: { arrivalPerSec: -1 } } as unknown as Scenario),
      ScenarioError,
    );
  });

  it('gives every figure a unit and a formula, and no NaN, for any valid scenario', () => {
    fc.assert(
      fc.property(scenario(), (s) => {
        const result = plan(s);
        for (const key of SECTION_NAMES)
          assert.equal(key in result.sections, key === 'capacity' || s[key] !== undefined, key);
        for (const { path, figure } of figures(result.sections)) {
          assert.ok(!Number.isNaN(figure.value), path);
          assert.ok(figure.unit.length > 0 && figure.formula.length > 0, path);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('round-trips through JSON, infinite figures as "Infinity"', () => {
    const s = example('plan-agents.json');
    const result = plan({
      ...s,
      restart: { arrivalPerSec: 3, serviceRatePerSec: 2, startupSeconds: 10 },
    });
    const parsed = JSON.parse(formatPlanJson(result));
    assert.equal(parsed.sections.restart.drainSeconds.value, 'Infinity');
    assert.equal(
      parsed.sections.capacity.maxArrivalPerSec.value,
      result.sections.capacity.maxArrivalPerSec?.value,
    );
    assert.equal(
      parsed.sections.recoveryTree.paths.length,
      result.sections.recoveryTree?.paths.length,
    );
  });
});
