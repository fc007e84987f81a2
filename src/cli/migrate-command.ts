// `keel migrate`: applies the store's pending migrations and exits (servers and workers also migrate at start).
import { pino } from 'pino';
import { loadConfig } from '../config/config.ts';
import { KeelError } from '../domain/keel-error.ts';
import { PostgresStore } from '../store/postgres/postgres-store.ts';

export async function runMigrateCommand(): Promise<number> {
  const { config } = loadConfig(process.env);
  if (config.databaseUrl === undefined) throw new KeelError('config_invalid', 'keel migrate needs KEEL_DATABASE_URL (the SQLite store migrates itself at start)');
  const store = new PostgresStore({ connectionString: config.databaseUrl, poolSize: 1 });
  await store.migrate();
  await store.close();
  pino({ level: config.logLevel }).info('migrations applied');
  return 0;
}
