// The `keel` command line: dispatches to subcommands, each loaded only when it runs (`keel runs`
// loads no store or engine). Every command writes through a CliIo and returns its exit code; a
// failure it throws is reported by the CLI kit (a user's mistake as one line with a hint, exit 2).
// bin/keel.js checks the Node version before this loads.
import { reportError, type CliIo } from './kit/output.ts';

const USAGE = `usage: keel <command>

  dev --agents <file> [--watch] [--port 7070] [--data ./.keel]
                                                         run everything in one process (SQLite, or Postgres if KEEL_DATABASE_URL)
  server --agents <file> [--port 7070] [--data ./.keel]
                                                         API + orchestrator on Postgres (KEEL_DATABASE_URL); run any number
  worker --agents <file> [--data ./.keel]                orchestrator only, on Postgres; run any number
                                                         (--data of server and worker: local sandbox workspaces only)
  node --server <url> --token <t> [--port 0]            a sandbox host: registers, heartbeats, runs the sandboxed calls placed on it
  init [dir]                                             scaffold a project: package.json (ES module, Node 24), agents.ts, models.json
  migrate                                                apply Postgres migrations and exit
  plan <scenario.json> [--json] | plan --live <scenario.json> [--url u] [--window-seconds s]
                                                         capacity planner: what saturates first, and when
  sim <scenario.json> [--out dir] [--store sqlite|postgres] [--url u --admin-key k]
                                                         load simulator: fake model and browser, report with planner predictions
  runs submit|get|show|list|cancel|input|events|steps|rerun|reset|fork|resolve|migrate ...
                                                         talk to a running Keel (see: keel runs help)
  doctor [--json] [--models f] [--agents f] [--call-models]
                                                         which sandbox tiers work on this host, and why not;
                                                         each model's credentials (--call-models: one call each)
  schedules create|list|get|update|delete|pause|resume|trigger|backfill|fires ...
                                                         recurring runs (see: keel schedules help)
  tenants create|update|list ...                         tenants, their weights and limits (admin key; see: keel tenants help)
  keys create|list|revoke ...                            API keys: scopes, expiry, rotation (see: keel keys help)
  admins create|list|revoke ...                          named platform admins, each with its own key (see: keel admins help)
  secrets create|rotate|list|delete ...                  the tenant's secrets, encrypted, used as secret:NAME (see: keel secrets help)
  policy get|set ...                                     the tenant's tool policy (see: keel policy help)
  approvals list|approve|deny ...                        tool calls waiting for a human (see: keel approvals help)
  agents list [--json]                                   agents, their versions and schemas, the processes serving each
  images build|list|rm [--agents f] ...                  environment images: build ahead, list, remove (see: keel images help)

  keel <command> --help shows a command's options. Exit codes: 0 success, 1 a request failed or a run did not
  succeed, 2 usage error or a start refused (one line on stderr says what and how to fix it).
`;

type Command = (argv: string[], io: CliIo) => Promise<number>;

/** The commands that serve until a signal stops them: the process exits when they return. */
const SERVING = new Set(['dev', 'server', 'worker', 'node']);

const COMMANDS: Record<string, Command> = {
  dev: async (argv, io) => (await import('./dev-command.ts')).runDevCommand(argv, io),
  server: async (argv, io) =>
    (await import('./server-command.ts')).runServerCommand('server', argv, io),
  worker: async (argv, io) =>
    (await import('./server-command.ts')).runServerCommand('worker', argv, io),
  node: async (argv, io) => (await import('./node-command.ts')).runNodeCommand(argv, io),
  migrate: async (argv, io) => (await import('./migrate-command.ts')).runMigrateCommand(argv, io),
  init: async (argv, io) => (await import('./init-command.ts')).runInitCommand(argv, io),
  plan: async (argv, io) => (await import('./plan-command.ts')).runPlanCommand(argv, io),
  sim: async (argv, io) => (await import('./sim-command.ts')).runSimCommand(argv, io),
  runs: async (argv, io) => (await import('./client/runs-command.ts')).runRunsCommand(argv, io),
  doctor: async (argv, io) => (await import('./doctor-command.ts')).runDoctorCommand(argv, io),
  schedules: async (argv, io) =>
    (await import('./client/schedules-command.ts')).runSchedulesCommand(argv, io),
  tenants: async (argv, io) =>
    (await import('./client/tenants-command.ts')).runTenantsCommand(argv, io),
  agents: async (argv, io) =>
    (await import('./client/agents-command.ts')).runAgentsCommand(argv, io),
  images: async (argv, io) => (await import('./images-command.ts')).runImagesCommand(argv, io),
  keys: async (argv, io) => (await import('./client/keys-command.ts')).runKeysCommand(argv, io),
  admins: async (argv, io) =>
    (await import('./client/admins-command.ts')).runAdminsCommand(argv, io),
  secrets: async (argv, io) =>
    (await import('./client/secrets-command.ts')).runSecretsCommand(argv, io),
  policy: async (argv, io) =>
    (await import('./client/policy-command.ts')).runPolicyCommand(argv, io),
  approvals: async (argv, io) =>
    (await import('./client/approvals-command.ts')).runApprovalsCommand(argv, io),
};

async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    io.stdout.write(USAGE);
    return name === undefined ? 2 : 0;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (command === undefined) {
    io.stderr.write(`keel: unknown command ${JSON.stringify(name)}\n${USAGE}`);
    return 2;
  }
  let code: number;
  try {
    code = await command(rest, io);
  } catch (error) {
    code = reportError(name, error, io);
  }
  // A serving command has stopped gracefully (or failed to start): nothing is left to flush, and a
  // half-started runtime must not keep the process alive.
  if (SERVING.has(name)) process.exit(code);
  return code;
}

main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
}).then(
  // exitCode rather than exit(): piped output of `keel runs` must be written out in full first.
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `keel: unexpected failure (a bug in keel): ${error instanceof Error ? error.stack : String(error)}\n`,
    );
    process.exit(1);
  },
);
