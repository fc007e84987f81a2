// How `keel runs get` and `keel runs attempts` print a run's attempts: one row per claim, with its
// worker, lease token, times and ending. A recovery (the attempt after one whose lease expired) is
// marked as such; it is never called a retry (retries are an effect's attempts, on `keel runs
// steps`).
import { formatDateTime, formatDuration, formatTable } from './format.ts';
import type { Attempt } from './http-client.ts';

export function formatAttempts(attempts: readonly Attempt[]): string {
  if (attempts.length === 0) return 'no attempts: no worker has claimed the run yet';
  const rows = attempts.map((a, i) => {
    const took =
      a.endedAt === null ? '-' : formatDuration(Date.parse(a.endedAt) - Date.parse(a.startedAt));
    const recovery = i > 0 && attempts[i - 1]!.ending === 'lease_expired' ? ' (recovery)' : '';
    return [
      `${a.number}${recovery}`,
      a.worker,
      String(a.leaseToken),
      formatDateTime(a.startedAt),
      a.endedAt === null ? '-' : formatDateTime(a.endedAt),
      took,
      a.ending,
    ];
  });
  return formatTable(['ATTEMPT', 'WORKER', 'LEASE', 'STARTED', 'ENDED', 'TOOK', 'ENDING'], rows);
}
