-- Claims a run's archival when its claim is free or expired and it is not fully archived; each claim gets a new
-- fencing token. A concurrent claimer waits for the row lock, then finds the claim taken and gets no row.
-- Params: :run_id, :owner, :now, :expires_at. Result: the claimed row, or none.
UPDATE run_archives SET claim_owner = :owner, claim_token = claim_token + 1, claim_expires_at = :expires_at
WHERE run_id = :run_id AND pruned_at IS NULL AND (claim_expires_at IS NULL OR claim_expires_at <= :now)
RETURNING *
