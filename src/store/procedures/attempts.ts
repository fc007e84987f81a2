// The attempts record, written inside the transactions that change a lease and never on its own: a
// claim starts an attempt (and, taking over an expired lease, ends the previous one as
// lease_expired); the commit that ends, parks or yields the run ends it; a release ends it as
// released (release-attempts, in runs.ts' releaseLeases). Heartbeats never touch it: an attempt's
// row is written twice in its life. Also the announcement of an attempt (events, no commit).
import assert from 'node:assert/strict';
import {
  ATTEMPT_TRANSITIONS,
  endingForCommit,
  type AttemptRecord,
  type RecoveredLease,
} from '../../domain/attempts.ts';
import type { RunRecord } from '../../domain/records.ts';
import type { RunStatus } from '../../domain/run-status.ts';
import { toAttempt } from '../rows.ts';
import type { EventWrite } from '../store.ts';
import { appendEvents } from './runs.ts';
import { all, one, run, type Procedure, type Row, type Tx } from './transaction.ts';

/** Starts the attempts of runs an ordinary claim leased (none of them took over a lease). */
export function* startAttempts(tx: Tx, runs: readonly RunRecord[]): Procedure<void> {
  if (runs.length === 0) return;
  yield run('insert-attempts', { ids: JSON.stringify(runs.map((r) => r.id)), now: tx.now });
}

/**
 * A probation claim's runs (few: one per claim): ends the attempt whose expired lease a run was
 * taken from, then starts the new attempt of each run leased to `owner`, marked `recovered` when
 * the attempt before it ended with an expired lease (here, or in an earlier claim that held the run
 * back unleased).
 */
export function* startProbationAttempts(
  tx: Tx,
  owner: string,
  claimed: readonly { run: RunRecord; row: Row }[],
): Procedure<RunRecord[]> {
  const out: RunRecord[] = [];
  for (const { run: r, row } of claimed) {
    const expiredAt = row.lease_expired_at == null ? null : Number(row.lease_expired_at);
    let previous: Row | undefined;
    if (expiredAt !== null)
      previous = yield* one('expire-attempt', { run_id: r.id, ended_at: expiredAt });
    if (r.leaseOwner !== owner) {
      out.push(r);
      continue;
    }
    if (expiredAt === null) {
      // Held back unleased by an earlier claim, which ended the expired attempt: still a recovery.
      const last = yield* one('last-attempt', { run_id: r.id });
      if (last?.ending === 'lease_expired') previous = last;
    }
    yield* startAttempts(tx, [r]);
    const recovered: RecoveredLease | undefined =
      expiredAt === null && previous === undefined
        ? undefined
        : {
            previousWorker:
              (previous?.worker as string | undefined) ?? r.leaseLossOwners.at(-1) ?? null,
            leaseExpiredAt:
              expiredAt ?? (previous?.ended_at == null ? null : Number(previous.ended_at)),
            attempt: r.attempts,
          };
    out.push(recovered === undefined ? r : { ...r, recovered });
  }
  return out;
}

/** Ends the attempt holding this lease, when the commit gives the lease up. */
export function* endAttempt(
  tx: Tx,
  runId: string,
  leaseToken: number,
  status: RunStatus | undefined,
  releasesLease: boolean,
  preempted: boolean,
): Procedure<void> {
  const ending = endingForCommit(status, releasesLease, preempted);
  if (ending === undefined) return;
  assert.ok(ATTEMPT_TRANSITIONS.running.includes(ending), `an attempt cannot end ${ending}`);
  yield run('end-attempt', {
    run_id: runId,
    lease_token: leaseToken,
    ended_at: tx.now,
    ending,
  });
}

export function* listAttempts(runId: string): Procedure<AttemptRecord[]> {
  return (yield* all('list-attempts', { run_id: runId })).map(toAttempt);
}

/**
 * Appends events about an attempt (`run.started`, `run.recovered`) at once, under its lease: no
 * commit (the state version and the poison counter stay as they are: announcing is no progress).
 * False, writing nothing, when the lease is no longer held.
 */
export function* announceAttempt(
  tx: Tx,
  runId: string,
  leaseToken: number,
  events: readonly EventWrite[],
): Procedure<boolean> {
  const row = yield* one('lock-run', { id: runId });
  if (row === undefined || Number(row.lease_token) !== leaseToken || row.lease_owner == null)
    return false;
  yield* appendEvents(tx, runId, events);
  return true;
}
