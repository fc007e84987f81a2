// Where a simulation runs: an embedded Keel started here (SQLite in a temp dir by default, or
// Postgres) serving the scenario's agents over loopback HTTP, a `keel server` and N `keel worker`
// processes started here on Postgres (cluster.ts), or a running Keel at a URL. Either way the
// simulator then speaks only Keel's public HTTP API: one tenant per scenario tenant (created with
// the admin key, with its weight), one client per tenant; and names the /metrics of each Keel
// process it started, for the sampler.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createKeelClient, type KeelClient } from '../client/keel-client.ts';
import { KeelError } from '../domain/keel-error.ts';
import { startKeel } from '../embedded/index.ts';
import { type SimCluster, startSimCluster } from './cluster.ts';
import { BROWSER_POOL } from './fake-tools.ts';
import type { MetricsSource } from './sampler.ts';
import type { SimScenario } from './scenario.ts';
import { simDefinitions } from './sim-agents.ts';

export type SimStore = 'sqlite' | 'postgres';

export interface SimTargetOptions {
  store: SimStore;
  databaseUrl?: string | undefined;
  /** A running Keel instead of an embedded one. */
  url?: string | undefined;
  adminKey?: string | undefined;
  /** With `url` and no admin key: every scenario tenant submits as this one tenant. */
  apiKey?: string | undefined;
  /**
   * With `store: 'postgres'`: start `keel server` and this many `keel worker` processes instead of
   * an embedded Keel (0 or absent: embedded).
   */
  workers?: number | undefined;
  /** The scenario's file: the processes started for `workers` read it. */
  scenarioFile?: string | undefined;
}

export interface SimTarget {
  /** What ran the scenario, for the report (`embedded SQLite`, `http://…`). */
  label: string;
  clients: Map<string, KeelClient>;
  /** The /metrics of each Keel process started here (none for a running Keel reached by URL). */
  metrics: MetricsSource[];
  close(): Promise<void>;
}

/** Starts (or reaches) the Keel a scenario runs against; fault windows count from `startAtMs`. */
export async function openTarget(
  scenario: SimScenario,
  startAtMs: number,
  options: SimTargetOptions,
): Promise<SimTarget> {
  if (options.url !== undefined) return remoteTarget(scenario, options.url, options);
  const dir = mkdtempSync(join(tmpdir(), 'keel-sim-'));
  const adminKey = randomBytes(24).toString('hex');
  const poolsFile = join(dir, 'pools.json');
  const browserLimit = scenario.browser?.limit;
  writeFileSync(
    poolsFile,
    JSON.stringify({
      pools: browserLimit === undefined ? {} : { [BROWSER_POOL]: { limit: browserLimit } },
    }),
  );
  if (options.store === 'postgres' && options.databaseUrl === undefined)
    throw new KeelError('config_invalid', '--store postgres needs --database-url');
  if (options.store === 'postgres' && (options.workers ?? 0) > 0)
    return clusterTarget(scenario, startAtMs, options, { dir, adminKey, poolsFile });
  const definitions = simDefinitions(scenario, startAtMs);
  let keel: Awaited<ReturnType<typeof startKeel>>;
  try {
    keel = await startKeel({
      ...definitions,
      dataDir: join(dir, 'data'),
      ...(options.store === 'postgres' ? { databaseUrl: options.databaseUrl } : {}),
      http: { port: 0, host: '127.0.0.1' },
      config: { adminKey, poolsFile, logLevel: 'warn' },
    });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const url = keel.url!;
  try {
    const clients = await tenantClients(scenario, url, adminKey);
    return {
      label: `embedded Keel on ${options.store === 'postgres' ? 'PostgreSQL' : 'SQLite'}`,
      clients,
      // The simulator runs in the same process: its own memory and CPU are counted with Keel's.
      metrics: [
        {
          name: 'keel (embedded, with the simulator)',
          url: `${url}/metrics`,
          headers: { authorization: `Bearer ${adminKey}` },
        },
      ],
      close: async () => {
        await keel.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await keel.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

async function remoteTarget(
  scenario: SimScenario,
  url: string,
  options: SimTargetOptions,
): Promise<SimTarget> {
  let clients: Map<string, KeelClient>;
  if (options.adminKey !== undefined)
    clients = await tenantClients(scenario, url, options.adminKey);
  else if (options.apiKey !== undefined) {
    const one = createKeelClient({ baseUrl: url, apiKey: options.apiKey });
    clients = new Map(scenario.tenants.map((t) => [t.name, one]));
  } else
    throw new KeelError(
      'config_invalid',
      '--url needs --admin-key (one Keel tenant per scenario tenant) or --api-key (all as one tenant)',
    );
  // With the admin key its /metrics can be read (one process: the one at the URL).
  const metrics =
    options.adminKey === undefined
      ? []
      : [
          {
            name: `keel at ${url}`,
            url: new URL('/metrics', url).href,
            headers: { authorization: `Bearer ${options.adminKey}` },
          },
        ];
  return { label: `running Keel at ${url}`, clients, metrics, close: async () => {} };
}

async function clusterTarget(
  scenario: SimScenario,
  startAtMs: number,
  options: SimTargetOptions,
  setup: { dir: string; adminKey: string; poolsFile: string },
): Promise<SimTarget> {
  const removeDir = () => rmSync(setup.dir, { recursive: true, force: true });
  if (options.scenarioFile === undefined) {
    removeDir();
    throw new KeelError('config_invalid', '--workers needs the scenario as a file');
  }
  let cluster: SimCluster;
  try {
    cluster = await startSimCluster({
      databaseUrl: options.databaseUrl!,
      workers: options.workers!,
      scenarioFile: resolve(options.scenarioFile),
      startAtMs,
      adminKey: setup.adminKey,
      poolsFile: setup.poolsFile,
      dataDir: join(setup.dir, 'data'),
    });
  } catch (error) {
    removeDir();
    throw error;
  }
  const close = async () => {
    await cluster.stop();
    removeDir();
  };
  try {
    return {
      label: `keel server + ${options.workers} keel worker${options.workers === 1 ? '' : 's'} on PostgreSQL`,
      clients: await tenantClients(scenario, cluster.url, setup.adminKey),
      metrics: cluster.processes.map((p) => ({ name: p.name, url: p.metricsUrl })),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Creates one Keel tenant per scenario tenant, named uniquely so a shared database never collides. */
async function tenantClients(
  scenario: SimScenario,
  url: string,
  adminKey: string,
): Promise<Map<string, KeelClient>> {
  const suffix = randomBytes(3).toString('hex');
  const clients = new Map<string, KeelClient>();
  for (const tenant of scenario.tenants) {
    const response = await fetch(new URL('/v1/admin/tenants', url), {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `sim-${tenant.name}-${suffix}`, weight: tenant.weight }),
    });
    const body = (await response.json()) as { apiKey?: string; error?: { message: string } };
    if (!response.ok || body.apiKey === undefined)
      throw new KeelError(
        'config_invalid',
        `could not create tenant ${tenant.name} at ${url}: ${response.status} ${body.error?.message ?? ''}`,
      );
    clients.set(tenant.name, createKeelClient({ baseUrl: url, apiKey: body.apiKey }));
  }
  return clients;
}
