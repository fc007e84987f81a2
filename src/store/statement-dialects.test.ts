// Both dialects define the same named statements with the same parameters: the shared procedures
// (procedures/) call statements by name, so a statement or a parameter that one dialect gains or
// loses would break the other backend. The only differences allowed are listed below, each with the
// capability flag that makes a procedure pick it.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { toPositional } from './sql-params.ts';

const DIRECTORIES = [
  'statements',
  'schedule-statements',
  'artifact-statements',
  'archive-statements',
] as const;

/** Statements one dialect has and the other has not, by directory, with why. */
const DIALECT_ONLY: Record<'sqlite' | 'postgres', Record<string, string>> = {
  sqlite: {
    'statements/insert-event': 'Dialect.bulkStatements false: one event per statement',
    'statements/upsert-journal-entry':
      'Dialect.bulkStatements false: one journal entry per statement',
    'statements/claim-tenant-runs':
      'Dialect.bulkStatements false: one tenant of a fair claim per statement',
    'schedule-statements/insert-schedule-event':
      'Dialect.bulkStatements false: one schedule event per statement',
  },
  postgres: {
    'statements/insert-events': "Dialect.bulkStatements true: a commit's events in one statement",
    'statements/upsert-journal-entries':
      "Dialect.bulkStatements true: a commit's journal entries in one statement",
    'schedule-statements/insert-schedule-events':
      "Dialect.bulkStatements true: a pass's schedule events in one statement",
    'statements/commit-effects':
      'the write queue merges effect commits of different runs into one statement',
    'statements/read-server-settings':
      'durability checks against the server (synchronous standby, WAL writer delay)',
    'statements/claim-fair-refresh': 'Dialect.sharedFairClaims: one backlog refresh per cluster',
    'statements/fair-backlog-unflagged': 'Dialect.sharedFairClaims: the backlog refresh',
    'statements/fair-backlog-weight': 'Dialect.sharedFairClaims: the backlog refresh',
    'statements/fair-claim':
      'Dialect.sharedFairClaims: a claim pass (window, plan, claim, attempts) in one statement',
    'statements/flag-fair-tenants': 'Dialect.sharedFairClaims: the backlog refresh',
    'statements/reserve-rate': 'BackendCapabilities.sharedRateWindows',
    'statements/settle-rate': 'BackendCapabilities.sharedRateWindows',
  },
};

/**
 * Every statement of a dialect (`dir/name`) with its parameter names, read from the .sql files as
 * the loaders read them.
 */
function statementsOf(dialect: 'sqlite' | 'postgres'): Map<string, string[]> {
  const statements = new Map<string, string[]>();
  for (const dir of DIRECTORIES) {
    const url = new URL(`./${dialect}/${dir}/`, import.meta.url);
    for (const file of readdirSync(url).filter((f) => f.endsWith('.sql'))) {
      const { names } = toPositional(readFileSync(new URL(file, url), 'utf8'), (n) => `$${n}`);
      statements.set(`${dir}/${file.slice(0, -4)}`, [...names].sort());
    }
  }
  return statements;
}

describe('statement dialects', () => {
  const sqlite = statementsOf('sqlite');
  const postgres = statementsOf('postgres');

  it('define the same statements, apart from the listed dialect-only ones', () => {
    const onlyIn = (a: Map<string, string[]>, b: Map<string, string[]>) =>
      [...a.keys()].filter((k) => !b.has(k)).sort();
    assert.deepEqual(
      onlyIn(sqlite, postgres),
      Object.keys(DIALECT_ONLY.sqlite).sort(),
      'statements only SQLite defines',
    );
    assert.deepEqual(
      onlyIn(postgres, sqlite),
      Object.keys(DIALECT_ONLY.postgres).sort(),
      'statements only Postgres defines',
    );
  });

  it('give each shared statement the same parameters', () => {
    const shared = [...sqlite.keys()].filter((k) => postgres.has(k));
    assert.ok(shared.length > 50, `expected the shared statements, found ${shared.length}`);
    for (const name of shared)
      assert.deepEqual(postgres.get(name), sqlite.get(name), `parameters of ${name}`);
  });
});
