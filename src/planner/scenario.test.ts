// Scenario validation: every way a scenario can be wrong yields a ScenarioError whose issues name
// the field (as a path into the file) and the reason; the example files and generated valid
// scenarios parse.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { scenario } from './arbitraries.test.ts';
import { KeelError } from '../domain/keel-error.ts';
import {
  parseScenario,
  RECOVERY_TREE_MAX_ATTEMPTS,
  RECOVERY_TREE_MAX_DEPTH,
  ScenarioError,
  type ScenarioIssue,
} from './scenario.ts';

const example = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../../examples/${name}`, import.meta.url), 'utf8'));
const minimal = () => example('plan-minimal.json');

/** The issues parsing `input` raises (it must raise). */
function issuesOf(input: unknown): readonly ScenarioIssue[] {
  try {
    parseScenario(input);
  } catch (error) {
    assert.ok(error instanceof ScenarioError, `expected a ScenarioError, got ${String(error)}`);
    return error.issues;
  }
  assert.fail('the scenario was accepted');
}

function assertIssue(input: unknown, path: string, reason: RegExp): void {
  const issues = issuesOf(input);
  assert.ok(
    issues.some((i) => i.path === path && reason.test(i.reason)),
    `no issue at ${path} matching ${reason}; got:\n  ${issues.map((i) => `${i.path}: ${i.reason}`).join('\n  ')}`,
  );
}

/**
 * `base` with `value` set at the dotted `path` (creating nothing: the path must exist up to its
 * last key).
 */
function withField(
  base: Record<string, unknown>,
  path: string,
  value: unknown,
): Record<string, unknown> {
  const copy = structuredClone(base);
  const keys = path.split('.');
  let target = copy as Record<string, unknown>;
  for (const key of keys.slice(0, -1)) target = target[key] as Record<string, unknown>;
  const last = keys.at(-1)!;
  if (value === undefined) delete target[last];
  else target[last] = value;
  return copy;
}

describe('parseScenario', () => {
  it('accepts both example files', () => {
    assert.equal(parseScenario(example('plan-agents.json')).workload.env.policy, 'resident');
    assert.equal(parseScenario(minimal()).capacity?.modelSlots, 64);
  });

  it('accepts every generated valid scenario', () => {
    fc.assert(fc.property(scenario(), (s) => void parseScenario(s)));
  });

  it('is a validation_failed KeelError listing every issue in its message and details', () => {
    const bad = withField(
      withField(minimal(), 'workload.arrivalPerSec', -1),
      'capacity.cpuCores',
      0,
    );
    try {
      parseScenario(bad);
      assert.fail('accepted');
    } catch (error) {
      assert.ok(error instanceof KeelError);
      assert.equal(error.code, 'validation_failed');
      assert.match(error.message, /workload\.arrivalPerSec: must be ≥ 0/);
      assert.match(error.message, /capacity\.cpuCores: must be > 0/);
      assert.equal((error.details?.issues as unknown[] | undefined)?.length, 2);
    }
  });

  it('names unknown fields, at the top and nested, with the known ones', () => {
    assertIssue(
      { ...minimal(), prewarn: {} },
      'prewarn',
      /unknown field; known fields here: .*prewarm/,
    );
    assertIssue(
      withField(minimal(), 'workload.env.memGiB', 2),
      'workload.env.memGiB',
      /unknown field; known fields here: memoryGiB, policy/,
    );
    assertIssue(withField(minimal(), 'capacity.gpus', 2), 'capacity.gpus', /unknown field/);
  });

  it('names missing fields and wrong types', () => {
    assertIssue(
      withField(minimal(), 'workload.roundsPerTask', undefined),
      'workload.roundsPerTask',
      /is required/,
    );
    assertIssue(
      withField(minimal(), 'workload.roundsPerTask', '8'),
      'workload.roundsPerTask',
      /must be a number/,
    );
    assertIssue(withField(minimal(), 'workload.env', undefined), 'workload.env', /is required/);
    assertIssue(withField(minimal(), 'workload', undefined), 'workload', /is required/);
    assertIssue(withField(minimal(), 'capacity', []), 'capacity', /must be an object/);
    assertIssue(null, '(scenario)', /must be an object/);
    assertIssue(
      withField(minimal(), 'workload.env.policy', 'hibernate'),
      'workload.env.policy',
      /must be one of 'resident', 'rebuild', 'pause'/,
    );
  });

  it('refuses negative rates, durations and sizes in every section', () => {
    const full = example('plan-agents.json');
    const paths = [
      'workload.arrivalPerSec',
      'workload.modelSecondsPerRound',
      'workload.env.memoryGiB',
      'workload.env.prepSeconds',
      'pause.idleSeconds',
      'pause.pricePerGiBSecond',
      'prewarm.prepSeconds',
      'commits.workMs',
      'restart.serviceRatePerSec',
      'routing.networkMs',
      'burst.secondsPerCall',
      'quota.tokensPerCall',
      'recoveryTree.deadlineSeconds',
    ];
    for (const path of paths) assertIssue(withField(full, path, -0.5), path, /must be ≥ 0/);
    const tree = withField(full, 'recoveryTree.root.cost', -1);
    assertIssue(tree, 'recoveryTree.root.cost', /must be ≥ 0/);
  });

  it('refuses zero or negative limits', () => {
    for (const path of ['capacity.memoryGiB', 'quota.rpmLimit', 'quota.windowSeconds'])
      assertIssue(withField(example('plan-agents.json'), path, 0), path, /must be > 0/);
  });

  it('refuses probabilities outside [0, 1]', () => {
    const full = example('plan-agents.json');
    assertIssue(
      withField(full, 'prewarm.hitRate', 1.2),
      'prewarm.hitRate',
      /probability: must be in \[0, 1\]/,
    );
    assertIssue(withField(full, 'prewarm.hitRate', -0.1), 'prewarm.hitRate', /probability/);
    assertIssue(
      withField(full, 'recoveryTree.root.successProbability', 2),
      'recoveryTree.root.successProbability',
      /probability/,
    );
    const replicas = structuredClone(full.routing) as { replicas: Array<Record<string, unknown>> };
    replicas.replicas[1]!.cacheHit = 1.5;
    assertIssue({ ...full, routing: replicas }, 'routing.replicas[1].cacheHit', /probability/);
  });

  it('refuses failure shares that do not sum to 1, and accepts a sum within the tolerance', () => {
    const root = { name: 'a', cost: 1, seconds: 1, successProbability: 0.5 };
    const shares = (...s: number[]) => ({
      ...minimal(),
      recoveryTree: {
        deadlineSeconds: 10,
        root: { ...root, onFailure: s.map((share) => ({ share })) },
      },
    });
    assertIssue(
      shares(0.5, 0.4),
      'recoveryTree.root.onFailure',
      /shares sum to 0\.9; they must sum to 1/,
    );
    assertIssue(shares(0.7, 0.7), 'recoveryTree.root.onFailure', /shares sum to 1\.4/);
    parseScenario(shares(0.1, 0.2, 0.7));
    parseScenario(shares(1 / 3, 1 / 3, 1 / 3)); // within SHARE_SUM_TOLERANCE of 1, whatever the rounding
    parseScenario(shares(0.3333333, 0.3333333, 0.3333334));
    parseScenario(shares()); // no branches: every failure gives up
    const nested = {
      ...root,
      onFailure: [{ share: 1, next: { ...root, name: 'b', onFailure: [{ share: 0.3 }] } }],
    };
    assertIssue(
      { ...minimal(), recoveryTree: { deadlineSeconds: 10, root: nested } },
      'recoveryTree.root.onFailure[0].next.onFailure',
      /shares sum to 0\.3/,
    );
  });

  it('bounds the recovery tree before walking it recursively', () => {
    let deep: Record<string, unknown> = { name: 'x', cost: 0, seconds: 0, successProbability: 0 };
    for (let i = 0; i < 10_000; i += 1)
      deep = {
        name: 'x',
        cost: 0,
        seconds: 0,
        successProbability: 0,
        onFailure: [{ share: 1, next: deep }],
      };
    assertIssue(
      { ...minimal(), recoveryTree: { deadlineSeconds: 1, root: deep } },
      'recoveryTree.root',
      new RegExp(`deeper than ${RECOVERY_TREE_MAX_DEPTH}`),
    );
    const leaf = { name: 'x', cost: 0, seconds: 0, successProbability: 0 };
    const wide = {
      ...leaf,
      onFailure: Array.from({ length: RECOVERY_TREE_MAX_ATTEMPTS }, () => ({
        share: 1 / RECOVERY_TREE_MAX_ATTEMPTS,
        next: leaf,
      })),
    };
    assertIssue(
      { ...minimal(), recoveryTree: { deadlineSeconds: 1, root: wide } },
      'recoveryTree',
      new RegExp(`more than ${RECOVERY_TREE_MAX_ATTEMPTS} attempts`),
    );
  });

  it('refuses empty lists, fractional counts and repeated replica names', () => {
    const full = example('plan-agents.json');
    assertIssue(withField(full, 'prewarm.leadSeconds', []), 'prewarm.leadSeconds', /at least one/);
    assertIssue(
      withField(full, 'commits.batchSizes', [10, 0]),
      'commits.batchSizes[1]',
      /must be ≥ 1/,
    );
    assertIssue(withField(full, 'commits.requests', 2.5), 'commits.requests', /whole number/);
    assertIssue(withField(full, 'burst.cores', 0), 'burst.cores', /must be ≥ 1/);
    const routing = structuredClone(full.routing) as { replicas: Array<Record<string, unknown>> };
    routing.replicas[2]!.name = routing.replicas[0]!.name;
    assertIssue({ ...full, routing }, 'routing.replicas[2].name', /repeats the replica name/);
  });

  it('names the field of any negative number in a generated scenario', () => {
    const numericPaths = (value: unknown, path: string[] = []): string[][] =>
      typeof value === 'number'
        ? [path]
        : typeof value === 'object' && value !== null && !Array.isArray(value)
          ? Object.entries(value).flatMap(([k, v]) => numericPaths(v, [...path, k]))
          : [];
    fc.assert(
      fc.property(scenario(), fc.nat(), (s, pick) => {
        const paths = numericPaths(s).filter((p) => p[0] !== 'recoveryTree');
        const path = paths[pick % paths.length]!;
        const bad = withField(s as unknown as Record<string, unknown>, path.join('.'), -1);
        assert.ok(
          issuesOf(bad).some((i) => i.path === path.join('.')),
          path.join('.'),
        );
      }),
    );
  });
});
