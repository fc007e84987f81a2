-- Queued runs of every tenant by the agent version they are pinned to (index runs_live): what a process warns about at
-- start when it serves none of a version. Params: none. Returns agent, agent_version, runs.
SELECT agent, agent_version, count(*) AS runs FROM runs
WHERE status = 'queued' AND ended_at IS NULL
GROUP BY agent, agent_version ORDER BY agent, agent_version
