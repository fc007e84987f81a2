// Named parameters for the SQL files of both stores: statements are written with `:name` and bound
// by position, strictly; and the reading of the statement files, which both dialects lay out alike.
import { readdirSync, readFileSync } from 'node:fs';
/**
 * Rewrites `:name` parameters to positional placeholders (`?N` for SQLite, `$N` for Postgres; the
 * same N for repeats), skipping comments, string literals and Postgres `::type` casts. Returns the
 * SQL and the names in N order.
 */
export function toPositional(
  sql: string,
  placeholder: (n: number) => string,
): { text: string; names: string[] } {
  const names: string[] = [];
  let text = '';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? sql.length : end;
      continue; // comments are dropped: they document, SQLite does not need them
    }
    if (c === "'") {
      const end = sql.indexOf("'", i + 1);
      if (end === -1) throw new Error('unterminated string literal in SQL');
      text += sql.slice(i, end + 1);
      i = end + 1;
      continue;
    }
    if (c === ':' && sql[i + 1] === ':') {
      text += '::';
      i += 2;
      continue;
    }
    const match = c === ':' ? /^:([a-z_][a-z0-9_]*)/.exec(sql.slice(i, i + 64)) : null;
    if (match !== null) {
      const name = match[1]!;
      let index = names.indexOf(name);
      if (index === -1) index = names.push(name) - 1;
      text += placeholder(index + 1);
      i += match[0].length;
      continue;
    }
    text += c;
    i++;
  }
  return { text, names };
}

/**
 * The values of `params` in the order of `names`. Strict both ways: a missing parameter and an
 * unexpected one both throw (naming `file`), so a typo cannot silently bind NULL.
 */
export function bindByPosition<V>(
  file: string,
  names: readonly string[],
  params: Readonly<Record<string, V | undefined>>,
): V[] {
  const values = names.map((name) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${file}: missing parameter :${name}`);
    return value;
  });
  if (Object.keys(params).length !== names.length) {
    const unexpected = Object.keys(params).filter((k) => !names.includes(k));
    throw new Error(
      `${file}: unexpected parameter(s) ${unexpected.map((k) => `:${k}`).join(', ')}`,
    );
  }
  return values;
}

/**
 * The SQL of each named statement in `dir` (`<name>.sql`). A listed name without a file and a file
 * that no name lists both throw: a statement is never silently missing or dead.
 */
export function readStatementFiles<N extends string>(
  dir: URL,
  names: readonly N[],
): Map<N, string> {
  const files = new Set(
    readdirSync(dir)
      .filter((f) => f.endsWith('.sql'))
      .map((f) => f.slice(0, -4)),
  );
  const sql = new Map<N, string>();
  for (const name of names) {
    if (!files.has(name)) throw new Error(`missing SQL statement file ${dir.pathname}${name}.sql`);
    sql.set(name, readFileSync(new URL(`${name}.sql`, dir), 'utf8'));
    files.delete(name);
  }
  if (files.size > 0) throw new Error(`unregistered SQL statement files: ${[...files].join(', ')}`);
  return sql;
}

/** Every statement file of a directory, by name (a store area's statements). */
export function readStatementDirectory(dir: URL): Map<string, string> {
  const sql = new Map<string, string>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.sql'))) {
    sql.set(file.slice(0, -4), readFileSync(new URL(file, dir), 'utf8'));
  }
  return sql;
}
