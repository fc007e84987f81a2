-- Records one delivery attempt, only while the deliverer holds the claim.
-- Params: :id, :token, :status, :next_attempt_at, :last_error, :delivered_at. Result: a row if the claim was held.
UPDATE approval_notifications SET
  status = :status, attempts = attempts + 1, next_attempt_at = :next_attempt_at, last_error = :last_error,
  delivered_at = :delivered_at, claim_owner = NULL, claim_expires_at = NULL
WHERE id = :id AND claim_token = :token AND status = 'pending'
RETURNING id
