// Read-only aggregates over a tenant's runs, for the dashboard: counts and consumption per agent
// and status, the oldest queued run, and completions over time. Shared row shapes for both stores;
// never used on the commit path.

/** One agent × status group of a tenant's runs. */
export interface RunSummaryRow {
  agent: string;
  status: string;
  runs: number;
  steps: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** For queued runs: the earliest time one of them became claimable (ms), else null. */
  oldestClaimableAt: number | null;
  /** For waiting runs: the earliest time one of them started waiting (ms), else null. */
  oldestWaitingSince: number | null;
}

/** Runs that ended in one time bucket with one status. */
export interface EndedRunsBucket {
  /** Bucket start (ms since the epoch, a multiple of the bucket width). */
  bucketStart: number;
  status: string;
  runs: number;
}

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** Maps a `summarize-runs` row (either backend; Postgres returns BIGINT as text). */
export function toRunSummaryRow(row: Record<string, unknown>): RunSummaryRow {
  return {
    agent: String(row.agent),
    status: String(row.status),
    runs: num(row.runs),
    steps: num(row.steps),
    inputTokens: num(row.input_tokens),
    outputTokens: num(row.output_tokens),
    costUsd: num(row.cost_usd),
    oldestClaimableAt: numOrNull(row.oldest_claimable_at),
    oldestWaitingSince: numOrNull(row.oldest_waiting_since),
  };
}

/** Maps a `count-ended-runs` row. */
export function toEndedRunsBucket(row: Record<string, unknown>): EndedRunsBucket {
  return { bucketStart: num(row.bucket_start), status: String(row.status), runs: num(row.runs) };
}

/** One tenant × status group over all tenants (status null: a tenant without runs). */
export interface TenantSummaryRow {
  tenantId: string;
  tenantName: string;
  tenantCreatedAt: number;
  status: string | null;
  runs: number;
  steps: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** For queued runs: the earliest time one of them became claimable (ms), else null. */
  oldestClaimableAt: number | null;
}

/** Maps a `summarize-tenants` row. */
export function toTenantSummaryRow(row: Record<string, unknown>): TenantSummaryRow {
  return {
    tenantId: String(row.tenant_id),
    tenantName: String(row.tenant_name),
    tenantCreatedAt: num(row.tenant_created_at),
    status: row.status === null || row.status === undefined ? null : String(row.status),
    runs: num(row.runs),
    steps: num(row.steps),
    inputTokens: num(row.input_tokens),
    outputTokens: num(row.output_tokens),
    costUsd: num(row.cost_usd),
    oldestClaimableAt: numOrNull(row.oldest_claimable_at),
  };
}
