-- Writes one journal entry (an effect's state at its position), replacing the previous state of that position.
-- Params: every column below.
INSERT INTO journal (run_id, seq, kind, name, status, args, result, error, execution_id, effect_class, attempts,
                     lease_token, worker, queued_at, started_at, ended_at, deadline_at)
VALUES (:run_id, :seq, :kind, :name, :status, :args, :result, :error, :execution_id, :effect_class, :attempts,
        :lease_token, :worker, :queued_at, :started_at, :ended_at, :deadline_at)
ON CONFLICT (run_id, seq) DO UPDATE SET
  status = excluded.status, args = excluded.args, result = excluded.result, error = excluded.error,
  execution_id = excluded.execution_id, effect_class = excluded.effect_class, attempts = excluded.attempts,
  lease_token = excluded.lease_token, worker = excluded.worker, queued_at = excluded.queued_at, started_at = excluded.started_at,
  ended_at = excluded.ended_at, deadline_at = excluded.deadline_at
