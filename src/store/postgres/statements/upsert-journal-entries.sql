-- Writes journal entries (effects' states at their positions), replacing the previous state of each position.
-- Params: :run_id, :lease_token, :entries (JSON array of objects with the journal columns). One round trip per commit.
INSERT INTO journal (run_id, seq, kind, name, status, args, result, error, execution_id, effect_class, attempts,
                     lease_token, worker, queued_at, started_at, ended_at, deadline_at)
SELECT :run_id, e.seq, e.kind, e.name, e.status, e.args, e.result, e.error, e.execution_id, e.effect_class, e.attempts,
       :lease_token::bigint, e.worker, e.queued_at, e.started_at, e.ended_at, e.deadline_at
FROM jsonb_to_recordset(:entries::jsonb) AS e(seq int, kind text, name text, status text, args text, result text, error text,
     execution_id text, effect_class text, attempts int, worker text, queued_at bigint, started_at bigint, ended_at bigint, deadline_at bigint)
ON CONFLICT (run_id, seq) DO UPDATE SET
  status = excluded.status, args = excluded.args, result = excluded.result, error = excluded.error,
  execution_id = excluded.execution_id, effect_class = excluded.effect_class, attempts = excluded.attempts,
  lease_token = excluded.lease_token, worker = excluded.worker, queued_at = excluded.queued_at, started_at = excluded.started_at,
  ended_at = excluded.ended_at, deadline_at = excluded.deadline_at
