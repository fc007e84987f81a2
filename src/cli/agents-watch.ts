// `keel dev --watch`: finds the files of the agents module's graph inside its project and reloads
// the module when one of them changes. On this thread a resolve hook gives each project file of a
// new generation its own URL (`?keel-gen=N`), so a re-import evaluates the changed code while
// packages under node_modules stay loaded once; isolates load the module afresh anyway (a new
// worker has a new module cache). It never touches files, only reads and watches them.
import { type FSWatcher, watch } from 'node:fs';
import { registerHooks } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Changes closer together than this reload once (an editor saving writes several times). */
export const WATCH_DEBOUNCE_MS = 200;
const GENERATION_PARAM = 'keel-gen';

/** The module graph's project files, and the generation the next import evaluates. */
export class AgentsModuleGenerations {
  /** Absolute paths of the project files the agents module imported (itself included). */
  readonly files = new Set<string>();
  #generation = 0;

  /**
   * Installs the resolve hook for files under the agents module's directory (not under
   * node_modules). Call before the module's first import so its files are known.
   */
  constructor(agentsFile: string) {
    const root = pathToFileURL(`${dirname(resolve(agentsFile))}/`).href;
    registerHooks({
      resolve: (specifier, context, next) => {
        const resolved = next(specifier, context);
        if (!resolved.url.startsWith(root) || resolved.url.includes('/node_modules/'))
          return resolved;
        const url = new URL(resolved.url);
        url.searchParams.delete(GENERATION_PARAM);
        this.files.add(fileURLToPath(url));
        url.searchParams.set(GENERATION_PARAM, String(this.#generation));
        return { ...resolved, url: url.href };
      },
    });
  }

  /** The next import of the agents module evaluates its project files again. */
  advance(): number {
    return ++this.#generation;
  }
}

/**
 * Watches the directories of the generation's files and calls `onChange` once per burst of
 * changes to any of them. `refresh()` after a reload watches files the new code imports.
 */
export function watchAgentsModule(
  generations: AgentsModuleGenerations,
  onChange: (files: string[]) => void,
): { refresh(): void; close(): void } {
  const watchers = new Map<string, FSWatcher>();
  const changed = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const fire = () => {
    timer = undefined;
    const files = [...changed];
    changed.clear();
    onChange(files);
  };
  const refresh = () => {
    // Directories, not files: an editor that saves by renaming a new file over the old one would
    // leave a watch on the file's old inode silent.
    for (const file of generations.files) {
      const dir = dirname(file);
      if (watchers.has(dir)) continue;
      const watcher = watch(dir, { persistent: false }, (_event, name) => {
        const path = name === null ? undefined : join(dir, name.toString());
        if (path === undefined || !generations.files.has(path)) return;
        changed.add(path);
        clearTimeout(timer);
        timer = setTimeout(fire, WATCH_DEBOUNCE_MS);
      });
      watcher.on('error', () => watchers.delete(dir));
      watchers.set(dir, watcher);
    }
  };
  refresh();
  return {
    refresh,
    close() {
      clearTimeout(timer);
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}
