// The formula builder writes the arithmetic it performs: checked on hand-written cases, and by
// re-evaluating the numbers side of random expressions and of every figure the planner reports — a
// printed formula that does not recompute its figure would mislead the operator reading it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { figures, scenario } from './arbitraries.test.ts';
import {
  add,
  ceil,
  constant,
  div,
  figure,
  floor,
  formatNumber,
  greaterThan,
  max,
  min,
  mul,
  named,
  sub,
  sum,
  type Expr,
} from './formula.ts';
import { plan } from './plan.ts';

/**
 * Written numbers carry six significant digits: the true value lies within this relative distance
 * of each.
 */
const WRITTEN_RELATIVE_ERROR = 5e-6 * (1 + 1e-9);
type Interval = readonly [number, number];

/**
 * Evaluates the numbers side of a formula (`2 × (3 + 4)`) in interval arithmetic: each written
 * number stands for every value that rounds to it, so cancellation (`98.4919 − 95.6028`) widens the
 * interval instead of failing the check. Undefined when the text is not plain arithmetic (a rule, a
 * collapsed Σ).
 */
function evaluate(text: string): Interval | undefined {
  const tokens =
    text.match(/\d+(?:\.\d+)?(?:e[-+]?\d+)?|∞|min|max|floor|ceil|[-+×÷−(),]|\S/g) ?? [];
  let at = 0;
  const peek = () => tokens[at];
  const take = (expected?: string) => {
    const token = tokens[at++];
    if (token === undefined || (expected !== undefined && token !== expected))
      throw new SyntaxError(`expected ${expected ?? 'more'} at ${at} in ${text}`);
    return token;
  };
  const expr = (): Interval => {
    let value = term();
    while (peek() === '+' || peek() === '−') {
      const [op, rhs] = [take(), term()];
      value =
        op === '+'
          ? [value[0] + rhs[0], value[1] + rhs[1]]
          : [value[0] - rhs[1], value[1] - rhs[0]];
    }
    return value;
  };
  const term = (): Interval => {
    let value = atom();
    while (peek() === '×' || peek() === '÷') {
      const [op, rhs] = [take(), atom()];
      if (op === '÷' && rhs[0] <= 0 && rhs[1] >= 0) {
        value = [-Infinity, Infinity]; // a divisor that may be 0 bounds nothing
        continue;
      }
      const products = (
        op === '×'
          ? [value[0] * rhs[0], value[0] * rhs[1], value[1] * rhs[0], value[1] * rhs[1]]
          : [value[0] / rhs[0], value[0] / rhs[1], value[1] / rhs[0], value[1] / rhs[1]]
      ).map((v) => (Number.isNaN(v) ? 0 : v));
      value = [Math.min(...products), Math.max(...products)];
    }
    return value;
  };
  const atom = (): Interval => {
    const token = take();
    if (token === '(') {
      if (peek() === '-') {
        take('-');
        const n = atom();
        take(')');
        return [-n[1], -n[0]];
      }
      const inner = expr();
      take(')');
      return inner;
    }
    if (token === '∞') return [Infinity, Infinity];
    if (token === 'min' || token === 'max' || token === 'floor' || token === 'ceil') {
      take('(');
      const args = [expr()];
      while (peek() === ',') take(',') && args.push(expr());
      take(')');
      const [a, b] = [args[0]!, args[1] ?? args[0]!];
      if (token === 'min') return [Math.min(a[0], b[0]), Math.min(a[1], b[1])];
      if (token === 'max') return [Math.max(a[0], b[0]), Math.max(a[1], b[1])];
      const f = token === 'floor' ? Math.floor : Math.ceil;
      return [f(a[0]), f(a[1])];
    }
    const n = Number(token);
    if (Number.isNaN(n)) throw new SyntaxError(`unexpected ${token} in ${text}`);
    // Even an integer-looking number may be a rounded one (24999.95 is written 25000).
    return [n * (1 - WRITTEN_RELATIVE_ERROR), n * (1 + WRITTEN_RELATIVE_ERROR)];
  };
  if (!/^[-+×÷−()., 0-9e∞]*$/.test(text.replace(/\b(?:min|max|floor|ceil)\(/g, '(')))
    return undefined;
  const value = expr();
  if (at !== tokens.length)
    throw new SyntaxError(`trailing ${tokens.slice(at).join(' ')} in ${text}`);
  return value;
}

/** The numbers side of `symbols = numbers`, when the formula has exactly that shape. */
function numbersSide(formula: string): string | undefined {
  const parts = formula.split(' = ');
  return parts.length === 2 ? parts[1] : undefined;
}

/**
 * True when the formula was arithmetic and was checked; fails when its numbers cannot produce the
 * value.
 */
function assertRecomputes(formula: string, value: number, where: string): boolean {
  const numbers = numbersSide(formula);
  if (numbers === undefined) return false;
  const range = evaluate(numbers);
  if (range === undefined) return false;
  if (value === range[0] || value === range[1]) return true; // also the infinite figures
  const slack = 1e-9 * Math.max(1, Math.abs(value)); // the value's own floating-point rounding
  assert.ok(
    value >= range[0] - slack && value <= range[1] + slack,
    `${where}: ${formula} gives [${range[0]}, ${range[1]}], reported ${value}`,
  );
  return true;
}

describe('formula builder', () => {
  it('writes names and numbers with the parentheses precedence needs', () => {
    const a = named('a', 2);
    const b = named('b', 3);
    const c = named('c', 4);
    const e = mul(add(a, b), c); // (2 + 3) × 4 = 20
    assert.deepEqual([e.value, e.symbols, e.numbers], [20, '(a + b) × c', '(2 + 3) × 4']);
    const d = div(a, mul(b, c)); // 2 ÷ (3 × 4) = 1/6
    assert.deepEqual([d.symbols, d.numbers], ['a ÷ (b × c)', '2 ÷ (3 × 4)']);
    assert.equal(d.value, 2 / 12);
    const s = sub(a, sub(b, c)); // 2 − (3 − 4) = 3
    assert.deepEqual([s.value, s.symbols], [3, 'a − (b − c)']);
    const left = sub(sub(a, b), c); // (2 − 3) − 4 = −5, written without parentheses
    assert.deepEqual([left.value, left.symbols], [-5, 'a − b − c']);
    const f = min(a, max(b, c)); // min(2, max(3, 4)) = 2
    assert.deepEqual(
      [f.value, f.symbols, f.numbers],
      [2, 'min(a, max(b, c))', 'min(2, max(3, 4))'],
    );
    assert.equal(ceil(div(constant(7), constant(2))).value, 4); // ceil(3.5)
    assert.equal(floor(div(constant(7), constant(2))).value, 3);
  });

  it('writes a figure as `symbols = numbers`, and a constant alone', () => {
    assert.equal(figure(mul(named('x', 2), constant(60)), 's').formula, 'x × 60 = 2 × 60');
    assert.equal(figure(constant(5), 's').formula, '5');
    assert.equal(figure(named('x', 5), 's').formula, 'x = 5');
  });

  it('writes numbers exactly when integral, to six significant digits otherwise, negatives in parentheses', () => {
    assert.equal(formatNumber(10000), '10000');
    assert.equal(formatNumber(2 / 3), '0.666667');
    assert.equal(formatNumber(0.0000012), '0.0000012');
    assert.equal(formatNumber(-3), '(-3)');
    assert.equal(formatNumber(Number.POSITIVE_INFINITY), '∞');
  });

  it('collapses a long sum but keeps its exact value', () => {
    const terms = Array.from({ length: 12 }, (_, i) => named(`t${i}`, i)); // 0 + 1 + … + 11 = 66
    const s = sum(terms, 'terms');
    assert.equal(s.value, 66);
    assert.equal(s.symbols, 'Σ terms');
    assert.match(s.numbers, /12 terms/);
    assert.equal(sum([], 'nothing').value, 0);
    assert.equal(sum([named('a', 1), named('b', 2)], 'x').symbols, 'a + b');
  });

  it('writes a comparison with both sides', () => {
    const v = greaterThan(named('wait', 6), mul(named('GiB', 2), constant(0.75))); // 6 > 1.5
    assert.equal(v.value, true);
    assert.equal(v.formula, 'wait > GiB × 0.75: 6 > 2 × 0.75');
  });

  it('random expressions: the numbers side evaluates to the value', () => {
    const leaf: fc.Arbitrary<Expr> = fc
      .oneof(fc.integer({ min: 1, max: 100 }), fc.double({ min: 0.01, max: 100, noNaN: true }))
      .map((v) => named('v', v));
    const tree = fc.letrec<{ expr: Expr }>((tie) => ({
      expr: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        leaf,
        fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => add(a, b)),
        fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => sub(a, b)),
        fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => mul(a, b)),
        fc.tuple(tie('expr'), leaf).map(([a, b]) => div(a, b)),
        fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => min(a, b)),
        fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => max(a, sub(b, a))),
      ),
    })).expr;
    fc.assert(
      fc.property(tree, (e) => {
        assert.ok(
          assertRecomputes(`x = ${e.numbers}`, e.value, 'expression'),
          `not arithmetic: ${e.numbers}`,
        );
      }),
    );
  });
});

describe('every reported formula recomputes its figure', () => {
  it('in the example scenario', () => {
    const result = plan(
      JSON.parse(readFileSync(new URL('../../examples/plan-agents.json', import.meta.url), 'utf8')),
    );
    const all = figures(result.sections);
    let checked = 0;
    for (const { path, figure: f } of all)
      if (assertRecomputes(f.formula, f.value, path)) checked += 1;
    assert.ok(
      checked >= all.length * 0.8,
      `only ${checked} of ${all.length} formulas were arithmetic`,
    );
  });

  it('in random scenarios', () => {
    fc.assert(
      fc.property(scenario(), (s) => {
        for (const { path, figure: f } of figures(plan(s).sections)) {
          assert.ok(f.formula.length > 0, `${path} has no formula`);
          assertRecomputes(f.formula, f.value, path);
        }
      }),
      { numRuns: 200 },
    );
  });
});
