-- Which of these runs the owner still holds, read without locks (for runs a heartbeat skipped while a commit wrote
-- them). Params: :owner, :ids (JSON array). Returns id, status, state_version.
SELECT id, status, state_version FROM runs
WHERE lease_owner = :owner AND id IN (SELECT jsonb_array_elements_text(:ids::jsonb)) AND status IN ('running', 'cancelling')
