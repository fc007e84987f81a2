// Test harness: a real Keel (SQLite file in a fresh temp dir, orchestrator, Fastify on an ephemeral
// port) in this process, plus a small HTTP client. Tests talk to it over real HTTP; close() fails
// loudly if something is left open.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApi } from '../../src/api/server.ts';
import { EnvKeyProvider } from '../../src/secrets/key-provider.ts';
import { SecretVault } from '../../src/secrets/secret-vault.ts';
import { generateApiKey, hashApiKey } from '../../src/api/auth.ts';
import { Orchestrator, type OrchestratorOptions } from '../../src/engine/orchestrator.ts';
import { AgentRegistry } from '../../src/engine/registry.ts';
import { ModelGateway } from '../../src/models/gateway.ts';
import { TenantPolicy } from '../../src/models/tenant-policy.ts';
import type { AgentDefinition, ModelDefinition } from '../../src/sdk/types.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import {
  DelegatedTokens,
  delegationIssuer,
  delegationKey,
} from '../../src/secrets/delegated-tokens.ts';
import {
  DELEGATION_AUDIENCE_DEFAULT,
  DELEGATION_TTL_MS_DEFAULT,
} from '../../src/config/defaults.ts';

export interface TestKeel {
  url: string;
  apiKey: string;
  adminKey: string;
  dir: string;
  store: SqliteStore;
  orchestrator: Orchestrator;
  app: FastifyInstance;
  /** What the API checks delegated tokens with (and the engine mints them with). */
  delegated: DelegatedTokens;
  /** JSON request with the tenant key (or `key`); returns status and parsed body. */
  request(
    method: string,
    path: string,
    body?: unknown,
    key?: string | null,
  ): Promise<{ status: number; body: any; headers: Headers }>;
  /**
   * Polls GET /v1/runs/:id until `predicate` holds or the deadline passes (then throws with the
   * last state).
   */
  waitForRun(id: string, predicate: (run: any) => boolean, timeoutMs?: number): Promise<any>;
  /** Stops the orchestrator and the API but keeps the data directory (to start again on it). */
  stop(): Promise<void>;
  close(): Promise<void>;
}

export interface StartOptions {
  agents: AgentDefinition[];
  models?: ModelDefinition[];
  dir?: string;
  payloadMaxBytes?: number;
  orchestrator?: Partial<OrchestratorOptions>;
  /** A gateway built by the test (models against fake providers); else one over `models`. */
  gateway?: ModelGateway;
  /** Key-encryption key of the tenants' secrets (base64 of 32 bytes); none: secrets unconfigured. */
  secretsKey?: string;
  /** Lifetime of tools' delegated tokens (default: the configuration's default). */
  delegationTtlMs?: number;
}

export const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

export async function startKeel(options: StartOptions): Promise<TestKeel> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'keel-test-'));
  const store = new SqliteStore({ path: join(dir, 'keel.db') });
  await store.migrate();
  const registry = new AgentRegistry();
  for (const agent of options.agents) registry.register(agent);
  const gateway = options.gateway ?? new ModelGateway(options.models ?? []);
  if (gateway.tenantPolicy === undefined) gateway.useTenantPolicy(new TenantPolicy(store));
  // Per-run delegated tokens, signed with the store's deployment key (as a runtime without
  // KEEL_DELEGATION_KEY); tools call back to this harness's own address.
  const delegated = new DelegatedTokens({
    key: await delegationKey(store, undefined),
    audience: DELEGATION_AUDIENCE_DEFAULT,
    ttlMs: options.delegationTtlMs ?? DELEGATION_TTL_MS_DEFAULT,
  });
  let address: string | undefined;
  const orchestrator = new Orchestrator({
    store,
    registry,
    gateway,
    pollIntervalMs: 50,
    delegation: delegationIssuer(delegated, () => address),
    ...options.orchestrator,
  });
  await store.expireForeignLeases(orchestrator.owner);
  const apiKey = generateApiKey();
  await store.ensureTenant('test', hashApiKey(apiKey));
  const adminKey = 'admin-key-for-tests-0123456789';
  orchestrator.start();
  const app = await buildApi({
    store,
    registry,
    adminKey,
    delegation: delegated,
    live: gateway.live,
    tenantPolicy: gateway.tenantPolicy,
    spend: gateway,
    ...(options.payloadMaxBytes ? { payloadMaxBytes: options.payloadMaxBytes } : {}),
    ...(options.secretsKey === undefined
      ? {}
      : { secrets: new SecretVault(store, new EnvKeyProvider(options.secretsKey)) }),
  });
  address = await app.listen({ port: 0, host: '127.0.0.1' });
  const url = address;
  let stopped = false;
  const keel: TestKeel = {
    url,
    delegated,
    apiKey,
    adminKey,
    dir,
    store,
    orchestrator,
    app,
    async request(method, path, body, key) {
      const headers: Record<string, string> = {};
      const k = key === undefined ? apiKey : key;
      if (k !== null) headers.authorization = `Bearer ${k}`;
      let payload: string | undefined;
      if (body !== undefined) {
        headers['content-type'] = 'application/json';
        payload = typeof body === 'string' ? body : JSON.stringify(body);
      }
      const res = await fetch(url + path, {
        method,
        headers,
        ...(payload !== undefined ? { body: payload } : {}),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      return { status: res.status, body: parsed, headers: res.headers };
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
    async stop() {
      if (stopped) return;
      stopped = true;
      await app.close();
      await orchestrator.stop();
      await store.close();
    },
    async close() {
      await keel.stop();
      if (options.dir === undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
  return keel;
}
