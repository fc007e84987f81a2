// Reloads the pools file without a restart: on SIGHUP and when the file changes (fs.watch on its
// directory, so an editor's write-and-rename is seen too). A file that does not parse or validate
// is rejected with a logged error and the previous configuration stays in force. It never applies a
// half-read file and never exits the process.
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { loadPoolsFile, type PoolsConfig } from './pool-config.ts';

/** Changes to the file within this window are read once (editors write in several steps). */
export const POOLS_RELOAD_DEBOUNCE_MS = 100;

export interface PoolsFileWatch {
  /** Reads the file now (what SIGHUP does); true when it was applied. */
  reload(): boolean;
  close(): void;
}

type Log = (level: 'info' | 'error', message: string, fields?: Record<string, unknown>) => void;

/**
 * Applies the file at `path` whenever it changes or the process gets SIGHUP.
 * @example
 * const watcher = watchPoolsFile('/etc/keel/pools.json', (config) => pools.configure(config), log);
 */
export function watchPoolsFile(
  path: string,
  apply: (config: PoolsConfig) => void,
  log: Log,
): PoolsFileWatch {
  let timer: NodeJS.Timeout | undefined;
  const reload = (): boolean => {
    try {
      const config = loadPoolsFile(path);
      apply(config);
      log('info', 'pools file applied', { path, pools: Object.keys(config.pools) });
      return true;
    } catch (error) {
      log('error', 'pools file rejected; the previous pool configuration stays in force', {
        path,
        error: (error as Error).message,
      });
      return false;
    }
  };
  const onSighup = (): void => void reload();
  process.on('SIGHUP', onSighup);
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dirname(path), { persistent: false }, (_event, filename) => {
      if (filename !== null && filename !== basename(path)) return;
      clearTimeout(timer);
      timer = setTimeout(reload, POOLS_RELOAD_DEBOUNCE_MS);
      timer.unref();
    });
    watcher.on('error', (error) =>
      log('error', 'cannot watch the pools file; reload it with SIGHUP', {
        path,
        error: error.message,
      }),
    );
  } catch (error) {
    log('error', 'cannot watch the pools file; reload it with SIGHUP', {
      path,
      error: (error as Error).message,
    });
  }
  return {
    reload,
    close() {
      clearTimeout(timer);
      watcher?.close();
      process.off('SIGHUP', onSighup);
    },
  };
}
