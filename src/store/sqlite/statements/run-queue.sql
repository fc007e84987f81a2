-- The run queue: runs claimable now (what claim-runs.sql would take, whatever agent version), and since when the
-- oldest of them has been claimable (index runs_claimable).
-- Params: :now, :claimable_statuses (JSON array). Returns depth, oldest_since (NULL when the queue is empty).
SELECT count(*) AS depth, min(claim_after) AS oldest_since FROM runs
WHERE claim_after IS NOT NULL AND claim_after <= :now
  AND status IN (SELECT value FROM json_each(:claimable_statuses))
