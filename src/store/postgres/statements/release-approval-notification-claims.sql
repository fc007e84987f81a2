-- Frees every approval-notification claim held by another owner. Only safe when this process owns the store alone.
-- Params: :owner. Result: the freed ids.
UPDATE approval_notifications SET claim_owner = NULL, claim_expires_at = NULL
WHERE status = 'pending' AND claim_owner IS NOT NULL AND claim_owner <> :owner::text
RETURNING id
