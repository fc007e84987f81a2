// Ephemeral run events — `model.delta` token deltas, `tool.output` pieces of a tool's output — and
// the relay that carries them between processes sharing a database, so that a follower connected
// to one process sees the live output of a run another process executes. Nothing here is durable:
// a lost relay message costs a follower a piece of live output, never a committed event.

export interface LiveEvent {
  type: 'model.delta' | 'tool.output';
  data: Record<string, unknown>;
}

export interface LiveRelay {
  /**
   * Announces that this process follows `runId` live (renewed while it does); the returned function
   * ends it.
   */
  follow(runId: string): () => void;
  /** Whether another process announced that it follows `runId` (and has not let it lapse). */
  followedElsewhere(runId: string): boolean;
  /** Sends a live event of `runId` to the processes that follow it. */
  send(runId: string, event: LiveEvent): void;
  /**
   * Sends `runId`'s gathered events now and resolves once everything sent so far has gone out (or
   * after a bound, if the database is slow): a step's live output then reaches other processes
   * before the step's committed result does.
   */
  settled(runId: string): Promise<void>;
  /** Live events other processes sent (never this process's own). */
  onEvent(handler: (runId: string, event: LiveEvent) => void): void;
  close(): Promise<void>;
}
