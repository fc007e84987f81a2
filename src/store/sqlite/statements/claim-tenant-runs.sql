-- Claims up to :limit claimable runs of one tenant (the fair order across tenants is decided by the caller, see
-- src/domain/fair-share.ts): queued runs, waiting runs whose timer is due, cancelling runs nobody holds, of the
-- served agent versions. Interactive before batch with aging: a batch run counts as due :batch_aging_ms later than
-- it is; then the run due first (due_at: its deadline, else its admission, src/domain/run-order.ts), never the one
-- that became claimable first, so a run re-queued after a wait keeps its place. Each claim increments the fencing
-- token and the state version.
-- Params: :owner, :now, :lease_expires_at, :served (JSON array of agent@version), :tenant_id, :limit, :batch_aging_ms,
--         :claimable_statuses (JSON array: the statuses the transition table lets `claim` leave).
-- Returns the claimed rows as they are after the claim.
UPDATE runs SET
  status = CASE status WHEN 'cancelling' THEN 'cancelling' ELSE 'running' END,
  -- A claim over a lease that was never released (it expired: the holder died or stalled) is a lost lease.
  lease_losses = lease_losses + (lease_owner IS NOT NULL),
  lease_loss_owners = CASE WHEN lease_owner IS NULL THEN lease_loss_owners
    ELSE json_insert(coalesce(lease_loss_owners, '[]'), '$[#]', lease_owner) END,
  lease_owner = :owner,
  lease_token = lease_token + 1,
  attempts = attempts + 1,  -- each claim that takes the lease starts an attempt (see run_attempts)
  lease_expires_at = :lease_expires_at,
  claim_after = :lease_expires_at,
  state_version = state_version + 1,
  waiting_reason = NULL,
  waiting_since = NULL,
  wake_at = NULL,
  updated_at = :now
WHERE id IN (
  SELECT id FROM (
    SELECT id, due_at AS k FROM (
      SELECT id, due_at FROM runs INDEXED BY runs_due_claim
      WHERE tenant_id = :tenant_id AND priority_rank = 0 AND claim_after IS NOT NULL AND claim_after <= :now
        AND status IN (SELECT value FROM json_each(:claimable_statuses))
        AND agent_key IN (SELECT value FROM json_each(:served))
        AND lease_losses = 0 AND lease_owner IS NULL  -- suspects (a lost lease, or one expiring now) are claimed apart
      ORDER BY due_at LIMIT :limit)
    UNION ALL
    SELECT id, due_at + :batch_aging_ms AS k FROM (
      SELECT id, due_at FROM runs INDEXED BY runs_due_claim
      WHERE tenant_id = :tenant_id AND priority_rank = 1 AND claim_after IS NOT NULL AND claim_after <= :now
        AND status IN (SELECT value FROM json_each(:claimable_statuses))
        AND agent_key IN (SELECT value FROM json_each(:served))
        AND lease_losses = 0 AND lease_owner IS NULL
      ORDER BY due_at LIMIT :limit)
  )
  ORDER BY k LIMIT :limit
)
RETURNING *
