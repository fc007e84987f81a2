-- Ends as released the owner's running attempts of these runs: their leases were handed back without progress
-- (shutdown, or a claim returned unused). Params: :owner, :ids (JSON array), :now.
UPDATE run_attempts SET ending = 'released', ended_at = :now::bigint
WHERE worker = :owner AND run_id IN (SELECT jsonb_array_elements_text(:ids::jsonb)) AND ending = 'running'
