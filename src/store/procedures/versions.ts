// Moving runs between versions of their agent: a version migration re-pins a tenant's queued runs
// that never started (no journal entry, so no code of the old version ever ran for them) to another
// version, audited and evented per run; runs that started stay on the code that started them. Also
// the count of queued runs by pinned version, for the start-up warning about versions nobody serves.
import type { VersionMigration, VersionMigrationResult, QueuedVersion } from '../store.ts';
import { appendEvents } from './runs.ts';
import { all, one, run, type Procedure, type Tx } from './transaction.ts';

/** How many started runs a migration names in its report (it counts them all). */
export const MIGRATION_STARTED_IDS_MAX = 100;

export function* migrateRunVersion(tx: Tx, m: VersionMigration): Procedure<VersionMigrationResult> {
  const candidates = yield* all('find-unstarted-queued-runs', {
    tenant_id: m.tenantId,
    agent: m.agent,
    agent_version: m.fromVersion,
    limit: m.limit,
  });
  const moved: string[] = [];
  for (const candidate of candidates) {
    const id = candidate.id as string;
    const changed = yield* one('migrate-run-version', {
      id,
      from_version: m.fromVersion,
      to_version: m.toVersion,
      agent_key: `${m.agent}@${m.toVersion}`,
      now: tx.now,
    });
    if (changed === undefined) continue; // claimed meanwhile: it started on the old version
    moved.push(id);
    const data = { agent: m.agent, from: m.fromVersion, to: m.toVersion };
    yield run('insert-audit', {
      run_id: id,
      at: tx.now,
      kind: 'run_version_migrated',
      data: JSON.stringify({ ...data, ...(m.actor === undefined ? {} : { actor: m.actor }) }),
    });
    yield* appendEvents(tx, id, [{ type: 'run.migrated', data }]);
    tx.touch(id, 'runnable');
  }
  const started = yield* all('find-started-queued-runs', {
    tenant_id: m.tenantId,
    agent: m.agent,
    agent_version: m.fromVersion,
    limit: MIGRATION_STARTED_IDS_MAX,
  });
  return {
    moved,
    started: started.map((row) => row.id as string),
    startedTotal: started.length === 0 ? 0 : Number(started[0]!.total),
    more: candidates.length >= m.limit,
  };
}

export function* queuedByVersion(): Procedure<QueuedVersion[]> {
  return (yield* all('count-queued-by-version')).map((row) => ({
    agent: row.agent as string,
    version: row.agent_version as string,
    runs: Number(row.runs),
  }));
}
