// The claim procedures both stores share: a fair claim across tenants (weighted fair queuing, state
// kept in the store: src/domain/fair-share.ts), a probation claim (suspects, the most suspicious
// first) and the lease heartbeat.
import { BATCH_AGING_MS, FairClaim } from '../../domain/fair-share.ts';
import type { RunRecord } from '../../domain/records.ts';
import type { RunStatus } from '../../domain/run-status.ts';
import { statusesAllowing } from '../../domain/run-status.ts';
import { inClaimOrder } from '../claim-rules.ts';
import { claimedByTenant, toBackloggedTenants } from '../fair-claim.ts';
import { toRun } from '../rows.ts';
import type { ClaimRequest, HeartbeatResult } from '../store.ts';
import { startAttempts, startProbationAttempts } from './attempts.ts';
import { all, one, run, type Procedure, type Tx } from './transaction.ts';

const CLAIMABLE_STATUSES = JSON.stringify(statusesAllowing('claim'));

/**
 * Lease state and attempts only, no events: what clients see must be durable, and a claim is not
 * flushed on its own.
 */
export function* claimRuns(tx: Tx, request: ClaimRequest): Procedure<RunRecord[]> {
  const lease = {
    owner: request.owner,
    now: tx.now,
    lease_expires_at: tx.now + request.leaseMs,
    served: JSON.stringify(request.served),
    claimable_statuses: CLAIMABLE_STATUSES,
  };
  if (request.probation === true) {
    // RETURNING yields rows in table order, not the subquery's: restore the claim order.
    const rows = yield* all('claim-probation-runs', {
      ...lease,
      limit: request.limit,
      held_at_losses: request.heldAtLosses ?? null,
    });
    return inClaimOrder(
      yield* startProbationAttempts(
        tx,
        request.owner,
        rows.map((row) => ({ run: toRun(row), row })),
      ),
    );
  }
  // The fair clock is read first: where it is a locked row, claimers of every process plan and
  // apply one after another, so the virtual times they read are never stale.
  const clock = Number((yield* one('read-fair-clock'))!.vtime);
  const backlog = yield* all('fair-backlog', {
    now: lease.now,
    served: lease.served,
    claimable_statuses: lease.claimable_statuses,
  });
  const claim = new FairClaim<RunRecord>(toBackloggedTenants(backlog), clock, request.limit);
  for (let plan = claim.next(); plan !== null; plan = claim.next()) {
    const claimed: RunRecord[] = [];
    if (tx.dialect.bulkStatements) {
      const allocation = JSON.stringify(
        [...plan].map(([tenantId, n]) => ({ tenant_id: tenantId, n })),
      );
      for (const row of yield* all('claim-allocation-runs', {
        ...lease,
        allocation,
        batch_aging_ms: BATCH_AGING_MS,
      }))
        claimed.push(toRun(row));
    } else {
      for (const [tenantId, n] of plan) {
        for (const row of yield* all('claim-tenant-runs', {
          ...lease,
          tenant_id: tenantId,
          limit: n,
          batch_aging_ms: BATCH_AGING_MS,
        }))
          claimed.push(toRun(row));
      }
    }
    claim.record(claimedByTenant(claimed));
  }
  const { items, vtimes, clock: newClock } = claim.result();
  yield* startAttempts(tx, items);
  if (vtimes.size > 0) {
    yield run('save-tenant-vtimes', { vtimes: JSON.stringify(Object.fromEntries(vtimes)) });
    yield run('save-fair-clock', { clock: newClock });
  }
  return items;
}

/**
 * Extends the leases the owner still holds. A dialect whose heartbeat skips rows a commit is
 * writing (rather than wait for them) reports those as still held, read without a lock.
 */
export function* heartbeat(
  tx: Tx,
  owner: string,
  runIds: readonly string[],
  leaseMs: number,
): Procedure<HeartbeatResult> {
  const rows = yield* all('heartbeat', {
    owner,
    ids: JSON.stringify(runIds),
    lease_expires_at: tx.now + leaseMs,
  });
  const extended = new Set(rows.map((r) => r.id as string));
  const skipped = runIds.filter((id) => !extended.has(id));
  if (skipped.length > 0)
    rows.push(...(yield* all('find-held-runs', { owner, ids: JSON.stringify(skipped) })));
  return {
    held: rows.map((r) => ({
      id: r.id as string,
      status: r.status as RunStatus,
      stateVersion: Number(r.state_version),
      cancelGraceMs:
        r.cancel_grace_ms === null || r.cancel_grace_ms === undefined
          ? null
          : Number(r.cancel_grace_ms),
    })),
  };
}
