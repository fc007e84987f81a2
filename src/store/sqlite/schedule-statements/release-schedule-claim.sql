-- Gives a claim up without a commit (a pass that failed), so the next tick may try again at once.
-- Params: :id, :owner, :token. Result: a row if the claim was still held.
UPDATE schedules SET claim_owner = NULL, claim_expires_at = NULL
WHERE id = :id AND claim_owner = :owner AND claim_token = :token
RETURNING id
