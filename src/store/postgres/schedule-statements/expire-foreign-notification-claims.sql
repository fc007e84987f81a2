-- Frees every notification claim not held by :owner (see expire-foreign-schedule-claims.sql).
-- Params: :owner. Result: the rows freed.
UPDATE schedule_notifications SET claim_owner = NULL, claim_expires_at = NULL
WHERE claim_owner IS NOT NULL AND claim_owner <> :owner::text
RETURNING id
