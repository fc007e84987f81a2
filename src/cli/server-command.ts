// `keel server` (API + orchestrator + pools) and `keel worker` (orchestrator + pools): stateless
// processes against one Postgres (KEEL_DATABASE_URL); run any number of each. Agents are loaded
// with --agents in every role, and a worker claims only runs of the agent versions it loaded.
// --data names this process's local directory (sandbox workspaces); the runs themselves are in
// Postgres.
import { pino } from 'pino';
import { loadConfig } from '../config/config.ts';
import { ensureWritableDir } from './data-dir-lock.ts';
import { HELP_FLAG, parseFlags, portFlag } from './kit/args.ts';
import { EXIT_OK, UsageError, type CliIo } from './kit/output.ts';
import { startRuntime, stopSignals, type Role } from './runtime.ts';

type DistributedRole = Extract<Role, 'server' | 'worker'>;

const DATA_OPTION = `  --data <dir>      this process's local directory for sandbox workspaces (default: $KEEL_DATA_DIR, else ./.keel);
                    runs, journals and artifacts are in PostgreSQL`;
const STRICT_OPTION = `  --strict          refuse to start (exit 2) when a model's credentials cannot work (an unset key variable);
                    without it, each such model gets a warning at start`;

export const SERVER_USAGE = `usage: KEEL_DATABASE_URL=postgres://… keel server --agents <file> [--port 7070] [--host 127.0.0.1] [--data ./.keel]

  The API, an orchestrator and the effect pools, against PostgreSQL; run any number of them.

options:
  --agents <file>   the module that exports your agents (required)
  --port <n>        the API's port (default: $KEEL_PORT, else 7070; 0 picks a free one)
  --host <addr>     the address to listen on (default: $KEEL_HOST, else 127.0.0.1)
${DATA_OPTION}
${STRICT_OPTION}
  --help            show this text

exit codes: 0 after a graceful stop; 2 usage error, or a start refused (port in use, database unreachable,
agents file missing or broken, invalid configuration, with --strict a model key variable unset)`;

export const WORKER_USAGE = `usage: KEEL_DATABASE_URL=postgres://… keel worker --agents <file> [--data ./.keel]

  An orchestrator and the effect pools, without an API, against PostgreSQL; run any number of them. A worker
  claims only runs of the agent versions it loaded.

options:
  --agents <file>   the module that exports your agents (required)
${DATA_OPTION}
${STRICT_OPTION}
  --help            show this text

exit codes: 0 after a graceful stop; 2 usage error, or a start refused (database unreachable, agents file missing
or broken, invalid configuration, with --strict a model key variable unset)`;

const WORKER_FLAGS = {
  agents: { type: 'string' },
  data: { type: 'string' },
  strict: { type: 'boolean', default: false },
  ...HELP_FLAG,
} as const;
const SERVER_FLAGS = {
  ...WORKER_FLAGS,
  port: { type: 'string' },
  host: { type: 'string' },
} as const;

function parseRoleFlags(role: DistributedRole, argv: string[]) {
  if (role === 'server') return parseFlags(argv, SERVER_FLAGS, { positionals: false }).values;
  if (argv.some((arg) => /^--(port|host)(=|$)/.test(arg))) {
    throw new UsageError(
      'a worker serves no API, so it takes no --port or --host',
      "run keel server for the API (KEEL_METRICS_PORT serves a worker's metrics)",
    );
  }
  return parseFlags(argv, WORKER_FLAGS, { positionals: false }).values;
}

export async function runServerCommand(
  role: DistributedRole,
  argv: string[],
  io: CliIo,
): Promise<number> {
  const values: {
    agents?: string | undefined;
    data?: string | undefined;
    help: boolean;
    strict: boolean;
    port?: string | undefined;
    host?: string | undefined;
  } = parseRoleFlags(role, argv);
  if (values.help) {
    io.stdout.write(`${role === 'server' ? SERVER_USAGE : WORKER_USAGE}\n`);
    return EXIT_OK;
  }
  if (values.agents === undefined)
    throw new UsageError(
      '--agents <file> is required',
      `pass the module that exports your agents, e.g. keel ${role} --agents ./agents.js`,
    );
  const { config, unknownVariables } = loadConfig(io.env, {
    port: portFlag(values.port),
    host: values.host,
    dataDir: values.data,
  });
  if (config.databaseUrl === undefined) {
    throw new UsageError(
      'needs KEEL_DATABASE_URL (a PostgreSQL connection string)',
      'set KEEL_DATABASE_URL=postgres://user:password@host:port/database, or run keel dev for one process on SQLite',
    );
  }
  // Made now rather than at a sandbox's first use: an unwritable --data fails the start, not a run.
  if (values.data !== undefined) ensureWritableDir(config.dataDir);
  const log = pino({ level: config.logLevel, base: { role } });
  if (unknownVariables.length > 0)
    log.warn({ unknownVariables }, 'unknown KEEL_* environment variables (typos?)');
  const signals = stopSignals(log);
  const runtime = await startRuntime(role, values.agents, config, log, {
    strict: values.strict,
  }).catch((error: unknown) => {
    signals.dispose();
    throw error;
  });
  io.stdout.write(
    `keel ${role}: ${runtime.address ?? 'no API'}  (worker ${runtime.orchestrator.owner}, durability ${runtime.store.durability})\n`,
  );
  return signals.untilSignalled(runtime);
}
