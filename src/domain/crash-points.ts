// Named crash points for fault-injection tests: places in the engine and the stores where a process
// death is the interesting case (after dispatch, after the tool returned, inside the commit
// transaction, after the commit). Armed only by the test-only setting KEEL_TEST_CRASH_AT (read by
// config); unarmed, a crash point is one comparison. It must never do anything but SIGKILL its own
// process, and only when a test asked for it.

export const CRASH_POINTS = {
  /**
   * An effect was dispatched (a side-effect tool's intent is journaled), its code has not run yet.
   */
  'dispatch.before-execute': 'after dispatch, before the effect runs',
  /** The effect's code returned (the side effect happened), its result is not committed yet. */
  'execute.before-commit': 'after the effect ran, before its result is committed',
  /** Inside the store transaction that holds a run commit, before COMMIT. */
  'commit.in-transaction': 'inside the commit transaction, before COMMIT',
  /** The commit is durable; the engine has not acted on it (no notify, no next dispatch) yet. */
  'commit.before-notify': 'after the commit, before anything acts on it',
  /**
   * A fan-in's decision is durable (with its losers' cancellation requests); the run has not acted
   * on it, and the losers' workers have not heard of it.
   */
  'decision.committed': 'after a fan-in decision commit, before the run acts on it',
  /** An archive chunk is stored and referenced in the artifact store, not recorded yet. */
  'archive.chunk-stored': 'after an archive chunk is stored, before it is recorded',
  /** A run's chunks are recorded (watermarks moved); its live rows are not removed yet. */
  'archive.before-prune': 'after the archive watermarks moved, before live rows are removed',
} as const;
export type CrashPoint = keyof typeof CRASH_POINTS;

let armed: { point: CrashPoint; onHit: number } | undefined;
let hits = 0;

/**
 * Arms one crash point from `point:n` (kill on the n-th time the point is reached; n defaults to
 * 1). Throws on an unknown point, so a typo in a test cannot silently test nothing.
 */
export function armCrashPoint(spec: string): void {
  const [name, n = '1'] = spec.split(':');
  if (!(name! in CRASH_POINTS))
    throw new Error(
      `unknown crash point ${JSON.stringify(name)}; known: ${Object.keys(CRASH_POINTS).join(', ')}`,
    );
  const onHit = Number(n);
  if (!Number.isInteger(onHit) || onHit < 1)
    throw new Error(`crash point hit count must be a positive integer, got ${JSON.stringify(n)}`);
  armed = { point: name as CrashPoint, onHit };
  hits = 0;
}

/**
 * Marks that execution reached `point`; kills this process (SIGKILL, no cleanup) if a test armed it
 * for this hit.
 */
export function crashPoint(point: CrashPoint): void {
  if (armed === undefined || armed.point !== point) return;
  if (++hits < armed.onHit) return;
  process.kill(process.pid, 'SIGKILL');
}
