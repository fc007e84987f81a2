-- Ends as released the owner's running attempts of these runs: their leases were handed back without progress
-- (shutdown, or a claim returned unused). Params: :owner, :ids (JSON array), :now.
UPDATE run_attempts SET ending = 'released', ended_at = :now
WHERE worker = :owner AND run_id IN (SELECT value FROM json_each(:ids)) AND ending = 'running'
