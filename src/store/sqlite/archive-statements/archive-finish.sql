-- Ends an archival pass over a run: counts the rows removed, marks it archived when :complete (1), frees the claim;
-- guarded by the claim's token. Params: :run_id, :token, :journal_pruned, :events_pruned, :complete, :now.
-- Result: changed rows.
UPDATE run_archives SET journal_pruned = journal_pruned + :journal_pruned, events_pruned = events_pruned + :events_pruned,
  pruned_at = CASE WHEN :complete = 1 THEN :now ELSE pruned_at END,
  claim_owner = NULL, claim_expires_at = NULL
WHERE run_id = :run_id AND claim_token = :token
