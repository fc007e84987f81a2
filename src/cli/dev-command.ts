// `keel dev`: the embedded mode. One process runs the API, the orchestrator, the pools and the store (SQLite in the
// data directory, or Postgres when KEEL_DATABASE_URL is set), with a dev tenant whose key is printed at start.
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { loadConfig } from '../config/config.ts';
import { DEV_TENANT_NAME, startRuntime, untilSignalled } from './runtime.ts';

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
  const runtime = await startRuntime('dev', values.agents, config, log);
  const where = config.databaseUrl !== undefined ? 'Postgres' : `data ${config.dataDir}`;
  process.stdout.write(
    `keel dev: ${runtime.address}  (${where}, durability ${runtime.store.durability}${runtime.recovered > 0 ? `, recovered ${runtime.recovered} runs` : ''})\n` +
      `API key (tenant "${DEV_TENANT_NAME}"): ${config.apiKey === undefined ? runtime.devApiKey : '(from KEEL_API_KEY)'}\n` +
      `Dashboard: ${runtime.address}/  (sign in with the API key)\n`, // dashboard (issue 9)
  );
  return untilSignalled(runtime, log);
}
