// What an agent isolate loads when its agents module imports the package: the root entry (`keel`)
// must load the SDK only — no store, no database driver (pg, node:sqlite), no HTTP server
// (fastify), no engine, no sandbox — and `keel/sandbox` adds the sandbox tools without a store or a
// driver; the SDK adapters (`keel/ai-sdk`, `keel/openai-agents`) add no store, driver or engine
// either (the AI SDK's is types only). Each entry is imported in a fresh Node process whose module
// hooks record every module resolved (ESM and CommonJS alike), from source and from the build.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BUILT = existsSync(`${ROOT}dist/index.js`) && existsSync(`${ROOT}dist/sandbox/index.js`);
const SKIP_UNBUILT =
  BUILT || process.env.CI === 'true' ? false : 'dist/ is not built (npm run build)';

/**
 * Imports `entry` in a fresh process; answers every module URL resolved and the built-in modules
 * loaded.
 */
const PROBE = `
import { registerHooks } from 'node:module';
const urls = new Set();
registerHooks({ resolve(specifier, context, next) { const resolved = next(specifier, context); urls.add(resolved.url); return resolved; } });
await import(process.env.KEEL_PROBE_ENTRY);
process.stdout.write(JSON.stringify({ urls: [...urls], builtins: process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')) }));
`;

function loadedBy(entry: string): { urls: string[]; builtins: string[] } {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', PROBE], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, KEEL_PROBE_ENTRY: pathToFileURL(`${ROOT}${entry}`).href },
  });
  return JSON.parse(out) as { urls: string[]; builtins: string[] };
}

/**
 * The package's own modules, as paths below src/ or dist/ (`sandbox/tiers.ts` → `sandbox/tiers`).
 */
const ownModules = (urls: string[]): string[] =>
  urls
    .filter((url) => url.startsWith(pathToFileURL(ROOT).href) && !url.includes('/node_modules/'))
    .map((url) =>
      url
        .slice(pathToFileURL(ROOT).href.length)
        .replace(/^(src|dist)\//, '')
        .replace(/\.(ts|js)$/, ''),
    );

const packagesOf = (urls: string[]): string[] =>
  [
    ...new Set(
      urls
        .filter((url) => url.includes('/node_modules/'))
        .map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1] ?? url),
    ),
  ].sort();

const FORBIDDEN_PACKAGES =
  /^(pg|pg-.+|fastify|@fastify\/.+|pino|prom-client|@opentelemetry\/.+|openai|@anthropic-ai\/sdk)$/;
// (Not `net`: Node loads it itself for a piped stdout.)
const FORBIDDEN_BUILTINS = ['NativeModule sqlite', 'NativeModule http', 'NativeModule https'];

function assertSdkOnly(entry: string): void {
  const { urls, builtins } = loadedBy(entry);
  const own = ownModules(urls);
  assert.ok(
    own.includes('sdk/define'),
    `the probe saw the SDK load from ${entry}: ${own.join(', ')}`,
  );
  assert.deepEqual(
    own.filter((path) => !/^(index|sdk\/|domain\/)/.test(path)),
    [],
    `${entry} loads only the SDK and the domain vocabulary`,
  );
  assert.deepEqual(
    packagesOf(urls).filter((name) => FORBIDDEN_PACKAGES.test(name)),
    [],
    `${entry} loads no driver, server or provider package`,
  );
  assert.deepEqual(
    builtins.filter((name) => FORBIDDEN_BUILTINS.includes(name)),
    [],
    `${entry} loads no node:sqlite, http or https`,
  );
}

function assertSandboxWithoutStore(entry: string): void {
  const { urls, builtins } = loadedBy(entry);
  const own = ownModules(urls);
  assert.ok(
    own.includes('tools/sandbox-tools') && own.includes('sandbox/profile'),
    `${entry} loads the sandbox tools: ${own.join(', ')}`,
  );
  assert.deepEqual(
    own.filter((path) => /^(store|engine|api|telemetry|cli|config)\//.test(path)),
    [],
    `${entry} loads no store, engine, API or config`,
  );
  assert.deepEqual(
    packagesOf(urls).filter((name) => FORBIDDEN_PACKAGES.test(name)),
    [],
    `${entry} loads no driver or server package`,
  );
  assert.ok(!builtins.includes('NativeModule sqlite'), `${entry} does not load node:sqlite`);
}

test('the root entry from source loads only the SDK', () => assertSdkOnly('src/index.ts'));

test('the root entry as built (dist/index.js) loads only the SDK', { skip: SKIP_UNBUILT }, () =>
  assertSdkOnly('dist/index.js'),
);

test('keel/sandbox loads the sandbox tools but no store, driver or engine (source and build)', {
  skip: SKIP_UNBUILT,
}, () => {
  assertSandboxWithoutStore('src/sandbox/index.ts');
  assertSandboxWithoutStore('dist/sandbox/index.js');
});

test('keel/ai-sdk loads the SDK and its adapter, and nothing of the AI SDK at run time (source and build)', {
  skip: SKIP_UNBUILT,
}, () => {
  for (const entry of ['src/adapters/ai-sdk/index.ts', 'dist/adapters/ai-sdk/index.js']) {
    const { urls, builtins } = loadedBy(entry);
    const own = ownModules(urls);
    assert.ok(own.includes('adapters/ai-sdk/language-model'), `${entry}: ${own.join(', ')}`);
    assert.deepEqual(
      own.filter((path) => !/^(sdk\/|domain\/|adapters\/ai-sdk\/)/.test(path)),
      [],
      `${entry} loads only the SDK, the domain vocabulary and the adapter`,
    );
    assert.deepEqual(
      packagesOf(urls).filter(
        (name) => FORBIDDEN_PACKAGES.test(name) || /^(ai|@ai-sdk\/.+)$/.test(name),
      ),
      [],
      `${entry} loads no driver or server package, and the AI SDK only as the agent imports it`,
    );
    assert.deepEqual(
      builtins.filter((name) => FORBIDDEN_BUILTINS.includes(name)),
      [],
    );
  }
});

test('keel/openai-agents loads the SDK, its adapter and @openai/agents, but no store, driver or engine (source and build)', {
  skip: SKIP_UNBUILT,
}, () => {
  for (const entry of [
    'src/adapters/openai-agents/index.ts',
    'dist/adapters/openai-agents/index.js',
  ]) {
    const { urls, builtins } = loadedBy(entry);
    const own = ownModules(urls);
    assert.ok(own.includes('adapters/openai-agents/model'), `${entry}: ${own.join(', ')}`);
    assert.deepEqual(
      own.filter((path) => !/^(sdk\/|domain\/|adapters\/openai-agents\/)/.test(path)),
      [],
      `${entry} loads only the SDK, the domain vocabulary and the adapter`,
    );
    assert.deepEqual(
      packagesOf(urls).filter((name) =>
        /^(pg|pg-.+|fastify|@fastify\/.+|pino|prom-client)$/.test(name),
      ),
      [],
      `${entry} loads no driver or server package`,
    );
    assert.ok(!builtins.includes('NativeModule sqlite'), `${entry} does not load node:sqlite`);
  }
});
