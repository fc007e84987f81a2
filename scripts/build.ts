// Build: compiles src/ to dist/ (JavaScript + .d.ts) and copies the SQL files the stores load at
// run time. Runs on `npm ci` through `prepare`, because Node strips no types under node_modules.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
rmSync(`${root}/dist`, { recursive: true, force: true });
execFileSync(
  process.execPath,
  [`${root}/node_modules/typescript/bin/tsc`, '-p', `${root}/tsconfig.build.json`],
  { stdio: 'inherit' },
);
cpSync(`${root}/src`, `${root}/dist`, {
  recursive: true,
  filter: (src) => !/\.(ts)$/.test(src) || false,
});
// Every entry package.json exports (`keel`, `keel/sandbox`, `keel/browser`, `keel/planner`, `keel/client`,
// `keel/embedded`, and the SDK adapters `keel/ai-sdk`, `keel/openai-agents`) must have been built,
// types included.
const exported = (
  JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as {
    exports: Record<string, string | Record<string, string>>;
  }
).exports;
for (const [subpath, target] of Object.entries(exported)) {
  for (const file of typeof target === 'string' ? [target] : Object.values(target)) {
    if (!existsSync(`${root}/${file}`))
      throw new Error(
        `package.json exports ${subpath} -> ${file}, which the build did not produce`,
      );
  }
}

// The dashboard: the web app (web/) built by Vite into dist/web, served by Keel at `/`.
execFileSync(
  process.execPath,
  [`${root}/node_modules/vite/bin/vite.js`, 'build', '--config', `${root}/web/vite.config.ts`],
  { stdio: 'inherit' },
);
// Brotli and gzip copies next to each asset: the server sends them as they are (@fastify/static
// preCompressed).
for (const name of readdirSync(`${root}/dist/web/assets`)) {
  const file = `${root}/dist/web/assets/${name}`;
  const body = readFileSync(file);
  writeFileSync(
    `${file}.br`,
    brotliCompressSync(body, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 11 } }),
  );
  writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
}
