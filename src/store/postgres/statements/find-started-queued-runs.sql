-- The tenant's queued runs of one agent version that have started (a journal entry: handed back, recovered, woken),
-- up to :limit of them, with how many there are: a version migration leaves them on the code that started them.
-- Params: :tenant_id, :agent, :agent_version, :limit. Returns id, total.
SELECT r.id, count(*) OVER () AS total FROM runs r
WHERE r.tenant_id = :tenant_id AND r.status = 'queued' AND r.ended_at IS NULL
  AND r.agent = :agent AND r.agent_version = :agent_version
  AND EXISTS (SELECT 1 FROM journal j WHERE j.run_id = r.id)
ORDER BY r.id LIMIT :limit::int
