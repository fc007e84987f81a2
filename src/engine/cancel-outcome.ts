// Decides what a cancelled run tells its caller about side effects: nothing happened, something
// happened, or it cannot be known (a side-effect tool was running when the run stopped).
import type { CancelOutcome, JournalEntry } from '../domain/records.ts';
import type { JournalWrite } from '../store/store.ts';

export function cancelOutcome(
  journal: JournalEntry[],
  late: JournalWrite[],
  sideEffectInterrupted: boolean,
): CancelOutcome {
  // A late write (a result that finished after the cancel) supersedes the journaled state of its
  // position.
  const bySeq = new Map<number, Pick<JournalEntry, 'kind' | 'status' | 'effectClass'>>();
  for (const e of journal) bySeq.set(e.seq, e);
  for (const w of late)
    bySeq.set(w.seq, {
      kind: w.kind,
      status: w.status,
      effectClass: w.effectClass ?? bySeq.get(w.seq)?.effectClass ?? null,
    });
  const entries = [...bySeq.values()];
  if (
    sideEffectInterrupted ||
    entries.some(
      (e) =>
        e.status === 'unknown' ||
        (e.kind === 'tool' && e.effectClass === 'side-effect' && e.status === 'running'),
    )
  ) {
    return 'outcome_unknown';
  }
  const didWork = entries.some(
    (e) =>
      e.status === 'succeeded' &&
      (e.kind === 'step' || e.kind === 'child' || (e.kind === 'tool' && e.effectClass !== 'read')),
  );
  return didWork ? 'after_partial_work' : 'no_side_effects';
}
