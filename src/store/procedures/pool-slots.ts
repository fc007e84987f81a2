// The pool-slot lease procedures both stores share: open a holder (a fencing token and a lease),
// grant slots under the pool's lock and refuse any past the pool's limit or the tenant's cap
// (counting live holders only), give slots back, renew the holder and forget expired ones, drop a
// holder at a graceful stop. The grant is the one decision: it must never count an expired holder's
// slots, and never give a holder more than its fair share while another waits.
import { KeelError } from '../../domain/keel-error.ts';
import type {
  PoolSlotGrant,
  PoolSlotHolder,
  PoolSlotLease,
  PoolSlotRenewal,
  PoolSlotRequest,
} from '../pool-slot-leases.ts';
import { all, one, run, type Procedure, type Tx } from './transaction.ts';

/** The advisory-lock key that serialises the grants of one pool across processes. */
const poolLockKey = (pool: string): string => `pool-slots:${pool}`;

export function* openPoolSlotHolder(
  tx: Tx,
  holder: string,
  leaseMs: number,
): Procedure<PoolSlotHolder> {
  yield* forgetExpiredHolders(tx.now);
  const token = Number((yield* one('next-pool-slot-token'))!.token);
  const expiresAt = tx.now + leaseMs;
  yield run('insert-pool-slot-holder', { token, holder, expires_at: expiresAt });
  return { token, expiresAt };
}

export function* grantPoolSlots(tx: Tx, request: PoolSlotRequest): Procedure<PoolSlotGrant> {
  const { pool, tenantId, token, limit, tenantCap, count, wanted } = request;
  yield* one('lock-key', { key: poolLockKey(pool) });
  if ((yield* one('live-pool-slot-holder', { token, now: tx.now })) === undefined)
    throw new KeelError(
      'pool_slot_lease_lost',
      `the pool-slot lease of holder ${token} has expired; open a new one`,
      { retryable: true, details: { pool, token } },
    );
  const usage = (yield* one('pool-slot-usage', {
    pool,
    tenant_id: tenantId,
    token,
    now: tx.now,
  }))!;
  const total = Number(usage.total);
  const mine = Number(usage.mine);
  let room = Math.min(count, limit - total);
  if (tenantCap !== null) room = Math.min(room, tenantCap - Number(usage.tenant_total));
  // Another holder waits: hold no more than an even split of the limit among the active holders, so
  // the first process to ask cannot keep every slot (it gives its surplus back as calls end).
  const fairShare =
    Number(usage.others_wanting) > 0 ? Math.ceil(limit / (Number(usage.others_active) + 1)) : null;
  if (fairShare !== null) room = Math.min(room, fairShare - mine);
  const granted = Math.max(0, room);
  yield run('put-pool-slot-lease', {
    pool,
    tenant_id: tenantId,
    token,
    granted,
    wanted: Math.max(0, wanted - granted),
  });
  return { granted, fairShare };
}

/** Gives `count` slots back (a no-op under a lost token); `wanted` is what the holder still waits for. */
export function* returnPoolSlots(
  pool: string,
  tenantId: string,
  token: number,
  count: number,
  wanted: number,
): Procedure<boolean> {
  const changed = yield run('return-pool-slots', {
    pool,
    tenant_id: tenantId,
    token,
    count,
    wanted,
  });
  return changed === 1;
}

export function* renewPoolSlotHolder(
  tx: Tx,
  token: number,
  leaseMs: number,
): Procedure<PoolSlotRenewal> {
  const expiresAt = tx.now + leaseMs;
  const renewed =
    (yield run('renew-pool-slot-holder', { token, now: tx.now, expires_at: expiresAt })) === 1;
  yield* forgetExpiredHolders(tx.now);
  const wanted = renewed ? yield* all('pools-wanted-by-others', { token, now: tx.now }) : [];
  return { renewed, expiresAt, poolsWantedByOthers: wanted.map((r) => String(r.pool)) };
}

export function* dropPoolSlotHolder(token: number): Procedure<void> {
  yield run('delete-pool-slot-leases', { token });
  yield run('delete-pool-slot-holder', { token });
}

export function* listPoolSlotLeases(now: number): Procedure<PoolSlotLease[]> {
  return (yield* all('list-pool-slot-leases', { now })).map((r) => ({
    pool: String(r.pool),
    tenantId: String(r.tenant_id),
    holder: String(r.holder),
    token: Number(r.token),
    slots: Number(r.slots),
    wanted: Number(r.wanted),
    expiresAt: Number(r.expires_at),
  }));
}

function* forgetExpiredHolders(now: number): Procedure<void> {
  yield run('delete-expired-pool-slot-leases', { now });
  yield run('delete-expired-pool-slot-holders', { now });
}
