-- Which of these runs the owner still holds (for runs a heartbeat did not extend).
-- Params: :owner, :ids (JSON array). Returns id, status, state_version.
SELECT id, status, state_version FROM runs
WHERE lease_owner = :owner AND id IN (SELECT value FROM json_each(:ids)) AND status IN ('running', 'cancelling')
