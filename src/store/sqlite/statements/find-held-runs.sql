-- Which of these runs the owner still holds (for runs a heartbeat did not extend).
-- Params: :owner, :ids (JSON array). Returns id, status, state_version, cancel_grace_ms.
SELECT id, status, state_version, cancel_grace_ms FROM runs
WHERE lease_owner = :owner AND id IN (SELECT value FROM json_each(:ids)) AND status IN ('running', 'cancelling')
