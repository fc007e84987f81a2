// Single ownership of an embedded data directory: a lock file with the owner's pid. The embedded store expires
// every other lease at start, which is only safe when no other live process uses the same file.
import { readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { KeelError } from '../errors/keel-error.ts';

export function lockDataDir(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'keel.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, String(process.pid), { flag: 'wx' });
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new KeelError('already_running', `another Keel process (pid ${pid}) uses ${dir}; stop it or pass a different --data`);
      }
      rmSync(path, { force: true }); // left by a process that died: take it over
    }
  }
  throw new KeelError('already_running', `could not lock ${dir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
