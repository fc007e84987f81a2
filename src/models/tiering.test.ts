// The tiering decision: budget and backlog routes, hint escalation, rule order, and properties over
// random rule lists (fast-check): a decision names only configured models, escalation beats a
// downgrade, and the same inputs give the same decision.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isKeelError } from '../domain/keel-error.ts';
import { ModelGateway } from './gateway.ts';
import { parseModelsFile } from './model-config.ts';
import {
  TIERING_HINTS,
  checkTieringRules,
  decideTier,
  type TieringConditions,
  type TieringRule,
} from './tiering.ts';

const RULES: TieringRule[] = [
  { when: { hint: 'risky' }, escalate: { to: 'large' } },
  { when: { budgetRemainingBelow: 0.2 }, route: { from: 'large', to: 'small' } },
  {
    when: { poolBacklogAbove: { pool: 'model:large', queued: 50 } },
    route: { from: 'large', to: 'medium' },
  },
];
const calm: TieringConditions = { budgetRemaining: 0.9, backlog: () => 0, hint: undefined };

describe('decideTier', () => {
  it('keeps the model while no condition holds', () => {
    assert.equal(decideTier(RULES, 'large', calm), null);
    assert.equal(decideTier(RULES, 'large', { ...calm, budgetRemaining: null }), null);
  });

  it('routes on a low budget and on a long backlog, the first matching rule winning', () => {
    assert.deepEqual(decideTier(RULES, 'large', { ...calm, budgetRemaining: 0.1 }), {
      requested: 'large',
      model: 'small',
      rule: 1,
      reason: 'budget',
      detail: 'the tenant has 10% of its daily budget left (below 20%)',
    });
    const backlog = decideTier(RULES, 'large', {
      ...calm,
      backlog: (p) => (p === 'model:large' ? 51 : 0),
    });
    assert.deepEqual([backlog?.model, backlog?.rule, backlog?.reason], ['medium', 2, 'backlog']);
    const both = decideTier(RULES, 'large', {
      budgetRemaining: 0,
      backlog: () => 99,
      hint: undefined,
    });
    assert.equal(both?.model, 'small', 'rule 1 comes before rule 2');
    assert.equal(
      decideTier(RULES, 'small', { ...calm, budgetRemaining: 0 }),
      null,
      'only from the named model',
    );
    assert.equal(
      decideTier(RULES, 'large', { ...calm, backlog: () => 50 }),
      null,
      'above, not at, the limit',
    );
  });

  it('escalates a hinted call, even when a downgrade would apply', () => {
    const d = decideTier(RULES, 'small', { budgetRemaining: 0, backlog: () => 99, hint: 'risky' });
    assert.deepEqual([d?.model, d?.reason], ['large', 'hint']);
    assert.equal(
      decideTier(RULES, 'large', { ...calm, hint: 'complex' }),
      null,
      'no rule for complex',
    );
  });

  it('refuses rules naming models that are not configured, or routing a model to itself', () => {
    assert.throws(
      () => checkTieringRules(RULES, new Set(['large', 'small'])),
      (e: unknown) =>
        isKeelError(e) && e.code === 'config_invalid' && /tiering\.2: model medium/.test(e.message),
    );
    assert.throws(
      () =>
        checkTieringRules(
          [{ when: { budgetRemainingBelow: 0.5 }, route: { from: 'a', to: 'a' } }],
          new Set(['a']),
        ),
      /another model/,
    );
    assert.throws(
      () =>
        new ModelGateway([], { tiering: [{ when: { hint: 'risky' }, escalate: { to: 'nope' } }] }),
      /model nope is not configured/,
    );
  });

  it('the models file validates rules field by field', () => {
    const file = (tiering: unknown) => ({ models: [{ name: 'large', provider: 'mock' }], tiering });
    assert.equal(parseModelsFile(file(RULES)).options.tiering?.length, 3);
    const bad: Array<[unknown, RegExp]> = [
      [[{ when: {}, route: { from: 'a', to: 'b' } }], /tiering\.0\.when: must hold exactly one/],
      [
        [{ when: { budgetRemainingBelow: 1.5 }, route: { from: 'a', to: 'b' } }],
        /tiering\.0\.when\.budgetRemainingBelow/,
      ],
      [
        [{ when: { hint: 'risky' }, route: { from: 'a', to: 'b' } }],
        /tiering\.0\.escalate: a hint rule escalates/,
      ],
      [
        [{ when: { budgetRemainingBelow: 0.2 }, escalate: { to: 'b' } }],
        /tiering\.0\.route: a budget or backlog rule routes/,
      ],
      [
        [
          {
            when: { poolBacklogAbove: { pool: 'large', queued: 5 } },
            route: { from: 'a', to: 'b' },
          },
        ],
        /pool name like model:large/,
      ],
      [[{ when: { hint: 'urgent' }, escalate: { to: 'b' } }], /tiering\.0\.when\.hint/],
    ];
    for (const [rules, pattern] of bad)
      assert.throws(() => parseModelsFile(file(rules)), pattern, JSON.stringify(rules));
  });
});

const MODELS = ['small', 'medium', 'large', 'huge'];
const model = fc.constantFrom(...MODELS);
const rule: fc.Arbitrary<TieringRule> = fc.oneof(
  fc
    .record({ below: fc.double({ min: 0.01, max: 1, noNaN: true }), from: model, to: model })
    .map(({ below, from, to }) => ({ when: { budgetRemainingBelow: below }, route: { from, to } })),
  fc
    .record({ pool: model, queued: fc.nat(100), from: model, to: model })
    .map(({ pool, queued, from, to }) => ({
      when: { poolBacklogAbove: { pool: `model:${pool}`, queued } },
      route: { from, to },
    })),
  fc
    .record({ hint: fc.constantFrom(...TIERING_HINTS), to: model })
    .map(({ hint, to }) => ({ when: { hint }, escalate: { to } })),
);
const conditions = fc.record({
  budgetRemaining: fc.option(fc.double({ min: 0, max: 1, noNaN: true })),
  backlogs: fc.dictionary(fc.constantFrom(...MODELS.map((m) => `model:${m}`)), fc.nat(200)),
  hint: fc.option(fc.constantFrom(...TIERING_HINTS), { nil: undefined }),
});
const asConditions = (c: {
  budgetRemaining: number | null;
  backlogs: Record<string, number>;
  hint: 'risky' | 'complex' | undefined;
}): TieringConditions => ({
  budgetRemaining: c.budgetRemaining,
  backlog: (pool) => c.backlogs[pool] ?? 0,
  hint: c.hint,
});

describe('decideTier properties', () => {
  it('never names a model outside the configured set; escalation beats downgrade; deterministic', () => {
    fc.assert(
      fc.property(fc.array(rule, { maxLength: 8 }), model, conditions, (rules, asked, c) => {
        const d = decideTier(rules, asked, asConditions(c));
        const again = decideTier(rules, asked, asConditions(c));
        assert.deepEqual(d, again, 'same inputs, same decision');
        if (d === null) return;
        assert.ok(MODELS.includes(d.model), `decided ${d.model}`);
        assert.equal(d.requested, asked);
        const escalation = rules.find((r) => 'escalate' in r && r.when.hint === c.hint);
        if (escalation !== undefined && 'escalate' in escalation) {
          assert.equal(d.reason, 'hint', 'an applicable escalation always decides');
          assert.equal(d.model, escalation.escalate.to);
        } else {
          assert.notEqual(d.reason, 'hint');
          const chosen = rules[d.rule]!;
          assert.ok('route' in chosen && chosen.route.from === asked);
        }
      }),
      { numRuns: 2_000 },
    );
  });
});
