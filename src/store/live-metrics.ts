// What the store reports about live work for metrics, read at scrape time: live runs per tenant and
// status, the run queue (claimable runs and how long the oldest has been claimable), and tool
// executions whose outcome is unknown. Plain data; every backend answers it from indexed queries,
// so a scrape never scans run history.
import type { RunStatus } from '../domain/run-status.ts';

export interface LiveRunCount {
  tenantId: string;
  status: RunStatus;
  count: number;
  /** Of those, the ones marked stalled now (not moved for their agent's stallAfterMs). */
  stalled: number;
}

export interface LiveMetrics {
  /** Runs that have not ended, per tenant and status. */
  runs: LiveRunCount[];
  /** Runs claimable now: queued, due timers, expired leases. */
  claimable: number;
  /**
   * Since when the longest-claimable run has been claimable (ms since the epoch), or null when none
   * is.
   */
  oldestClaimableSince: number | null;
  /** Tool executions in state `unknown`, waiting for a query hook or an operator. */
  unknownExecutions: number;
}
