-- What deadline-aware admission measures for an agent (src/domain/admission.ts): its unfinished runs (queued or
-- running) due no later than a new run (index runs_agent_live_due; counted up to :ahead_max), and its runs that
-- succeeded since :since with the shortest of them, admission to end (index runs_agent_ended).
-- Params: :agent, :due_at, :since, :ahead_max. Returns ahead, completed, fastest_ms (NULL when none ended).
SELECT
  (SELECT count(*) FROM (
    SELECT 1 FROM runs WHERE agent = :agent AND ended_at IS NULL AND due_at <= :due_at::bigint
      AND status IN ('queued', 'running')
    LIMIT :ahead_max::bigint) a) AS ahead,
  count(*) AS completed,
  min(ended_at - created_at) AS fastest_ms
FROM runs WHERE agent = :agent AND ended_at IS NOT NULL AND ended_at >= :since::bigint AND status = 'succeeded'
