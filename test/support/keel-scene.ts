// A real Keel process as the crash and integration tests drive it — `keel dev` on a private data
// directory, or `keel server` on a fresh Postgres database — start it (again, after a kill -9),
// call its API with the scene's key, and wait for a run to reach a state. The directory is removed after the test, once the killed Keel's leftover
// sandboxes (their cgroups and mounted workspaces, as a crash leaves them) have been swept the way
// the next start would.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { sweepStaleSandboxes } from '../../src/sandbox/stale-sweep.ts';
import { createFreshDatabase, type FreshDatabase } from './fresh-database.ts';
import { startKeelProcess, startKeelRole, type KeelProcess } from './keel-process.ts';

export interface KeelSceneOptions {
  /** The agents module `keel dev` loads. */
  agents: string;
  apiKey: string;
  /** Prefix of the temporary directory's name. */
  prefix: string;
  /** Variables for every start (the scene's directory is known by then). */
  env?: (dir: string) => Record<string, string>;
  /** How long `until` waits for a run (default 30 s). */
  untilMs?: number;
  startupTimeoutMs?: number;
  /** `postgres`: `keel server` on a fresh database of the scene's own, dropped after the test. */
  store?: 'sqlite' | 'postgres';
}

export interface ApiAnswer {
  status: number;
  body: any;
}

export interface KeelScene {
  /** The scene's directory (0711: sandbox uids traverse it to their workspaces); data in `data/`. */
  dir: string;
  dataDir: string;
  /** The scene's Postgres database (store `postgres` only). */
  db: FreshDatabase | undefined;
  /** The process started last (undefined before the first start). */
  keel: KeelProcess | undefined;
  /** Starts Keel with the scene's variables and `env`. */
  start(env?: Record<string, string>): Promise<KeelProcess>;
  /** kill -9, then start again on the same data. */
  restart(env?: Record<string, string>): Promise<KeelProcess>;
  /** A request to the running Keel with the scene's key (or `key`); the body parsed when JSON. */
  api(method: string, path: string, body?: unknown, key?: string): Promise<ApiAnswer>;
  /** Polls the run until `predicate` holds; fails with the run and Keel's output on timeout. */
  until(id: string, predicate: (run: any) => boolean): Promise<any>;
}

export async function keelScene(t: TestContext, options: KeelSceneOptions): Promise<KeelScene> {
  const dir = mkdtempSync(join(tmpdir(), options.prefix));
  chmodSync(dir, 0o711);
  const dataDir = join(dir, 'data');
  const db = options.store === 'postgres' ? await createFreshDatabase() : undefined;
  const s: KeelScene = {
    dir,
    dataDir,
    db,
    keel: undefined,
    async start(env = {}) {
      const merged = { ...options.env?.(dir), ...env };
      s.keel =
        db === undefined
          ? await startKeelProcess({
              agents: options.agents,
              dataDir,
              apiKey: options.apiKey,
              ...(options.startupTimeoutMs === undefined
                ? {}
                : { startupTimeoutMs: options.startupTimeoutMs }),
              env: merged,
            })
          : await startKeelRole({
              role: 'server',
              name: options.prefix.replace(/-$/, ''),
              agents: options.agents,
              databaseUrl: db.url,
              apiKey: options.apiKey,
              ...(options.startupTimeoutMs === undefined
                ? {}
                : { startupTimeoutMs: options.startupTimeoutMs }),
              env: merged,
            });
      return s.keel;
    },
    async restart(env) {
      await s.keel?.kill('SIGKILL');
      return s.start(env);
    },
    async api(method, path, body, key = options.apiKey) {
      const res = await fetch(s.keel!.url + path, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text === '' ? null : JSON.parse(text);
      } catch {
        // not JSON: the text as it came
      }
      return { status: res.status, body: parsed };
    },
    async until(id, predicate) {
      const deadline = Date.now() + (options.untilMs ?? 30_000);
      for (;;) {
        const run = (await s.api('GET', `/v1/runs/${id}`)).body;
        if (predicate(run)) return run;
        if (Date.now() > deadline)
          throw new Error(`run ${id} stuck: ${JSON.stringify(run)}\n${s.keel?.output() ?? ''}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
  };
  t.after(async () => {
    await s.keel?.kill('SIGKILL');
    await db?.drop();
    await sweepStaleSandboxes(join(dataDir, 'sandboxes'));
    rmSync(dir, { recursive: true, force: true });
  });
  return s;
}
