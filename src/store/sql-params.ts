// Named parameters for the SQL files of both stores: statements are written with `:name` and bound
// by position.
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
