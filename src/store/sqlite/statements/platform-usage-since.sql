-- Model spend of every tenant since a time (the platform-wide daily caps): tokens (input + output) and USD of the
-- committed model effects that ended at or after :since. Reads journal_model_by_end (today's model effects).
-- Params: :since (ms). Returns one row: tokens, cost_usd (0 when nothing was spent).
SELECT COALESCE(SUM(json_extract(j.result, '$.usage.inputTokens') + json_extract(j.result, '$.usage.outputTokens')), 0) AS tokens,
       COALESCE(SUM(json_extract(j.result, '$.usage.costUsd')), 0) AS cost_usd
FROM journal j INDEXED BY journal_model_by_end
WHERE j.kind = 'model' AND j.status = 'succeeded' AND j.ended_at >= :since
