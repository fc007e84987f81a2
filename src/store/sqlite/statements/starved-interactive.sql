-- Interactive runs starved of a run slot: claimable (what claim-runs.sql would take: queued, timer due, cancelling
-- unheld; of the served agent versions; suspects excluded) since :cutoff or earlier, of tenants under their
-- concurrency cap (a capped tenant's run would not take a freed slot: preempting for it would only churn).
-- One range of index runs_claimable (priority_rank, claim_after), at most :limit rows: cheap enough for every
-- claim loop of every worker to ask periodically.
-- Params: :cutoff, :served (JSON array of agent@version), :claimable_statuses (JSON array), :limit.
-- Returns starved (at most :limit), oldest_since (NULL when none).
SELECT count(*) AS starved, min(claim_after) AS oldest_since FROM (
  SELECT r.claim_after FROM runs r INDEXED BY runs_claimable
  LEFT JOIN tenants t ON t.id = r.tenant_id
  WHERE r.priority_rank = 0 AND r.claim_after IS NOT NULL AND r.claim_after <= :cutoff
    AND r.status IN (SELECT value FROM json_each(:claimable_statuses))
    AND r.agent_key IN (SELECT value FROM json_each(:served))
    AND r.lease_losses = 0 AND r.lease_owner IS NULL
    AND (t.max_concurrent_runs IS NULL OR t.max_concurrent_runs > (
      SELECT count(*) FROM runs x
      WHERE x.tenant_id = r.tenant_id AND x.ended_at IS NULL AND x.status IN ('running', 'cancelling') AND x.lease_owner IS NOT NULL))
  ORDER BY r.claim_after LIMIT :limit
)
