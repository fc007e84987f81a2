// Runs made from other runs: a rerun (same agent and input, nothing copied) and a reset (the
// source's journal prefix copied, so its effects are replayed and never executed again; a fork is a
// reset or rerun with another input or agent version). Written once for both stores; it checks the
// prefix can be reused before it creates anything, and never touches the source run.
import { KeelError } from '../../domain/keel-error.ts';
import type { JournalEntry, RunRecord } from '../../domain/records.ts';
import { isTerminal } from '../../domain/run-status.ts';
import { toJournalEntry, toRun } from '../rows.ts';
import type { CopyRunRequest, CreateRunResult, EventWrite } from '../store.ts';
import { appendEvents, createRun, requireRun } from './runs.ts';
import { all, one, run, type Procedure, type Tx } from './transaction.ts';

export function* copyRun(tx: Tx, request: CopyRunRequest): Procedure<CreateRunResult> {
  const source = yield* requireRun(request.sourceRunId);
  if (source.tenantId !== request.run.tenantId)
    throw new KeelError('run_not_found', `run ${source.id} not found`);
  const position = request.mode === 'reset' ? (request.position ?? 0) : 0;
  if (request.mode === 'reset') {
    if (!isTerminal(source.status))
      throw new KeelError(
        'run_not_terminal',
        `run ${source.id} is ${source.status}; only an ended run can be reset (cancel it first)`,
        { details: { status: source.status } },
      );
    const journal = (yield* all('load-journal', { run_id: source.id })).map(toJournalEntry);
    checkPrefix(source, journal, position);
  }
  const created = yield* createRun(tx, request.run);
  if (!created.created) return created;
  const newRunId = created.run.id;
  const row = yield* one('set-run-lineage', {
    id: newRunId,
    rerun_of: request.mode === 'rerun' ? source.id : null,
    reset_from_run_id: request.mode === 'reset' ? source.id : null,
    reset_from_position: request.mode === 'reset' ? position : null,
    // Same seed over the same prefix: ctx.random()/uuid() values the copied effects saw come again.
    random_seed: request.mode === 'reset' ? (source.randomSeed ?? source.id) : null,
  });
  if (position > 0)
    yield run('copy-journal-prefix', {
      run_id: newRunId,
      source_run_id: source.id,
      position,
    });
  const lineage: EventWrite =
    request.mode === 'rerun'
      ? { type: 'run.rerun', data: { rerunOf: source.id } }
      : { type: 'run.reset', data: { resetFrom: { runId: source.id, position } } };
  yield run('insert-audit', {
    run_id: newRunId,
    at: tx.now,
    kind: `run_${request.mode}`,
    data: JSON.stringify({
      source: source.id,
      position,
      agentVersion: request.run.agentVersion,
      inputChanged: JSON.stringify(request.run.input) !== JSON.stringify(source.input),
    }),
  });
  yield* appendEvents(tx, newRunId, [lineage]);
  return { run: toRun(row!), created: true };
}

/**
 * Refuses a reset position whose prefix cannot be reused as it is: past the agent's journal, or
 * with a position through it that holds no settled result (never committed, still running, unknown,
 * waiting) or whose execution the source compensated (undone: replaying its result would lie).
 */
export function checkPrefix(source: RunRecord, journal: JournalEntry[], position: number): void {
  const agentEntries = journal.filter((e) => e.kind !== 'compensation');
  const last = agentEntries.reduce((max, e) => Math.max(max, e.seq), 0);
  if (position > last)
    throw new KeelError(
      'reset_position_out_of_range',
      `run ${source.id} has ${last} journal positions; cannot reset from position ${position}`,
      { details: { position, lastPosition: last } },
    );
  const bySeq = new Map(agentEntries.map((e) => [e.seq, e]));
  const compensated = new Set(
    journal
      .filter((e) => e.kind === 'compensation')
      .map((e) => (e.args as { executionId?: string } | null)?.executionId),
  );
  for (let seq = 1; seq <= position; seq++) {
    const entry = bySeq.get(seq);
    const reason =
      entry === undefined
        ? 'never committed'
        : entry.status !== 'succeeded' && entry.status !== 'failed'
          ? entry.status
          : entry.executionId !== null && compensated.has(entry.executionId)
            ? 'compensated'
            : undefined;
    if (reason !== undefined)
      throw new KeelError(
        'reset_position_unsettled',
        `position ${seq} of run ${source.id} (${entry === undefined ? 'no effect' : `${entry.kind} ${JSON.stringify(entry.name)}`}) is ${reason}: its result cannot be reused; reset from position ${seq - 1} or earlier`,
        { details: { position, seq, reason, resetFrom: seq - 1 } },
      );
  }
}
