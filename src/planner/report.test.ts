// The human report: a headline naming the bottleneck, one table per section present, the formula
// beside each figure, the bottleneck and each section's choice marked, and the recommendation under
// every table.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { formatReport, plan, type Scenario } from './index.ts';

const example = (name: string): Scenario =>
  JSON.parse(readFileSync(new URL(`../../examples/${name}`, import.meta.url), 'utf8'));
const TITLES = [
  'Workload and capacity',
  'Pause an idle environment',
  'Prewarm environments',
  'Commit batching',
  'Recovery tree',
  'Restart',
  'Routing across model replicas',
  'Burst of simultaneous calls',
  'Provider quota',
];

describe('formatReport', () => {
  const result = plan(example('plan-agents.json'));
  const text = formatReport(result, { title: 'plan-agents.json' });
  const lines = text.split('\n');

  it('opens with the title, the description, the bottleneck and the recommendation', () => {
    assert.equal(lines[0], 'Keel capacity plan: plan-agents.json');
    assert.match(lines[1]!, /^Coding agents/);
    assert.equal(lines[2], 'Bottleneck: memoryGiB (85.9% of capacity)');
    assert.equal(lines[3], `Recommendation: ${result.recommendation}`);
  });

  it('has one table per section, in order, each closed by its recommendation', () => {
    const titles = lines
      .filter((l) => l.startsWith('== '))
      .map((l) => l.replace(/^== (.*?)( \(.*\))? ==$/, '$1'));
    assert.deepEqual(titles, TITLES);
    for (const r of [result.sections.pause!.recommendation, result.sections.quota!.recommendation])
      assert.ok(lines.includes(`→ ${r}`), r);
    assert.equal(lines.filter((l) => l.startsWith('→ ')).length, TITLES.length);
  });

  it('prints the formula next to each figure', () => {
    const demand = lines.find((l) => l.includes('environmentsInUse × env.memoryGiB = 220 × 2'));
    assert.match(demand ?? '', /440 GiB {2}environmentsInUse/);
    assert.ok(
      lines.some((l) =>
        /2\.327 tasks\/s {2}capacity\.memoryGiB ÷ \(envHeldSecondsPerTask × env\.memoryGiB\) = 512 ÷ \(110 × 2\)/.test(
          l,
        ),
      ),
    );
  });

  it('marks the bottleneck and the choices', () => {
    assert.ok(lines.includes('▶ memoryGiB (bottleneck)'));
    assert.ok(lines.includes('▶ lead 20 s (best)'));
    assert.ok(lines.includes('▶ batch 50 (recommended)'));
    assert.ok(lines.includes('▶ replica-a (choice)'));
    assert.ok(lines.includes('▶ tpmLimit (binds)'));
    assert.ok(!lines.includes('▶ cpuCores'));
  });

  it('writes "never" for a queue that never drains and flags over-capacity in the headline', () => {
    const s = example('plan-agents.json');
    const over = formatReport(
      plan({
        ...s,
        workload: { ...s.workload, arrivalPerSec: 3 },
        restart: { arrivalPerSec: 3, serviceRatePerSec: 2, startupSeconds: 10 },
      }),
    );
    assert.match(over, /^Bottleneck: memoryGiB \(128\.9% of capacity: OVER CAPACITY\)$/m); // 3 × 220 GiB·s = 660 GiB of 512
    assert.match(over, /drain time +never {2}never: serviceRatePerSec ≤ arrivalPerSec/);
  });

  it('without capacity, reports demand and asks for capacity', () => {
    const { capacity: _omitted, ...rest } = example('plan-minimal.json');
    const report = formatReport(plan(rest));
    assert.match(
      report,
      /^Recommendation: Demand is 10\.5 cores, 16 model slots and 29 GiB; add a "capacity" section/m,
    );
    assert.doesNotMatch(report, /utilization/);
  });
});
