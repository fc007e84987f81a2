// The processes that serve agent versions (`keel dev|server|worker`), as the store keeps them for
// GET /v1/agents: each announces itself at start and while it lives, so any API process can say
// which processes serve a version, not only itself. Rows of crashed processes age out.

/** A process that serves agent versions: its lease owner id, where it runs, what it serves. */
export interface ServingProcess {
  /** The process's lease owner id (`lease_owner` of the runs it holds). */
  workerId: string;
  role: string;
  host: string;
  pid: number;
  /** `agent@version` keys it claims runs of. */
  served: string[];
  startedAt: number;
  lastSeenAt: number;
}

/** Rows not refreshed for this long are deleted when a process announces itself. */
export const SERVING_PROCESS_FORGET_MS = 24 * 3_600_000;

export function toServingProcess(row: Record<string, unknown>): ServingProcess {
  return {
    workerId: String(row.worker_id),
    role: String(row.role),
    host: String(row.host),
    pid: Number(row.pid),
    served: JSON.parse(String(row.served)) as string[],
    startedAt: Number(row.started_at),
    lastSeenAt: Number(row.last_seen_at),
  };
}
