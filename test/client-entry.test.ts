// keel/client is browser-safe: importing it (from source, and from the build when built) loads the
// client's own modules, the pure backoff arithmetic of the domain and eventsource-parser, and
// nothing else of Keel or node_modules — no store, server, engine or Node-only package. Each entry
// is imported in a fresh Node process whose module hooks record every module resolved.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BUILT = existsSync(`${ROOT}dist/client/index.js`);

const PROBE = `
import { registerHooks } from 'node:module';
const urls = new Set();
registerHooks({ resolve(specifier, context, next) { const resolved = next(specifier, context); urls.add(resolved.url); return resolved; } });
await import(process.env.KEEL_PROBE_ENTRY);
process.stdout.write(JSON.stringify([...urls]));
`;

function loadedBy(entry: string): string[] {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', PROBE], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, KEEL_PROBE_ENTRY: pathToFileURL(`${ROOT}${entry}`).href },
  });
  return JSON.parse(out) as string[];
}

function assertBrowserSafe(entry: string): void {
  const urls = loadedBy(entry);
  const root = pathToFileURL(ROOT).href;
  const own = urls
    .filter((url) => url.startsWith(root) && !url.includes('/node_modules/'))
    .map((url) => url.slice(root.length).replace(/^(src|dist)\//, ''));
  assert.ok(own.includes('client/index.ts') || own.includes('client/index.js'), own.join(', '));
  assert.deepEqual(
    own.filter((path) => !/^(client\/|domain\/backoff\.)/.test(path)),
    [],
    `${entry} loads only the client and the backoff arithmetic`,
  );
  const packages = new Set(
    urls
      .filter((url) => url.includes('/node_modules/'))
      .map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1]),
  );
  assert.deepEqual([...packages], ['eventsource-parser'], `${entry} loads one package`);
  assert.deepEqual(
    urls.filter((url) => url.startsWith('node:')),
    ['node:module'].filter((url) => urls.includes(url)),
    `${entry} imports no Node built-in module`,
  );
}

test('keel/client from source loads no Node module and nothing of the server', () =>
  assertBrowserSafe('src/client/index.ts'));

test(
  'keel/client as built loads no Node module and nothing of the server',
  {
    skip: BUILT ? false : 'dist/ is not built (npm run build)',
  },
  () => assertBrowserSafe('dist/client/index.js'),
);

test('no module of src/client names a node: import', () => {
  for (const name of readdirSync(`${ROOT}src/client`)) {
    if (name.endsWith('.test.ts')) continue;
    const text = readFileSync(`${ROOT}src/client/${name}`, 'utf8');
    assert.doesNotMatch(text, /from 'node:/, `src/client/${name} imports a Node module`);
  }
});

test('package.json exports keel/client, built from src/client', () => {
  const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as {
    exports: Record<string, { types: string; default: string }>;
    dependencies: Record<string, string>;
  };
  assert.deepEqual(pkg.exports['./client'], {
    types: './dist/client/index.d.ts',
    default: './dist/client/index.js',
  });
  assert.ok(pkg.dependencies['eventsource-parser'], 'the client’s SSE parser ships with it');
});
