-- Claims pending approval notifications that are due and not claimed by a live deliverer.
-- Params: :owner, :now, :lease_expires_at, :limit. Result: the claimed rows.
UPDATE approval_notifications SET claim_owner = :owner, claim_token = claim_token + 1, claim_expires_at = :lease_expires_at
WHERE id IN (
  SELECT id FROM approval_notifications
  WHERE status = 'pending' AND next_attempt_at <= :now AND (claim_expires_at IS NULL OR claim_expires_at <= :now)
  ORDER BY next_attempt_at
  LIMIT :limit
)
RETURNING *
