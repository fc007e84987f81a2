-- The claim order Keel used before fair claiming (interactive before batch, then oldest; no tenant fairness), kept only as the
-- baseline of bench/scheduler.ts. Keel itself no longer runs it.
-- Claims up to :limit claimable runs of the served agent versions: queued runs, runs whose lease expired,
-- waiting runs whose timer is due, cancelling runs nobody holds. Interactive before batch, then oldest first.
-- Concurrent claimers skip each other's rows (FOR UPDATE SKIP LOCKED). Each claim increments the fencing token
-- and the state version.
-- Params: :owner, :now, :lease_expires_at, :served (JSON array of agent@version), :limit,
--         :claimable_statuses (JSON array: the statuses the transition table lets `claim` leave).
-- Returns the claimed rows as they are after the claim.
WITH picked AS (
  SELECT id FROM runs
  WHERE claim_after IS NOT NULL AND claim_after <= :now::bigint
    AND status IN (SELECT jsonb_array_elements_text(:claimable_statuses::jsonb))
    AND agent_key IN (SELECT jsonb_array_elements_text(:served::jsonb))
    AND lease_losses = 0 AND lease_owner IS NULL  -- suspects (a lost lease, or one expiring now) are claimed apart
  ORDER BY priority_rank, claim_after
  LIMIT :limit::int
  FOR UPDATE SKIP LOCKED
)
UPDATE runs r SET
  status = CASE r.status WHEN 'cancelling' THEN 'cancelling' ELSE 'running' END,
  -- A claim over a lease that was never released (it expired: the holder died or stalled) is a lost lease.
  lease_losses = r.lease_losses + (CASE WHEN r.lease_owner IS NULL THEN 0 ELSE 1 END),
  lease_loss_owners = CASE WHEN r.lease_owner IS NULL THEN r.lease_loss_owners
    ELSE (coalesce(r.lease_loss_owners, '[]')::jsonb || to_jsonb(r.lease_owner))::text END,
  lease_owner = :owner,
  lease_token = r.lease_token + 1,
  lease_expires_at = :lease_expires_at::bigint,
  claim_after = :lease_expires_at::bigint,
  state_version = r.state_version + 1,
  waiting_reason = NULL,
  waiting_since = NULL,
  wake_at = NULL,
  updated_at = :now::bigint
FROM picked
WHERE r.id = picked.id
RETURNING r.*
