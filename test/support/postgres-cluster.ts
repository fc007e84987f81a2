// Stops and starts this machine's PostgreSQL cluster (Debian's pg_ctlcluster) for the restart test.
// Whatever happens to the test, the cluster is started again: restore() is idempotent, and once
// stop() was called a last synchronous attempt runs when the test process exits, since everything
// else on the machine shares this server.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CONFIG_DIR = '/etc/postgresql';

export interface PostgresCluster {
  version: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Starts the cluster if it is not running; safe to call at any time. */
  restore(): Promise<void>;
}

/**
 * The local cluster `main` of the only (or first) installed version, or undefined when there is
 * none here.
 */
export function localCluster(): PostgresCluster | undefined {
  if (!existsSync(CONFIG_DIR)) return undefined;
  const version = readdirSync(CONFIG_DIR).sort()[0];
  if (version === undefined) return undefined;
  const ctl = (...args: string[]) => ['--skip-systemctl-redirect', version, 'main', ...args];
  // `pg_ctlcluster status` exits 0 when the cluster runs, non-zero otherwise.
  const isRunning = () => {
    try {
      execFileSync('pg_ctlcluster', ctl('status'), { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  const startOnExit = () => {
    try {
      if (!isRunning()) execFileSync('pg_ctlcluster', ctl('start'), { stdio: 'ignore' });
    } catch {
      process.stderr.write(
        `could not start PostgreSQL ${version} again: run pg_ctlcluster ${version} main start\n`,
      );
    }
  };
  return {
    version,
    stop: async () => {
      process.once('exit', startOnExit);
      await run('pg_ctlcluster', ctl('stop', '-m', 'fast'));
    },
    start: async () => void (await run('pg_ctlcluster', ctl('start'))),
    restore: async () => {
      if (!isRunning()) await run('pg_ctlcluster', ctl('start'));
    },
  };
}
