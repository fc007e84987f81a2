// The store side of fair claiming, shared by both stores: the rows of fair-backlog.sql as
// backlogged tenants, and claimed runs grouped per tenant in their claim order. The order itself is
// decided in src/domain/fair-share.ts; nothing here touches the database.
import { BATCH_AGING_MS, type BackloggedTenant } from '../domain/fair-share.ts';
import { priorityRank } from './claim-rules.ts';
import type { RunRecord } from '../domain/records.ts';
import { runDueAt, runOrderOf } from '../domain/run-order.ts';

type Row = Record<string, unknown>;

/**
 * How stale a store's backlog flags may get while its claims find enough to claim: a tenant whose
 * runs become claimable while others are backlogged waits at most this long to be seen (a claim
 * that comes up short refreshes at once).
 */
export const FAIR_BACKLOG_REFRESH_MS = 1_000;

/**
 * A store's own view of the backlog refresh (fair claims without a cluster-wide lock): when it last
 * ran, and the total weight of the tenants marked backlogged then (the interactive lead is a share of it).
 */
export class FairBacklogState {
  #refreshedAt = Number.NEGATIVE_INFINITY;
  #totalWeight: number | undefined;

  get totalWeight(): number | undefined {
    return this.#totalWeight;
  }

  /** The cluster was asked whether to refresh (another claim may have done so). */
  checked(now: number): void {
    this.#refreshedAt = now;
  }

  due(now: number): boolean {
    return now - this.#refreshedAt >= FAIR_BACKLOG_REFRESH_MS || now < this.#refreshedAt;
  }

  refreshed(now: number, totalWeight: number): void {
    this.#refreshedAt = now;
    this.#totalWeight = totalWeight;
  }
}

/**
 * Backlogged tenants with room under their concurrency cap (a tenant at its cap is not claimed
 * from).
 */
export function toBackloggedTenants(rows: readonly Row[]): BackloggedTenant[] {
  const tenants: BackloggedTenant[] = [];
  for (const row of rows) {
    const cap =
      row.max_concurrent_runs === null || row.max_concurrent_runs === undefined
        ? Infinity
        : Number(row.max_concurrent_runs);
    const room = cap - Number(row.held);
    if (room <= 0) continue;
    const interactive = row.head_interactive === null ? Infinity : Number(row.head_interactive);
    const batch = row.head_batch === null ? Infinity : Number(row.head_batch) + BATCH_AGING_MS;
    tenants.push({
      tenantId: String(row.tenant_id),
      weight: Number(row.weight),
      vtime: Number(row.vtime),
      room,
      headKey: Math.min(interactive, batch),
      interactiveHead: interactive <= batch,
    });
  }
  return tenants;
}

/**
 * Claimed runs per tenant, each tenant's in its claim order (RETURNING loses it): by due time
 * (run-order.ts) with the same batch aging, as the claim SQL orders them.
 */
export function claimedByTenant(runs: readonly RunRecord[]): Map<string, RunRecord[]> {
  const byTenant = new Map<string, RunRecord[]>();
  const key = (run: RunRecord) =>
    runDueAt(runOrderOf(run)) + priorityRank(run.priority) * BATCH_AGING_MS;
  for (const run of runs) {
    const list = byTenant.get(run.tenantId);
    if (list === undefined) byTenant.set(run.tenantId, [run]);
    else list.push(run);
  }
  for (const list of byTenant.values())
    list.sort((a, b) => key(a) - key(b) || (a.id < b.id ? -1 : 1));
  return byTenant;
}
