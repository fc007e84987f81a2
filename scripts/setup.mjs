// Brings a checkout up to date before `npm test` and `npm run dev` (their `pre` scripts): installs the locked
// dependencies when node_modules is missing or older than package-lock.json, and builds dist/ when it is missing or
// older than src/ or web/. Plain JavaScript on purpose: it runs before Node 24 is installed, on whatever `node` the
// system has, so it must use nothing newer than Node 18.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function mtime(path) {
  return existsSync(path) ? statSync(path).mtimeMs : 0;
}

/** Newest modification time of any file below `dir` (node_modules and dist excluded). */
function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

const installed = join(root, 'node_modules', '.package-lock.json');
if (mtime(installed) < mtime(join(root, 'package-lock.json'))) {
  process.stderr.write(
    'keel setup: installing the locked dependencies (npm ci; it also builds dist/)\n',
  );
  execFileSync(npm, ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
} else if (
  mtime(join(root, 'dist', 'index.js')) <
  Math.max(newest(join(root, 'src')), newest(join(root, 'web')))
) {
  process.stderr.write('keel setup: building dist/ (src/ or web/ changed since the last build)\n');
  execFileSync(npm, ['run', 'build'], { cwd: root, stdio: 'inherit' });
}
