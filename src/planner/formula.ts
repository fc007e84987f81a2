// Formula-carrying arithmetic for the planner. Every figure a section reports is computed through
// these helpers, which build the formula text (with names, and with the numbers filled in) from the
// very operations that produce the value, so a printed formula cannot drift from the arithmetic
// behind it. Pure: knows nothing of scenarios, sections or output formats.

/**
 * Digits kept when a number is written into a formula: enough to recompute the figure to about
 * 1e-5.
 */
const FORMULA_SIGNIFICANT_DIGITS = 6;
/**
 * A sum with more terms than this is written as `Σ label` with its first terms, not term by term.
 */
const SUM_TERMS_SHOWN_MAX = 8;

/**
 * Units a figure can carry; `ratio` is a fraction of a limit (1 = 100%), `probability` lies in [0,
 * 1], `cost` is in whatever currency the scenario's prices and costs use.
 */
export type Unit =
  | 'tasks/s'
  | 's'
  | 'ms'
  | 'GiB'
  | 'GiB·s'
  | 'cores'
  | 'slots'
  | 'environments'
  | 'environments/s'
  | 'ratio'
  | 'probability'
  | 'cost'
  | 'calls'
  | 'requests'
  | 'requests/s'
  | 'requests/min'
  | 'tokens/min'
  | 'runs'
  | 'batches'
  | 'waves';

/**
 * A reported number: its value (may be `Infinity`: unbounded, or never), unit, and the formula that
 * produced it.
 */
export interface Figure {
  readonly value: number;
  readonly unit: Unit;
  /**
   * `symbols = numbers`, e.g. `arrivalPerSec × roundsPerTask = 2 × 8`; just the name for a plain
   * input.
   */
  readonly formula: string;
}

/** A reported yes/no decision and the comparison behind it. */
export interface Verdict {
  readonly value: boolean;
  readonly formula: string;
}

/** 0: a sum or difference; 1: a product or quotient; 2: an atom (name, number, function call). */
type Rank = 0 | 1 | 2;

/**
 * An expression under construction: its value and its text, written with names and with numbers.
 */
export interface Expr {
  readonly value: number;
  readonly symbols: string;
  readonly numbers: string;
  readonly rank: Rank;
}

/**
 * Writes a number as it appears inside a formula: integers exactly, others to six significant
 * digits.
 */
export function formatNumber(value: number): string {
  if (value === Number.POSITIVE_INFINITY) return '∞';
  if (value === Number.NEGATIVE_INFINITY) return '(-∞)';
  const text = Number.isInteger(value)
    ? String(value)
    : String(Number(value.toPrecision(FORMULA_SIGNIFICANT_DIGITS)));
  return value < 0 ? `(${text})` : text;
}

/**
 * A named input or intermediate figure: written as its name, with its value on the numbers side.
 */
export function named(name: string, value: number | { readonly value: number }): Expr {
  const v = typeof value === 'number' ? value : value.value;
  return { value: v, symbols: name, numbers: formatNumber(v), rank: 2 };
}

/** A literal constant such as 1 or 60. */
export function constant(value: number): Expr {
  const text = formatNumber(value);
  return { value, symbols: text, numbers: text, rank: 2 };
}

function side(e: Expr, minRank: Rank, key: 'symbols' | 'numbers'): string {
  return e.rank < minRank ? `(${e[key]})` : e[key];
}

function join(
  parts: readonly Expr[],
  operator: string,
  minRank: Rank,
  rank: Rank,
  value: number,
): Expr {
  return {
    value,
    symbols: parts.map((p) => side(p, minRank, 'symbols')).join(` ${operator} `),
    numbers: parts.map((p) => side(p, minRank, 'numbers')).join(` ${operator} `),
    rank,
  };
}

export function add(first: Expr, ...rest: Expr[]): Expr {
  const terms = [first, ...rest];
  return join(
    terms,
    '+',
    0,
    0,
    terms.reduce((s, t) => s + t.value, 0),
  );
}

export function sub(a: Expr, b: Expr): Expr {
  return {
    value: a.value - b.value,
    symbols: `${a.symbols} − ${side(b, 1, 'symbols')}`,
    numbers: `${a.numbers} − ${side(b, 1, 'numbers')}`,
    rank: 0,
  };
}

export function mul(first: Expr, ...rest: Expr[]): Expr {
  const factors = [first, ...rest];
  return join(
    factors,
    '×',
    1,
    1,
    factors.reduce((p, f) => p * f.value, 1),
  );
}

/**
 * a ÷ b; a zero divisor gives ±Infinity (or NaN for 0 ÷ 0): callers guard the cases that mean
 * something.
 */
export function div(a: Expr, b: Expr): Expr {
  return {
    value: a.value / b.value,
    symbols: `${side(a, 1, 'symbols')} ÷ ${side(b, 2, 'symbols')}`,
    numbers: `${side(a, 1, 'numbers')} ÷ ${side(b, 2, 'numbers')}`,
    rank: 1,
  };
}

function call(name: string, args: readonly Expr[], value: number): Expr {
  return {
    value,
    symbols: `${name}(${args.map((a) => a.symbols).join(', ')})`,
    numbers: `${name}(${args.map((a) => a.numbers).join(', ')})`,
    rank: 2,
  };
}

export const min = (a: Expr, b: Expr): Expr => call('min', [a, b], Math.min(a.value, b.value));
export const max = (a: Expr, b: Expr): Expr => call('max', [a, b], Math.max(a.value, b.value));
export const floor = (a: Expr): Expr => call('floor', [a], Math.floor(a.value));
export const ceil = (a: Expr): Expr => call('ceil', [a], Math.ceil(a.value));

/**
 * Σ of many terms: written term by term when short, else as `Σ label` and its first terms (the
 * value is exact).
 */
export function sum(terms: readonly Expr[], label: string): Expr {
  const [first, ...rest] = terms;
  if (first === undefined) return { value: 0, symbols: `Σ ${label} (none)`, numbers: '0', rank: 2 };
  if (terms.length <= SUM_TERMS_SHOWN_MAX) return add(first, ...rest);
  const value = terms.reduce((s, t) => s + t.value, 0);
  const shown = terms.slice(0, 3).map((t) => side(t, 0, 'numbers'));
  return {
    value,
    symbols: `Σ ${label}`,
    numbers: `${shown.join(' + ')} + … (${terms.length} terms)`,
    rank: 0,
  };
}

/**
 * The finished figure: value, unit, and `symbols = numbers` (just the symbols when both sides read
 * the same).
 */
export function figure(e: Expr, unit: Unit): Figure {
  return {
    value: e.value,
    unit,
    formula: e.symbols === e.numbers ? e.symbols : `${e.symbols} = ${e.numbers}`,
  };
}

/**
 * A figure whose value is not arithmetic on the inputs (a choice among candidates); `rule` says how
 * it was chosen.
 */
export function chosen(value: number, unit: Unit, rule: string): Figure {
  return { value, unit, formula: rule };
}

/** `a > b`, with the comparison written out with names and with numbers. */
export function greaterThan(a: Expr, b: Expr): Verdict {
  return {
    value: a.value > b.value,
    formula: `${a.symbols} > ${b.symbols}: ${a.numbers} > ${b.numbers}`,
  };
}
