// `keel migrate`: applies the store's pending migrations and exits (servers and workers also
// migrate at start).
import { pino } from 'pino';
import { loadConfig } from '../config/config.ts';
import { selectBackend } from '../store/open-store.ts';
import { expectPositionals, HELP_FLAG, parseFlags } from './kit/args.ts';
import { EXIT_OK, UsageError, type CliIo } from './kit/output.ts';
import { databaseStartupError } from './startup-checks.ts';

/** Migrations run on one connection. */
const MIGRATE_POOL_SIZE = 1;

export const MIGRATE_USAGE = `usage: KEEL_DATABASE_URL=postgres://… keel migrate

  Applies PostgreSQL migrations and exits (servers and workers also migrate at start; the SQLite store of
  keel dev migrates itself).

exit codes: 0 applied (or nothing to apply), 2 usage error, invalid configuration or database unreachable`;

export async function runMigrateCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseFlags(argv, HELP_FLAG);
  if (values.help) {
    io.stdout.write(`${MIGRATE_USAGE}\n`);
    return EXIT_OK;
  }
  expectPositionals(positionals, []);
  const { config } = loadConfig(io.env);
  if (config.databaseUrl === undefined)
    throw new UsageError(
      'needs KEEL_DATABASE_URL',
      'set KEEL_DATABASE_URL=postgres://…; the SQLite store of keel dev migrates itself at start',
    );
  const store = selectBackend({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: MIGRATE_POOL_SIZE,
  }).open().runs;
  try {
    await store.migrate();
  } catch (error) {
    throw databaseStartupError(error, config.databaseUrl) ?? error;
  } finally {
    await store.close();
  }
  pino({ level: config.logLevel }).info('migrations applied');
  return EXIT_OK;
}
