// Build: compiles src/ to dist/ (JavaScript + .d.ts) and copies the SQL files the stores load at run time.
// Runs on `npm ci` through `prepare`, because Node strips no types under node_modules.
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
rmSync(`${root}/dist`, { recursive: true, force: true });
execFileSync(process.execPath, [`${root}/node_modules/typescript/bin/tsc`, '-p', `${root}/tsconfig.build.json`], { stdio: 'inherit' });
cpSync(`${root}/src`, `${root}/dist`, { recursive: true, filter: (src) => !/\.(ts)$/.test(src) || false });

// --- dashboard (issue 9): the web app (web/) built by Vite into dist/web, served by Keel at `/` ---
execFileSync(process.execPath, [`${root}/node_modules/vite/bin/vite.js`, 'build', '--config', `${root}/web/vite.config.ts`], { stdio: 'inherit' });
// --- end dashboard ---
