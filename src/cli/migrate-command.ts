// `keel migrate`: applies the store's pending migrations and exits (servers and workers also migrate at start).
import { pino } from 'pino';
import { loadConfig } from '../config/config.ts';
import { KeelError } from '../domain/keel-error.ts';
import { selectBackend } from '../store/open-store.ts';

/** Migrations run on one connection. */
const MIGRATE_POOL_SIZE = 1;

export async function runMigrateCommand(): Promise<number> {
  const { config } = loadConfig(process.env);
  const factory = selectBackend({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: MIGRATE_POOL_SIZE });
  // A store one process owns (SQLite under its data-directory lock) is migrated by that process at start.
  if (!factory.capabilities.multiProcess) throw new KeelError('config_invalid', 'keel migrate needs KEEL_DATABASE_URL (the SQLite store migrates itself at start)');
  const store = factory.open().runs;
  await store.migrate();
  await store.close();
  pino({ level: config.logLevel }).info('migrations applied');
  return 0;
}
