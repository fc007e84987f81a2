// Test harness for schedules: a real Keel (SQLite file or a fresh Postgres database, orchestrator,
// Fastify on an ephemeral port) with the schedules plane on a ManualClock. The scheduler's loop is
// not started: tests move the clock and call tick(), so no test sleeps for scheduled time. Talks
// HTTP like test/support/keel-server.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/api/server.ts';
import { generateApiKey, hashApiKey } from '../../src/api/auth.ts';
import { Orchestrator } from '../../src/engine/orchestrator.ts';
import { AgentRegistry } from '../../src/engine/registry.ts';
import { ModelGateway } from '../../src/models/gateway.ts';
import { createSchedulesPlane, type SchedulesPlane } from '../../src/schedules/schedules-plane.ts';
import type { AgentDefinition } from '../../src/sdk/types.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { ManualClock } from '../../src/domain/clock.ts';
import { createFreshDatabase } from './fresh-database.ts';
import { DelegatedTokens, delegationKey } from '../../src/secrets/delegated-tokens.ts';
import {
  DELEGATION_AUDIENCE_DEFAULT,
  DELEGATION_TTL_MS_DEFAULT,
} from '../../src/config/defaults.ts';

export const ADMIN_KEY = 'admin-key-for-tests-0123456789';

export interface SchedulesKeel {
  url: string;
  apiKey: string;
  clock: ManualClock;
  store: Store;
  plane: SchedulesPlane;
  app: FastifyInstance;
  /** What the API checks delegated tokens with: mint one for a run with `delegated.mint(...)`. */
  delegated: DelegatedTokens;
  request(
    method: string,
    path: string,
    body?: unknown,
    key?: string | null,
  ): Promise<{ status: number; body: any }>;
  /** Moves the fake clock to `to` (ISO or ms) and runs one scheduler tick. */
  tickAt(to: string | number): Promise<void>;
  waitForRun(id: string, predicate: (run: any) => boolean, timeoutMs?: number): Promise<any>;
  /** The schedule's fires, oldest first. */
  fires(scheduleId: string): Promise<any[]>;
  close(): Promise<void>;
}

export interface SchedulesKeelOptions {
  agents: AgentDefinition[];
  start: string;
  /** A Postgres connection string; SQLite in a temp dir when absent. */
  databaseUrl?: string;
  /** Reuse another harness's store (a second scheduler and API on the same database). */
  shareStoreOf?: SchedulesKeel;
  apiKey?: string;
  clock?: ManualClock;
}

export async function startSchedulesKeel(options: SchedulesKeelOptions): Promise<SchedulesKeel> {
  const dir =
    options.databaseUrl === undefined && options.shareStoreOf === undefined
      ? mkdtempSync(join(tmpdir(), 'keel-sched-'))
      : undefined;
  const store: Store =
    options.shareStoreOf?.store ??
    (options.databaseUrl !== undefined
      ? new PostgresStore({ connectionString: options.databaseUrl })
      : new SqliteStore({ path: join(dir!, 'keel.db') }));
  if (options.shareStoreOf === undefined) await store.migrate();
  const registry = new AgentRegistry();
  for (const agent of options.agents) registry.register(agent);
  const orchestrator = new Orchestrator({
    store,
    registry,
    gateway: new ModelGateway([]),
    pollIntervalMs: 50,
  });
  const apiKey = options.apiKey ?? generateApiKey();
  await store.ensureTenant('test', hashApiKey(apiKey));
  orchestrator.start();
  const clock = options.clock ?? new ManualClock(options.start);
  const plane = createSchedulesPlane(store, registry, { clock });
  // Per-run delegated tokens, signed with the store's deployment key (as a runtime without
  // KEEL_DELEGATION_KEY): tests mint tokens with `delegated`.
  const delegated = new DelegatedTokens({
    key: await delegationKey(store, undefined),
    audience: DELEGATION_AUDIENCE_DEFAULT,
    ttlMs: DELEGATION_TTL_MS_DEFAULT,
  });
  const app = await buildApi({
    store,
    registry,
    adminKey: ADMIN_KEY,
    schedules: plane.service,
    delegation: delegated,
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const keel: SchedulesKeel = {
    url,
    apiKey,
    clock,
    store,
    plane,
    app,
    delegated,
    async request(method, path, body, key) {
      const headers: Record<string, string> = {};
      const k = key === undefined ? apiKey : key;
      if (k !== null) headers.authorization = `Bearer ${k}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(url + path, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      return { status: res.status, body: text === '' ? null : JSON.parse(text) };
    },
    async tickAt(to) {
      clock.set(to);
      await plane.scheduler.tick();
    },
    async waitForRun(id, predicate, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      let last: any;
      while (Date.now() < deadline) {
        last = (await keel.request('GET', `/v1/runs/${id}`)).body;
        if (predicate(last)) return last;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(
        `run ${id} did not reach the expected state in ${timeoutMs} ms; last: ${JSON.stringify(last)}`,
      );
    },
    async fires(scheduleId) {
      const res = await keel.request('GET', `/v1/schedules/${scheduleId}/fires?limit=1000`);
      if (res.status !== 200) throw new Error(`fires: ${res.status} ${JSON.stringify(res.body)}`);
      return (res.body.fires as any[]).reverse();
    },
    async close() {
      await app.close();
      await plane.scheduler.stop();
      await orchestrator.stop();
      if (options.shareStoreOf === undefined) await store.close();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
  return keel;
}

/**
 * A harness on the given backend for one test: SQLite in a temp dir, or a fresh Postgres database
 * dropped after the test; closed after the test either way.
 */
export async function startKeelOn(
  t: { after(fn: () => unknown): void },
  backend: 'sqlite' | 'postgres',
  agents: AgentDefinition[],
): Promise<SchedulesKeel> {
  let databaseUrl: string | undefined;
  if (backend === 'postgres') {
    const db = await createFreshDatabase();
    t.after(() => db.drop());
    databaseUrl = db.url;
  }
  const keel = await startSchedulesKeel({
    agents,
    start: new Date().toISOString(),
    ...(databaseUrl === undefined ? {} : { databaseUrl }),
  });
  t.after(() => keel.close());
  return keel;
}
