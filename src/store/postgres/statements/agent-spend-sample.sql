-- Spend admission's rolling average (src/api/spend-admission.ts): the model spend of the agent's latest successful
-- runs, newest first by end (index runs_agent_ended), up to :limit of them.
-- Params: :agent, :limit. Returns one row: runs (how many were averaged), tokens and cost_usd (averages; 0 when none).
SELECT count(*) AS runs, COALESCE(avg(tokens), 0) AS tokens, COALESCE(avg(cost_usd), 0) AS cost_usd
FROM (
  SELECT input_tokens + output_tokens AS tokens, cost_usd FROM runs
  WHERE agent = :agent AND ended_at IS NOT NULL AND status = 'succeeded'
  ORDER BY ended_at DESC LIMIT :limit::int
) latest
