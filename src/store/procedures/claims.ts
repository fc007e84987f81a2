// The claim procedures both stores share: a fair claim across tenants (weighted fair queuing, state
// kept in the store: src/domain/fair-share.ts), a probation claim (suspects, the most suspicious
// first) and the lease heartbeat.
//
// Two shapes of fair claim, by Dialect.sharedFairClaims. With one writer (SQLite) a claim plans over
// every backlogged tenant under the write lock and saves the fair clock. Where several processes
// claim (Postgres) no row is locked by every claim: a claim locks only a window of the backlogged
// tenants with the least virtual times (FOR UPDATE SKIP LOCKED), plans over them with the same
// planner, claims and advances their virtual times, all in one statement (a function in the
// database, migration 0054); concurrent claimers take the next tenants in virtual-time order.
// Which tenants are backlogged is a flag kept in their clock rows, set by a backlog refresh (the
// full fair-backlog read, at most every FAIR_BACKLOG_REFRESH_MS per store, and whenever a claim
// comes up short) and cleared by the claim that finds a tenant with nothing claimable or no room.
import { BATCH_AGING_MS, FairClaim } from '../../domain/fair-share.ts';
import type { RunRecord } from '../../domain/records.ts';
import type { RunStatus } from '../../domain/run-status.ts';
import { statusesAllowing } from '../../domain/run-status.ts';
import { inClaimOrder } from '../claim-rules.ts';
import {
  claimedByTenant,
  FAIR_BACKLOG_REFRESH_MS,
  FairBacklogState,
  toBackloggedTenants,
} from '../fair-claim.ts';
import { toRun } from '../rows.ts';
import type { ClaimRequest, HeartbeatResult } from '../store.ts';
import { startAttempts, startProbationAttempts } from './attempts.ts';
import { all, one, run, type Procedure, type Tx } from './transaction.ts';

const CLAIMABLE_STATUSES = JSON.stringify(statusesAllowing('claim'));

/**
 * Lease state and attempts only, no events: what clients see must be durable, and a claim is not
 * flushed on its own.
 */
export function* claimRuns(
  tx: Tx,
  request: ClaimRequest,
  backlog: FairBacklogState = new FairBacklogState(),
): Procedure<RunRecord[]> {
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
  if (tx.dialect.sharedFairClaims) return yield* claimFromWindows(tx, request, lease, backlog);
  // The fair clock is read first: where it is a locked row, claimers of every process plan and
  // apply one after another, so the virtual times they read are never stale.
  const clock = Number((yield* one('read-fair-clock'))!.vtime);
  const tenants = yield* all('fair-backlog', {
    now: lease.now,
    served: lease.served,
    claimable_statuses: lease.claimable_statuses,
  });
  const claim = new FairClaim<RunRecord>(toBackloggedTenants(tenants), clock, request.limit);
  yield* claimPlans(lease, claim);
  const { items, vtimes, clock: newClock } = claim.result();
  yield* startAttempts(tx, items);
  if (vtimes.size > 0) {
    yield run('save-tenant-vtimes', { vtimes: JSON.stringify(Object.fromEntries(vtimes)) });
    yield run('save-fair-clock', { clock: newClock });
  }
  return items;
}

type Lease = {
  owner: string;
  now: number;
  lease_expires_at: number;
  served: string;
  claimable_statuses: string;
};

/**
 * Claims the runs of each round a FairClaim plans, and records what each tenant really had (one
 * statement per tenant: the store with one writer; Postgres plans in keel_fair_claim, 0054).
 */
function* claimPlans(lease: Lease, claim: FairClaim<RunRecord>): Procedure<void> {
  for (let plan = claim.next(); plan !== null; plan = claim.next()) {
    const claimed: RunRecord[] = [];
    for (const [tenantId, n] of plan) {
      for (const row of yield* all('claim-tenant-runs', {
        ...lease,
        tenant_id: tenantId,
        limit: n,
        batch_aging_ms: BATCH_AGING_MS,
      }))
        claimed.push(toRun(row));
    }
    claim.record(claimedByTenant(claimed));
  }
}

/**
 * A fair claim without a cluster-wide lock, in passes: refresh the backlog flags if they are older
 * than FAIR_BACKLOG_REFRESH_MS, then one `fair-claim` statement per pass, which locks the window of
 * backlogged tenants with the least virtual times (skipping those other claimers hold), plans over
 * them with the clock read unlocked (the FairClaim planner, repeated in the database: migration
 * 0054), claims, starts the attempts, saves their virtual times and clears the flag of those found
 * with nothing claimable or no room. A pass that comes up short refreshes the backlog and passes
 * once more. Every statement here is a whole transaction (the write runs them without BEGIN and
 * COMMIT: WriteOptions.autocommit), so a pass is one round trip.
 */
function* claimFromWindows(
  tx: Tx,
  request: ClaimRequest,
  lease: Lease,
  backlog: FairBacklogState,
): Procedure<RunRecord[]> {
  const items: RunRecord[] = [];
  let refreshed = false;
  const refresh = function* (): Procedure<void> {
    const found = toBackloggedTenants(
      yield* all('fair-backlog-unflagged', {
        now: lease.now,
        served: lease.served,
        claimable_statuses: lease.claimable_statuses,
      }),
    );
    if (found.length > 0)
      yield run('flag-fair-tenants', {
        tenants: JSON.stringify(found.map((t) => t.tenantId).sort()),
      });
    backlog.refreshed(tx.now, Number((yield* one('fair-backlog-weight'))!.weight));
    refreshed = true;
  };
  if (backlog.due(tx.now)) {
    // Due here; one claim of the cluster refreshes per interval (the others find it fresh).
    backlog.checked(tx.now);
    const mine = yield* one('claim-fair-refresh', {
      now: tx.now,
      interval: FAIR_BACKLOG_REFRESH_MS,
    });
    if (mine !== undefined) yield* refresh();
  }
  for (let pass = 0; pass < 2 && items.length < request.limit; pass++) {
    if (pass === 1) {
      if (refreshed) break;
      yield* refresh();
    }
    const limit = request.limit - items.length;
    const rows = yield* all('fair-claim', {
      ...lease,
      limit,
      window: fairWindow(limit),
      backlog_weight: backlog.totalWeight ?? 0,
      batch_aging_ms: BATCH_AGING_MS,
    });
    items.push(...rows.map(toRun));
  }
  return items;
}

/** Tenants one claim locks: its runs' worth, and a few more for tenants that turn out short. */
export function fairWindow(limit: number): number {
  return Math.min(limit, FAIR_WINDOW_MAX) + FAIR_WINDOW_SLACK;
}
const FAIR_WINDOW_MAX = 256;
const FAIR_WINDOW_SLACK = 8;

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
