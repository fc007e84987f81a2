// The `keel` command line: dispatches to subcommands. Errors with a Keel code print as one clear line.
import { isKeelError } from '../domain/keel-error.ts';
import { runRunsCommand } from './client/runs-command.ts';
import { runSchedulesCommand } from './client/schedules-command.ts';
import { runTenantsCommand } from './client/tenants-command.ts';
import { runDevCommand } from './dev-command.ts';
import { runDoctorCommand } from './doctor-command.ts';
import { runMigrateCommand } from './migrate-command.ts';
import { runPlanCommand } from './plan-command.ts';
import { runServerCommand } from './server-command.ts';

const USAGE = `usage: keel <command>

  dev --agents <file> [--port 7070] [--data ./.keel]   run everything in one process (SQLite, or Postgres if KEEL_DATABASE_URL)
  server --agents <file> [--port 7070]                   API + orchestrator on Postgres (KEEL_DATABASE_URL); run any number
  worker --agents <file>                                 orchestrator only, on Postgres; run any number
  migrate                                                apply Postgres migrations and exit
  plan <scenario.json> [--json] | plan --live <scenario.json> [--url u] [--window-seconds s]
                                                         capacity planner: what saturates first, and when
  runs submit|get|list|cancel|input|events|steps ...     talk to a running Keel (see: keel runs help)
  doctor [--json]                                        which sandbox tiers work on this host, and why not
  schedules create|list|get|update|delete|pause|resume|trigger|backfill|fires ...
                                                         recurring runs (see: keel schedules help)
  tenants create|update|list ...                         tenants, their weights and limits (admin key; see: keel tenants help)
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'dev': {
      const code = await runDevCommand(rest);
      process.exit(code); // after a graceful shutdown nothing is left to flush
    }
    case 'server':
    case 'worker': {
      const code = await runServerCommand(command, rest);
      process.exit(code);
    }
    case 'migrate':
      return runMigrateCommand();
    case 'plan':
      return runPlanCommand(rest, { stdout: process.stdout, stderr: process.stderr, env: process.env });
    case 'runs':
      return runRunsCommand(rest, { stdout: process.stdout, stderr: process.stderr, env: process.env });
    case 'doctor':
      return runDoctorCommand(rest, { stdout: process.stdout });
    case 'schedules':
      return runSchedulesCommand(rest, { stdout: process.stdout, stderr: process.stderr, env: process.env });
    case 'tenants':
      return runTenantsCommand(rest, { stdout: process.stdout, stderr: process.stderr, env: process.env });
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`unknown command ${JSON.stringify(command)}\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  // exitCode rather than exit(): piped output of `keel runs` must be written out in full first.
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(isKeelError(error) ? `keel: ${error.code}: ${error.message}\n` : `keel: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
