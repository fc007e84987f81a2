-- Extends the leases the owner still holds. Params: :owner, :ids (JSON array), :lease_expires_at.
-- Returns id, status, state_version, cancel_grace_ms of each run still held; a missing id means the lease was lost.
UPDATE runs SET lease_expires_at = :lease_expires_at, claim_after = :lease_expires_at
WHERE lease_owner = :owner AND id IN (SELECT value FROM json_each(:ids)) AND status IN ('running', 'cancelling')
RETURNING id, status, state_version, cancel_grace_ms
