// The CLI kit's argument parsing and one-line messages: parseArgs' errors reworded with the flag
// and the flags there are, numbers checked against their range, and multi-line problems folded onto
// one line.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HELP_FLAG, intFlag, jsonArgument, onePositional, parseFlags, portFlag } from './args.ts';
import { oneLine, UsageError } from './output.ts';

const FLAGS = {
  agents: { type: 'string' },
  json: { type: 'boolean', default: false },
  ...HELP_FLAG,
} as const;

describe('parseFlags', () => {
  it('returns typed values, positionals and --no- forms of boolean flags', () => {
    const { values, positionals } = parseFlags(
      ['a.ts', '--agents', 'x.ts', '--no-json', '-h'],
      FLAGS,
    );
    assert.deepEqual({ ...values }, { agents: 'x.ts', json: false, help: true });
    assert.deepEqual(positionals, ['a.ts']);
  });

  it('names an unknown flag and the flags the command takes', () => {
    assert.throws(
      () => parseFlags(['--agent', 'x.ts'], FLAGS),
      (error: unknown) => {
        assert.ok(error instanceof UsageError);
        assert.equal(
          error.message,
          'unknown flag --agent; the flags here are --agents, --json, --help',
        );
        return true;
      },
    );
  });

  it('says which flag lacks a value, takes none, or which argument is unexpected', () => {
    assert.throws(() => parseFlags(['--agents'], FLAGS), {
      name: 'UsageError',
      message: '--agents needs a value',
    });
    assert.throws(() => parseFlags(['--json=yes'], FLAGS), {
      name: 'UsageError',
      message: '--json takes no value',
    });
    assert.throws(() => parseFlags(['extra'], FLAGS, { positionals: false }), {
      name: 'UsageError',
      message: "unexpected argument 'extra'",
    });
  });
});

describe('values from the command line', () => {
  it('accepts whole numbers in range and refuses the rest with the flag named', () => {
    assert.equal(intFlag(undefined, '--limit', 1), undefined);
    assert.equal(intFlag('25', '--limit', 1), 25);
    for (const bad of ['0', '1.5', '1e3', '-1', '', 'ten'])
      assert.throws(() => intFlag(bad, '--limit', 1), {
        message: new RegExp(`--limit must be an integer ≥ 1, got '${bad}'`),
      });
    assert.equal(portFlag('0'), 0);
    assert.throws(() => portFlag('65536'), {
      message: "--port must be an integer from 0 to 65535, got '65536'",
    });
  });

  it('parses JSON and explains that a string needs quotes', () => {
    assert.deepEqual(jsonArgument('{"a":1}', '--input'), { a: 1 });
    assert.throws(() => jsonArgument('yes', '--input'), {
      message: /^--input is not valid JSON \(.*\); a string needs quotes/,
    });
  });

  it('wants exactly one positional', () => {
    assert.equal(onePositional(['run_1'], 'id'), 'run_1');
    assert.throws(() => onePositional([], 'id'), { message: 'expected <id>, got none' });
    assert.throws(() => onePositional(['a', 'b'], 'id'), { message: "expected <id>, got 'a' 'b'" });
  });
});

describe('oneLine', () => {
  it('folds an indented list of problems onto one line', () => {
    assert.equal(
      oneLine('invalid configuration:\n  KEEL_PORT: too big\n  KEEL_HOST: empty\n'),
      'invalid configuration: KEEL_PORT: too big; KEEL_HOST: empty',
    );
    assert.equal(oneLine('one line'), 'one line');
  });
});
