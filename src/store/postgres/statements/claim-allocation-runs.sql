-- Claims, for each tenant in :allocation, up to its count of claimable runs (the fair order across tenants is decided
-- by the caller, see src/domain/fair-share.ts): queued runs, waiting runs whose timer is due, cancelling runs
-- nobody holds, of the served agent versions. Inside a tenant: interactive before batch with aging (a batch run counts
-- as due :batch_aging_ms later than it is), then the run due first (due_at: its deadline, else its admission,
-- src/domain/run-order.ts), never the one that became claimable first. Concurrent claimers skip each other's
-- rows (FOR UPDATE SKIP LOCKED). Each claim increments the fencing token and the state version.
-- Params: :owner, :now, :lease_expires_at, :served (JSON array of agent@version),
--         :allocation (JSON array of {"tenant_id", "n"}), :batch_aging_ms, :claimable_statuses (JSON array: the statuses the
--         transition table lets `claim` leave).
-- Returns the claimed rows as they are after the claim.
WITH allocation AS (
  SELECT * FROM jsonb_to_recordset(:allocation::jsonb) AS a(tenant_id text, n int)
),
candidates AS (
  SELECT p.id FROM allocation a CROSS JOIN LATERAL (
    (SELECT id, due_at AS k FROM runs
      WHERE tenant_id = a.tenant_id AND priority_rank = 0 AND claim_after IS NOT NULL AND claim_after <= :now::bigint
        AND status IN (SELECT jsonb_array_elements_text(:claimable_statuses::jsonb))
        AND agent_key IN (SELECT jsonb_array_elements_text(:served::jsonb))
        AND lease_losses = 0 AND lease_owner IS NULL  -- suspects (a lost lease, or one expiring now) are claimed apart
      ORDER BY due_at LIMIT a.n)
    UNION ALL
    (SELECT id, due_at + :batch_aging_ms::bigint AS k FROM runs
      WHERE tenant_id = a.tenant_id AND priority_rank = 1 AND claim_after IS NOT NULL AND claim_after <= :now::bigint
        AND status IN (SELECT jsonb_array_elements_text(:claimable_statuses::jsonb))
        AND agent_key IN (SELECT jsonb_array_elements_text(:served::jsonb))
        AND lease_losses = 0 AND lease_owner IS NULL
      ORDER BY due_at LIMIT a.n)
    ORDER BY k LIMIT a.n
  ) p
),
picked AS (
  -- Re-checked under the row lock: a row changed since the candidates were read is claimed only if still claimable.
  SELECT id FROM runs
  WHERE id IN (SELECT id FROM candidates) AND claim_after <= :now::bigint AND lease_losses = 0 AND lease_owner IS NULL
    AND status IN (SELECT jsonb_array_elements_text(:claimable_statuses::jsonb))
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
  attempts = r.attempts + 1,  -- each claim that takes the lease starts an attempt (see run_attempts)
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
