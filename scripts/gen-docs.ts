// `npm run docs`: writes the generated reference pages (docs/reference/*.md) from the code;
// `--check` writes nothing and exits 1 naming each stale page. The rendering lives in
// reference-docs.ts; this file only reads and writes files.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderReferencePages } from './reference-docs.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const check = process.argv.includes('--check');
const stale: string[] = [];
for (const [page, text] of await renderReferencePages()) {
  const file = join(root, page);
  let current: string | undefined;
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === text) continue;
  if (check) {
    stale.push(page);
    continue;
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  process.stdout.write(`wrote ${page}\n`);
}
if (stale.length > 0) {
  process.stderr.write(`stale generated pages (run npm run docs): ${stale.join(', ')}\n`);
  process.exitCode = 1;
}
