// `keel node --server <url> --token <node token>`: one sandbox host of the cluster (src/nodes).
// Registers with the server, heartbeats its load and runs the sandboxed calls placers send it,
// until SIGINT/SIGTERM (running calls finish first).
import { pino } from 'pino';
import { loadConfig } from '../config/config.ts';
import { startSandboxNode } from '../nodes/sandbox-node.ts';
import { ensureWritableDir } from './data-dir-lock.ts';
import { HELP_FLAG, parseFlags, portFlag } from './kit/args.ts';
import { EXIT_OK, UsageError, type CliIo } from './kit/output.ts';

export const NODE_USAGE = `usage: KEEL_DATABASE_URL=postgres://… keel node --server <url> --token <node token> [--port 0] [--host 127.0.0.1]
                 [--advertise <url>] [--data ./.keel]

  A sandbox host: registers with a Keel server, heartbeats its load and runs the sandboxed tool calls
  placed on it (processes with KEEL_SANDBOX_PLACEMENT=nodes place them). One per host.

options:
  --server <url>      a Keel server's API (e.g. http://10.0.0.2:7070)
  --token <token>     the node's token (POST /v1/admin/nodes); or $KEEL_NODE_TOKEN, which the process list does not show
  --port <n>          where the node takes calls (default 0: a free port, announced at registration)
  --host <addr>       the address to listen on (default: 127.0.0.1)
  --advertise <url>   the url placers reach the node at (default http://<host>:<port>)
  --data <dir>        the node's local directory for sandbox workspaces (default: $KEEL_DATA_DIR, else ./.keel)
  --help              show this text

  Calls at once: $KEEL_NODE_SLOTS (default: the host's cores); more are refused (node_refused) and placed elsewhere.

exit codes: 0 after a graceful stop; 2 usage error, or a start refused (bad token, database unreachable)`;

const NODE_FLAGS = {
  server: { type: 'string' },
  token: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  advertise: { type: 'string' },
  data: { type: 'string' },
  ...HELP_FLAG,
} as const;

export async function runNodeCommand(argv: string[], io: CliIo): Promise<number> {
  const values = parseFlags(argv, NODE_FLAGS, { positionals: false }).values;
  if (values.help) {
    io.stdout.write(`${NODE_USAGE}\n`);
    return EXIT_OK;
  }
  const { config, unknownVariables } = loadConfig(io.env, { dataDir: values.data });
  const token = values.token ?? config.nodeToken;
  if (values.server === undefined || token === undefined)
    throw new UsageError(
      'needs --server <url> and --token <node token> (or KEEL_NODE_TOKEN)',
      'create the node with POST /v1/admin/nodes (admin key): it answers the token once',
    );
  if (config.databaseUrl === undefined)
    throw new UsageError(
      'needs KEEL_DATABASE_URL (a PostgreSQL connection string)',
      'workspaces and their artifacts are in the cluster’s database: set KEEL_DATABASE_URL as for keel server',
    );
  if (values.data !== undefined) ensureWritableDir(config.dataDir);
  const log = pino({ level: config.logLevel, base: { role: 'node' } });
  if (unknownVariables.length > 0)
    log.warn({ unknownVariables }, 'unknown KEEL_* environment variables (typos?)');
  const node = await startSandboxNode({
    serverUrl: values.server,
    token,
    host: values.host ?? '127.0.0.1',
    port: portFlag(values.port) ?? 0,
    advertiseUrl: values.advertise,
    config,
    log,
  });
  io.stdout.write(`keel node: ${node.url}  (node ${node.id})\n`);
  const signal = await new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  log.info({ signal }, 'stopping: running calls finish first');
  await node.stop();
  return EXIT_OK;
}
