-- Claims up to :limit runs on probation: claimable runs that lost a lease (it expired unreleased: their holder died
-- or stalled) since their last commit, or are losing one now, the most suspicious first. Workers run them apart from
-- ordinary claims so that the blame for a crash falls on few runs. Each claim over an unreleased lease counts one more
-- loss. A suspect whose count reaches :held_at_losses (its last chance, for a worker not alone now) has its loss
-- counted but takes no lease: it comes back queued, claimable at once, with no lease that could be lost beside other
-- runs; the worker drains and claims it again to run it alone.
-- Params: :owner, :now, :lease_expires_at, :served (JSON array of agent@version), :limit,
--         :claimable_statuses (JSON array: the statuses the transition table lets `claim` leave),
--         :held_at_losses (integer, or NULL: lease every suspect).
-- Returns the claimed rows as they are after the claim.
UPDATE runs SET
  status = CASE
    WHEN status = 'cancelling' THEN 'cancelling'
    WHEN lease_losses + (lease_owner IS NOT NULL) = :held_at_losses THEN 'queued'
    ELSE 'running' END,
  -- A claim over a lease that was never released (it expired: the holder died or stalled) is a lost lease.
  lease_losses = lease_losses + (lease_owner IS NOT NULL),
  lease_loss_owners = CASE WHEN lease_owner IS NULL THEN lease_loss_owners
    ELSE json_insert(coalesce(lease_loss_owners, '[]'), '$[#]', lease_owner) END,
  lease_owner = CASE WHEN lease_losses + (lease_owner IS NOT NULL) = :held_at_losses THEN NULL ELSE :owner END,
  lease_token = lease_token + 1,
  -- Every expired lease, never reset (lease_losses is the poison counter: a commit resets it), and when the one taken
  -- over here had expired (null: none), for the attempt it ended. A suspect held back takes no lease: no attempt.
  lease_expiries = lease_expiries + (lease_owner IS NOT NULL),
  lease_expired_at = CASE WHEN lease_owner IS NOT NULL THEN lease_expires_at ELSE NULL END,
  attempts = attempts + (lease_losses + (lease_owner IS NOT NULL) IS NOT :held_at_losses),
  lease_expires_at = CASE WHEN lease_losses + (lease_owner IS NOT NULL) = :held_at_losses THEN NULL
    ELSE :lease_expires_at END,
  claim_after = CASE WHEN lease_losses + (lease_owner IS NOT NULL) = :held_at_losses THEN :now
    ELSE :lease_expires_at END,
  state_version = state_version + 1,
  waiting_reason = NULL,
  waiting_since = NULL,
  wake_at = NULL,
  updated_at = :now
WHERE id IN (
  SELECT id FROM runs
  WHERE claim_after IS NOT NULL AND claim_after <= :now
    AND status IN (SELECT value FROM json_each(:claimable_statuses))
    AND agent_key IN (SELECT value FROM json_each(:served))
    AND (lease_losses > 0 OR lease_owner IS NOT NULL)
  ORDER BY lease_losses + (lease_owner IS NOT NULL) DESC, priority_rank, claim_after
  LIMIT :limit
)
RETURNING *
