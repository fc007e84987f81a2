// The error-code registry is the API's stable vocabulary: codes are unique snake_case names with an
// HTTP status and a meaning, and every code the source raises by literal is registered (a typo
// would otherwise ship as a 500).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES } from './error-codes.ts';
import { KeelError, deserializeError, serializeError } from './keel-error.ts';

const SRC_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
const SNAKE_CASE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;

/**
 * Production sources under src/ (tests excluded: they may name codes on purpose to test rejection).
 */
function sourceFiles(): Array<{ path: string; text: string }> {
  return readdirSync(SRC_DIR, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.d.ts'))
    .map((f) => ({
      path: relative(SRC_DIR, join(SRC_DIR, f)),
      text: readFileSync(join(SRC_DIR, f), 'utf8'),
    }));
}

/**
 * Every code a source file names by literal: `new KeelError('x'` (also across lines and in
 * ternaries), `serializeError(e, 'x')`, and error bodies `{ code: 'x', message`.
 */
function codeLiterals(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/new KeelError\(\s*(['"`])([^'"`]*)\1/g)) found.push(m[2]!);
  for (const m of text.matchAll(
    /new KeelError\(\s*[^'"`,()]+\?\s*(['"`])([^'"`]*)\1\s*:\s*(['"`])([^'"`]*)\3/g,
  ))
    found.push(m[2]!, m[4]!);
  for (const m of text.matchAll(/serializeError\([^,()]+,\s*(['"`])([^'"`]*)\1\s*\)/g))
    found.push(m[2]!);
  for (const m of text.matchAll(/\bcode:\s*(['"`])([^'"`]*)\1\s*,\s*message\b/g)) found.push(m[2]!);
  // An interpolated template (the CLI's client-side `http_${status}`) is not a registry code and
  // cannot be checked here.
  return found.filter((code) => !code.includes('${'));
}

describe('ERROR_CODES', () => {
  const entries = Object.entries(ERROR_CODES);

  it('has codes', () => {
    assert.ok(entries.length >= 10);
  });

  it('names every code once, in snake_case', () => {
    for (const [code] of entries) assert.match(code, SNAKE_CASE, `${code} is not snake_case`);
    // Object keys cannot repeat at run time, but a repeated key in the source literal silently
    // wins: read the source.
    const source = readFileSync(join(SRC_DIR, 'domain', 'error-codes.ts'), 'utf8');
    const keys = [...source.matchAll(/^\s*([a-z0-9_]+):\s*\{\s*status:/gm)].map((m) => m[1]!);
    assert.equal(keys.length, entries.length, 'every registry entry is found in the source');
    const repeated = keys.filter((k, i) => keys.indexOf(k) !== i);
    assert.deepEqual(repeated, [], `repeated codes: ${repeated.join(', ')}`);
  });

  it('gives every code an HTTP error status (400–599) and a non-empty one-line meaning', () => {
    for (const [code, { status, meaning }] of entries) {
      assert.ok(
        Number.isInteger(status) && status >= 400 && status <= 599,
        `${code}: status ${status}`,
      );
      assert.equal(typeof meaning, 'string', code);
      assert.ok(meaning.trim().length >= 10, `${code}: meaning too short`);
      assert.ok(!meaning.includes('\n'), `${code}: meaning must be one line`);
      assert.match(meaning, /\.$/, `${code}: meaning is a sentence ending with a full stop`);
    }
  });

  it('gives distinct codes distinct meanings', () => {
    const meanings = entries.map(([, e]) => e.meaning);
    assert.equal(new Set(meanings).size, meanings.length);
  });

  it('has the codes the API boundary relies on', () => {
    for (const code of [
      'internal',
      'validation_failed',
      'invalid_json',
      'not_found',
      'unauthorized',
      'payload_too_large',
      'unsupported_media_type',
    ]) {
      assert.ok(code in ERROR_CODES, code);
    }
    assert.equal(ERROR_CODES.internal.status, 500);
  });
});

describe('codes used in src/', () => {
  const files = sourceFiles();

  it('finds the sources and the code literals in them', () => {
    assert.ok(files.length > 20, `only ${files.length} source files found under ${SRC_DIR}`);
    const all = files.flatMap((f) => codeLiterals(f.text));
    assert.ok(
      all.length > 30,
      `only ${all.length} code literals found: the scan patterns are stale`,
    );
  });

  it('every `new KeelError(<literal>` and serialized error code is registered', () => {
    const unknown: string[] = [];
    for (const { path, text } of files) {
      for (const code of codeLiterals(text))
        if (!(code in ERROR_CODES)) unknown.push(`${path}: ${code}`);
    }
    assert.deepEqual(unknown, [], `unregistered codes:\n  ${unknown.join('\n  ')}`);
  });

  it('the scan recognises each form it claims to', () => {
    assert.deepEqual(codeLiterals(`throw new KeelError('run_terminal', 'x')`), ['run_terminal']);
    assert.deepEqual(codeLiterals(`throw new KeelError(\n  "stale_write",\n  'x')`), [
      'stale_write',
    ]);
    assert.deepEqual(
      codeLiterals(`new KeelError(big ? 'payload_too_large' : 'validation_failed', m)`),
      ['payload_too_large', 'validation_failed'],
    );
    assert.deepEqual(codeLiterals(`serializeError(error, 'tool_failed')`), ['tool_failed']);
    assert.deepEqual(codeLiterals(`send({ error: { code: 'not_found', message: m } })`), [
      'not_found',
    ]);
  });
});

describe('KeelError', () => {
  it('carries its registry status and serializes to { code, message, details? }', () => {
    const plain = new KeelError('run_not_found', 'gone');
    assert.equal(plain.status, 404);
    assert.deepEqual(plain.toJSON(), { code: 'run_not_found', message: 'gone' });
    const detailed = new KeelError('idempotency_conflict', 'used', { details: { runId: 'r' } });
    assert.deepEqual(detailed.toJSON(), {
      code: 'idempotency_conflict',
      message: 'used',
      details: { runId: 'r' },
    });
  });

  it('round-trips through the journal form; an unknown journaled code becomes internal', () => {
    const back = deserializeError(
      serializeError(new KeelError('tool_timeout', 'slow'), 'internal'),
    );
    assert.equal(back.code, 'tool_timeout');
    assert.equal(serializeError(new Error('boom'), 'agent_error').code, 'agent_error');
    assert.equal(deserializeError({ code: 'no_such_code', message: 'm' }).code, 'internal');
  });
});
