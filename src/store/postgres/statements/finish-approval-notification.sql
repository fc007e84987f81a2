-- Records one delivery attempt, only while the deliverer holds the claim.
-- Params: :id, :token, :status, :next_attempt_at, :last_error, :delivered_at. Result: a row if the claim was held.
UPDATE approval_notifications SET
  status = :status::text, attempts = attempts + 1, next_attempt_at = :next_attempt_at::bigint,
  last_error = :last_error::text, delivered_at = :delivered_at::bigint, claim_owner = NULL, claim_expires_at = NULL
WHERE id = :id::text AND claim_token = :token::bigint AND status = 'pending'
RETURNING id
