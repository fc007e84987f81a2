// What rides with a live run's next commit instead of a commit of its own: `run.started` (the claim
// writes no events), notices such as `effect.retrying` or `run.resumed`, and journal writes that
// need no commit yet (ctx.now: nothing durable has seen the value before then). It only holds and
// hands them over; it never commits.
import type { Json } from '../domain/json.ts';
import type { EventWrite, JournalWrite } from '../store/store.ts';

export class CommitRiders {
  #start: EventWrite | undefined;
  #events: EventWrite[] = [];
  #journal: JournalWrite[] = [];

  /** `start` goes first, with the first commit. */
  constructor(start: { type: string; data: Json }) {
    this.#start = start;
  }

  /** `start`, taken to be written now rather than with the first commit (nothing if already gone). */
  takeStart(): EventWrite[] {
    const start = this.#start;
    this.#start = undefined;
    return start === undefined ? [] : [start];
  }

  event(event: EventWrite): void {
    this.#events.push(event);
  }

  journal(write: JournalWrite): void {
    this.#journal.push(write);
  }

  /** The positions of the journal writes riding now (they commit with the next commit). */
  journalSeqs(): Set<number> {
    return new Set(this.#journal.map((w) => w.seq));
  }

  /**
   * The commit's journal and events with everything waiting laid in front of them (and no longer
   * waiting).
   */
  board(
    journal: JournalWrite[] | undefined,
    events: EventWrite[] | undefined,
  ): { journal: JournalWrite[] | undefined; events: EventWrite[] | undefined } {
    const writes =
      this.#journal.length > 0 ? [...this.#journal.splice(0), ...(journal ?? [])] : journal;
    const lead = [...(this.#start !== undefined ? [this.#start] : []), ...this.#events.splice(0)];
    this.#start = undefined;
    return { journal: writes, events: lead.length > 0 ? [...lead, ...(events ?? [])] : events };
  }
}
