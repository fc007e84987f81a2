// `keel dev`: the embedded mode. One process runs the API, the orchestrator, the pools and the SQLite store,
// with a dev tenant whose key is printed at start. SIGINT/SIGTERM shut down gracefully: no acknowledged run is lost.
import { parseArgs } from 'node:util';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import { buildApi } from '../api/server.ts';
import { generateApiKey, hashApiKey } from '../api/auth.ts';
import { loadConfig } from '../config/config.ts';
import { Orchestrator } from '../engine/orchestrator.ts';
import { AgentRegistry } from '../engine/registry.ts';
import { KeelError } from '../errors/keel-error.ts';
import { ModelGateway } from '../models/gateway.ts';
import { SqliteStore } from '../store/sqlite/sqlite-store.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { loadAgentsModule } from './load-agents.ts';

export const DEV_TENANT_NAME = 'dev';

export async function runDevCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { agents: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, data: { type: 'string' }, help: { type: 'boolean' } },
    strict: true,
  });
  if (values.help === true || values.agents === undefined) {
    process.stderr.write('usage: keel dev --agents <file> [--port 7070] [--host 127.0.0.1] [--data ./.keel]\n');
    return values.help === true ? 0 : 2;
  }
  const { config, unknownVariables } = loadConfig(process.env, { port: values.port, host: values.host, dataDir: values.data });
  const log = pino({ level: config.logLevel, base: { role: 'dev' } });
  if (unknownVariables.length > 0) log.warn({ unknownVariables }, 'unknown KEEL_* environment variables (typos?)');
  if (config.databaseUrl !== undefined) {
    throw new KeelError('config_invalid', 'KEEL_DATABASE_URL is set, but the Postgres store is not available in this version; unset it to use the embedded store');
  }
  const { agents, models } = await loadAgentsModule(values.agents);
  const dataDir = resolve(config.dataDir);
  const unlock = lockDataDir(dataDir);
  const store = new SqliteStore({ path: join(dataDir, 'keel.db'), durability: config.durability });
  await store.migrate();
  const registry = new AgentRegistry();
  for (const agent of agents) registry.register(agent);
  const orchestrator = new Orchestrator({
    store, registry, gateway: new ModelGateway(models), leaseTtlMs: config.leaseTtlMs, maxActiveRuns: config.maxActiveRuns,
    log: (level, message, fields) => log[level](fields ?? {}, message),
  });
  // This process owns the data directory (lock above): leases of a previous, dead process can be taken back at once.
  const recovered = await store.expireForeignLeases(orchestrator.owner);
  const apiKey = config.apiKey ?? generateApiKey();
  await store.ensureTenant(DEV_TENANT_NAME, hashApiKey(apiKey));
  orchestrator.start();
  const app = await buildApi({ store, registry, adminKey: config.adminKey, payloadMaxBytes: config.payloadMaxBytes, ready: () => true, logger: log.child({ role: 'api' }) });
  const address = await app.listen({ port: config.port, host: config.host });
  process.stdout.write(
    `keel dev: ${address}  (data ${dataDir}, durability ${store.durability}${recovered > 0 ? `, recovered ${recovered} runs` : ''})\n` +
      `agents: ${registry.served().join(', ')}\n` +
      `API key (tenant "${DEV_TENANT_NAME}"): ${config.apiKey === undefined ? apiKey : '(from KEEL_API_KEY)'}\n`,
  );
  return new Promise<number>((resolveExit) => {
    let stopping = false;
    const shutdown = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'shutting down');
      await app.close();
      await orchestrator.stop();
      await store.close();
      unlock();
      resolveExit(0);
    };
    process.once('SIGINT', () => void shutdown('SIGINT'));
    process.once('SIGTERM', () => void shutdown('SIGTERM'));
  });
}
