// The commit procedure both stores share: one worker's progress on a run applied atomically under
// its guards (fencing token and state version), or audited as stale. Also the audit of a stale
// commit, which the Postgres store's merged effect commits use too.
import type { RunStatus } from '../../domain/run-status.ts';
import { isTerminal } from '../../domain/run-status.ts';
import { claimAfterFor } from '../claim-rules.ts';
import { jsonText } from '../rows.ts';
import type { CommitOutcome, JournalWrite, RunCommit } from '../store.ts';
import { endAttempt } from './attempts.ts';
import {
  appendEvents,
  cancelDelegatedChildren,
  cancelRunById,
  insertEvents,
  insertRun,
} from './runs.ts';
import { all, one, run, type Procedure, type Row, type Tx } from './transaction.ts';

export type StaleCommit = { stale: Record<string, unknown> };

export function* applyCommit(tx: Tx, c: RunCommit): Procedure<CommitOutcome | StaleCommit> {
  const patch = c.run ?? {};
  const events = c.events ?? [];
  const journal = c.journal ?? [];
  const status = patch.status;
  const guard = {
    id: c.runId,
    lease_token: c.leaseToken,
    expected_state_version: c.expectedStateVersion,
    now: tx.now,
    event_count: events.length,
  };
  const deltas = {
    d_steps: patch.counters?.steps ?? 0,
    d_input_tokens: patch.counters?.inputTokens ?? 0,
    d_output_tokens: patch.counters?.outputTokens ?? 0,
    d_cost_usd: patch.counters?.costUsd ?? 0,
  };
  // Counters, journal and events only (most effect results): the lean statement that rewrites no
  // indexed column.
  const countersOnly = Object.keys(patch).every((k) => k === 'counters');
  let row: Row | undefined;
  if (countersOnly) {
    row = yield* one('commit-effect', { ...guard, ...deltas });
  } else {
    const claimAfter =
      status === undefined
        ? undefined
        : claimAfterFor(status, patch.releaseLease === true, patch.wakeAt ?? null, tx.now);
    row = yield* one('commit-run', {
      ...guard,
      ...deltas,
      set_status: status === undefined ? 0 : 1,
      status: status ?? null,
      terminal: status !== undefined && isTerminal(status) ? 1 : 0,
      set_result: 'result' in patch ? 1 : 0,
      result: jsonText(patch.result),
      set_error: 'error' in patch ? 1 : 0,
      error: jsonText(patch.error),
      set_outcome: 'outcome' in patch ? 1 : 0,
      outcome: patch.outcome ?? null,
      set_compensation: 'compensation' in patch ? 1 : 0,
      compensation: jsonText(patch.compensation),
      set_waiting: 'waitingReason' in patch ? 1 : 0,
      waiting_reason: patch.waitingReason ?? null,
      set_progress: 'progress' in patch ? 1 : 0,
      progress: jsonText(patch.progress),
      set_stalled: 'stalled' in patch ? 1 : 0,
      stalled: jsonText(patch.stalled),
      set_wake_at: 'wakeAt' in patch ? 1 : 0,
      wake_at: patch.wakeAt ?? null,
      release: patch.releaseLease === true ? 1 : 0,
      set_claim_after: claimAfter === undefined ? 0 : 1,
      claim_after: claimAfter ?? null,
    });
  }
  if (row === undefined) return { stale: yield* auditStale(tx, c) };
  if (patch.preempted === true) yield run('mark-preempted', { id: c.runId, now: tx.now });
  if (!countersOnly)
    yield* endAttempt(
      tx,
      c.runId,
      c.leaseToken,
      status,
      patch.releaseLease === true,
      patch.preempted === true,
    );
  yield* upsertJournal(tx, c.runId, c.leaseToken, journal);
  yield* insertEvents(tx, c.runId, Number(row.first_seq), events);
  if (status !== undefined && isTerminal(status)) tx.touch(c.runId, 'ended');
  if (status === 'queued' || (patch.releaseLease === true && status === 'cancelling'))
    tx.touch(c.runId, 'runnable');
  for (const key of c.consumeInputs ?? []) yield run('consume-input', { run_id: c.runId, key });
  for (const child of c.createRuns ?? []) yield* insertRun(tx, child);
  for (const id of c.wakeRuns ?? []) {
    if ((yield* one('wake-run', { id, now: tx.now })) !== undefined) {
      yield* appendEvents(tx, id, [
        { type: 'run.queued', data: { reason: 'child', childRunId: c.runId } },
      ]);
      tx.touch(id, 'runnable');
    }
  }
  // Each child's row is locked before it is read: on Postgres, a child read unlocked as `queued`
  // could be claimed meanwhile and the claim's `running` outlived this cancel (a child that ran on
  // after its parent ended; seen 2 runs in 5 before the lock).
  for (const id of c.cancelRuns ?? []) yield* cancelRunById(tx, id, `parent ${c.runId}`, true);
  // The children its journal does not name (started with its delegated token) end with it too.
  if (status !== undefined && isTerminal(status)) yield* cancelDelegatedChildren(tx, c.runId);
  let finalStatus = row.status as RunStatus;
  if (finalStatus === 'waiting' && c.wakeIf !== undefined) {
    // On Postgres, a child whose end is committing now woke nothing (this run was still running
    // when it looked) and is invisible to the check below until it commits: wait for it first
    // (seen once: a parent of three children left waiting for good, test/fan-in-crash.test.ts).
    const childIds = c.wakeIf.childRunIds ?? [];
    if (childIds.length > 0) yield* all('share-lock-runs', { ids: JSON.stringify(childIds) });
    const woke = yield* one('wake-if-ready', {
      id: c.runId,
      now: tx.now,
      input_keys: JSON.stringify(c.wakeIf.inputKeys ?? []),
      child_ids: JSON.stringify(c.wakeIf.childRunIds ?? []),
    });
    if (woke !== undefined) {
      finalStatus = 'queued';
      yield* appendEvents(tx, c.runId, [{ type: 'run.queued', data: { reason: 'ready' } }]);
      tx.touch(c.runId, 'runnable');
    }
  }
  return { stateVersion: Number(row.state_version), status: finalStatus };
}

/** Writes journal entries at their positions, replacing earlier states of the same positions. */
function* upsertJournal(
  tx: Tx,
  runId: string,
  leaseToken: number,
  journal: readonly JournalWrite[],
): Procedure<void> {
  if (journal.length === 0) return;
  if (tx.dialect.bulkStatements) {
    yield run('upsert-journal-entries', {
      run_id: runId,
      lease_token: leaseToken,
      entries: JSON.stringify(journal.map(journalRow)),
    });
    return;
  }
  for (const j of journal) {
    // Built as one literal (not a spread of journalRow): the commit path binds these 17 parameters
    // per effect.
    yield run('upsert-journal-entry', {
      run_id: runId,
      lease_token: leaseToken,
      seq: j.seq,
      kind: j.kind,
      name: j.name,
      status: j.status,
      args: jsonText(j.args),
      result: jsonText(j.result),
      error: jsonText(j.error),
      execution_id: j.executionId ?? null,
      effect_class: j.effectClass ?? null,
      attempts: j.attempts ?? 1,
      worker: j.worker ?? null,
      queued_at: j.queuedAt ?? null,
      started_at: j.startedAt ?? null,
      ended_at: j.endedAt ?? null,
      deadline_at: j.deadlineAt ?? null,
    });
  }
}

/**
 * A journal write as the journal's columns (bound one by one, or sent as one object of a JSON
 * array).
 */
export function journalRow(j: JournalWrite): Record<string, string | number | null> {
  return {
    seq: j.seq,
    kind: j.kind,
    name: j.name,
    status: j.status,
    args: jsonText(j.args),
    result: jsonText(j.result),
    error: jsonText(j.error),
    execution_id: j.executionId ?? null,
    effect_class: j.effectClass ?? null,
    attempts: j.attempts ?? 1,
    worker: j.worker ?? null,
    queued_at: j.queuedAt ?? null,
    started_at: j.startedAt ?? null,
    ended_at: j.endedAt ?? null,
    deadline_at: j.deadlineAt ?? null,
  };
}

/** Records a fenced-off commit in the audit table and says what the run holds now. */
export function* auditStale(tx: Tx, c: RunCommit): Procedure<Record<string, unknown>> {
  const current = yield* one('get-run', { id: c.runId });
  const stale = {
    leaseToken: c.leaseToken,
    expectedStateVersion: c.expectedStateVersion,
    currentLeaseToken: current === undefined ? null : Number(current.lease_token),
    currentStateVersion: current === undefined ? null : Number(current.state_version),
    currentStatus: current?.status ?? null,
  };
  yield run('insert-audit', {
    run_id: c.runId,
    at: tx.now,
    kind: 'stale_commit',
    data: JSON.stringify({
      ...stale,
      journal: (c.journal ?? []).map((j) => ({
        seq: j.seq,
        kind: j.kind,
        name: j.name,
        status: j.status,
      })),
    }),
  });
  return stale;
}
