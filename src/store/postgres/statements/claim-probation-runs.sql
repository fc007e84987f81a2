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
WITH picked AS (
  SELECT id, lease_losses + (CASE WHEN lease_owner IS NULL THEN 0 ELSE 1 END) AS losses FROM runs
  WHERE claim_after IS NOT NULL AND claim_after <= :now::bigint
    AND status IN (SELECT jsonb_array_elements_text(:claimable_statuses::jsonb))
    AND agent_key IN (SELECT jsonb_array_elements_text(:served::jsonb))
    AND (lease_losses > 0 OR lease_owner IS NOT NULL)
  ORDER BY lease_losses + (CASE WHEN lease_owner IS NULL THEN 0 ELSE 1 END) DESC, priority_rank, claim_after
  LIMIT :limit::int
  FOR UPDATE SKIP LOCKED
)
UPDATE runs r SET
  status = CASE
    WHEN r.status = 'cancelling' THEN 'cancelling'
    WHEN picked.losses = :held_at_losses::int THEN 'queued'
    ELSE 'running' END,
  -- A claim over a lease that was never released (it expired: the holder died or stalled) is a lost lease.
  lease_losses = picked.losses,
  lease_loss_owners = CASE WHEN r.lease_owner IS NULL THEN r.lease_loss_owners
    ELSE (coalesce(r.lease_loss_owners, '[]')::jsonb || to_jsonb(r.lease_owner))::text END,
  lease_owner = CASE WHEN picked.losses = :held_at_losses::int THEN NULL ELSE :owner END,
  lease_token = r.lease_token + 1,
  -- Every expired lease, never reset (lease_losses is the poison counter: a commit resets it), and when the one taken
  -- over here had expired (null: none), for the attempt it ended. A suspect held back takes no lease: no attempt.
  lease_expiries = r.lease_expiries + (CASE WHEN r.lease_owner IS NULL THEN 0 ELSE 1 END),
  lease_expired_at = CASE WHEN r.lease_owner IS NOT NULL THEN r.lease_expires_at ELSE NULL END,
  attempts = r.attempts + (CASE WHEN picked.losses = :held_at_losses::int THEN 0 ELSE 1 END),
  lease_expires_at = CASE WHEN picked.losses = :held_at_losses::int THEN NULL
    ELSE :lease_expires_at::bigint END,
  claim_after = CASE WHEN picked.losses = :held_at_losses::int THEN :now::bigint
    ELSE :lease_expires_at::bigint END,
  state_version = r.state_version + 1,
  waiting_reason = NULL,
  waiting_since = NULL,
  wake_at = NULL,
  updated_at = :now::bigint
FROM picked
WHERE r.id = picked.id
RETURNING r.*
