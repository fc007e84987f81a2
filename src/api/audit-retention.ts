// Audit retention: a periodic pass deleting the audit entries older than the configured retention
// (KEEL_AUDIT_RETENTION_DAYS), in bounded batches. Every API process runs it; the deletes are
// idempotent, so passes of several processes overlapping do no harm.

/** How often the retention pass runs. */
export const AUDIT_PRUNE_INTERVAL_MS = 60 * 60 * 1000;
/** The first pass runs this long after start (not at once: a process that starts and stops does none). */
export const AUDIT_PRUNE_FIRST_DELAY_MS = 60 * 1000;

export interface AuditRetention {
  /** Runs one pass now; resolves to the entries deleted. */
  pass(): Promise<number>;
  stop(): void;
}

export function startAuditRetention(
  store: { pruneAudit(before: number): Promise<number> },
  retentionMs: number,
  onError: (error: unknown) => void,
): AuditRetention {
  const pass = () => store.pruneAudit(Date.now() - retentionMs);
  let timer = setTimeout(function again() {
    void pass().catch(onError);
    timer = setTimeout(again, AUDIT_PRUNE_INTERVAL_MS);
    timer.unref();
  }, AUDIT_PRUNE_FIRST_DELAY_MS);
  timer.unref();
  return { pass, stop: () => clearTimeout(timer) };
}
