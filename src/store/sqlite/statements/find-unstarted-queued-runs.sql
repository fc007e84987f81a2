-- The tenant's queued runs of one agent version that never started (no journal entry), oldest id first, up to :limit
-- (index runs_live): the runs a version migration may move.
-- Params: :tenant_id, :agent, :agent_version, :limit. Returns id.
SELECT r.id FROM runs r
WHERE r.tenant_id = :tenant_id AND r.status = 'queued' AND r.ended_at IS NULL
  AND r.agent = :agent AND r.agent_version = :agent_version
  AND NOT EXISTS (SELECT 1 FROM journal j WHERE j.run_id = r.id)
ORDER BY r.id LIMIT :limit
