-- Frees every schedule claim not held by :owner: only for a store this process owns alone (a dead predecessor's
-- claims are taken back at once instead of waiting for their lease to expire).
-- Params: :owner. Result: the rows freed.
UPDATE schedules SET claim_owner = NULL, claim_expires_at = NULL
WHERE claim_owner IS NOT NULL AND claim_owner <> :owner::text
RETURNING id
