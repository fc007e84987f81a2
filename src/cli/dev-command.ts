// `keel dev`: the embedded mode. One process runs the API, the orchestrator, the pools and the
// store (SQLite in the data directory, or Postgres when KEEL_DATABASE_URL is set), with a dev
// tenant whose key is printed at start.
import { pino } from 'pino';
import { loadConfig } from '../config/config.ts';
import { HELP_FLAG, parseFlags, portFlag } from './kit/args.ts';
import { EXIT_OK, UsageError, type CliIo } from './kit/output.ts';
import { DEV_TENANT_NAME, startRuntime, stopSignals } from './runtime.ts';

export const DEV_USAGE = `usage: keel dev --agents <file> [--watch] [--port 7070] [--host 127.0.0.1] [--data ./.keel]

  Runs everything in one process: the API, the orchestrator and the store (SQLite in the data directory, or
  PostgreSQL when KEEL_DATABASE_URL is set). Prints the address and an API key; stops gracefully on SIGINT/SIGTERM.

options:
  --agents <file>   the module that exports your agents (required)
  --watch           reload the agents module when it or a file it imports (in its directory) changes:
                    new runs use the new code; runs in flight finish their turn on the code that started them
  --port <n>        the API's port (default: $KEEL_PORT, else 7070; 0 picks a free one)
  --host <addr>     the address to listen on (default: $KEEL_HOST, else 127.0.0.1)
  --data <dir>      the data directory: SQLite store, its lock, sandbox workspaces (default: $KEEL_DATA_DIR, else ./.keel)
  --strict          refuse to start (exit 2) when a model's credentials cannot work (an unset key variable);
                    without it, each such model gets a warning at start
  --help            show this text

exit codes: 0 after a graceful stop; 2 usage error, or a start refused (port in use, data directory not writable,
agents file missing or broken, invalid configuration, with --strict a model key variable unset)`;

const DEV_FLAGS = {
  agents: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  data: { type: 'string' },
  strict: { type: 'boolean', default: false },
  watch: { type: 'boolean', default: false },
  ...HELP_FLAG,
} as const;

export async function runDevCommand(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseFlags(argv, DEV_FLAGS, { positionals: false });
  if (values.help) {
    io.stdout.write(`${DEV_USAGE}\n`);
    return EXIT_OK;
  }
  if (values.agents === undefined)
    throw new UsageError(
      '--agents <file> is required',
      'pass the module that exports your agents, e.g. keel dev --agents ./agents.ts',
    );
  const { config, unknownVariables } = loadConfig(io.env, {
    port: portFlag(values.port),
    host: values.host,
    dataDir: values.data,
  });
  const log = pino({ level: config.logLevel, base: { role: 'dev' } });
  if (unknownVariables.length > 0)
    log.warn({ unknownVariables }, 'unknown KEEL_* environment variables (typos?)');
  const signals = stopSignals(log);
  const runtime = await startRuntime('dev', values.agents, config, log, {
    strict: values.strict,
    watch: values.watch,
    onReload: (line) => io.stdout.write(`${line}\n`),
  }).catch((error: unknown) => {
    signals.dispose();
    throw error;
  });
  const where = config.databaseUrl !== undefined ? 'Postgres' : `data ${config.dataDir}`;
  io.stdout.write(
    `keel dev: ${runtime.address}  (${where}, durability ${runtime.store.durability}${runtime.recovered > 0 ? `, recovered ${runtime.recovered} runs` : ''})\n` +
      `API key (tenant "${DEV_TENANT_NAME}"): ${config.apiKey === undefined ? runtime.devApiKey : '(from KEEL_API_KEY)'}\n` +
      `Dashboard: ${runtime.address}/  (sign in with the API key)\n` +
      (values.watch ? `Watching ${values.agents} and the files it imports: edits reload it\n` : ''),
  );
  return signals.untilSignalled(runtime);
}
