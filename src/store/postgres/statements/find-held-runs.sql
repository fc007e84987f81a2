-- Which of these runs the owner still holds, read without locks (for runs a heartbeat skipped while a commit wrote
-- them). Params: :owner, :ids (JSON array). Returns id, status, state_version, cancel_grace_ms.
SELECT id, status, state_version, cancel_grace_ms FROM runs
WHERE lease_owner = :owner AND id IN (SELECT jsonb_array_elements_text(:ids::jsonb)) AND status IN ('running', 'cancelling')
