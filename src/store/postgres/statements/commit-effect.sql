-- The whole commit of an effect that changes only counters, journal and events (a step, model or tool result), in
-- one round trip: the guarded UPDATE, then the journal upsert and the event inserts, which join the guard's row and
-- so write nothing when the commit is stale.
-- Params: :id, :lease_token, :expected_state_version, :d_steps, :d_input_tokens, :d_output_tokens, :d_cost_usd,
--         :now, :entries (JSON array of journal rows), :events (JSON array of {type, data}).
-- Returns state_version, status and first_seq, or no row when the commit is stale.
WITH guard AS (
  UPDATE runs SET
    steps = steps + :d_steps::bigint,
    input_tokens = input_tokens + :d_input_tokens::bigint,
    output_tokens = output_tokens + :d_output_tokens::bigint,
    cost_usd = cost_usd + :d_cost_usd::double precision,
    state_version = state_version + 1,
    next_event_seq = next_event_seq + jsonb_array_length(:events::jsonb),
    updated_at = :now::bigint
  WHERE id = :id AND lease_token = :lease_token::bigint AND state_version = :expected_state_version::bigint
  RETURNING state_version, status, next_event_seq - jsonb_array_length(:events::jsonb) AS first_seq
), journal_rows AS (
  INSERT INTO journal (run_id, seq, kind, name, status, args, result, error, execution_id, effect_class, attempts,
                       lease_token, queued_at, started_at, ended_at, deadline_at)
  SELECT :id, e.seq, e.kind, e.name, e.status, e.args, e.result, e.error, e.execution_id, e.effect_class, e.attempts,
         :lease_token::bigint, e.queued_at, e.started_at, e.ended_at, e.deadline_at
  FROM guard, jsonb_to_recordset(:entries::jsonb) AS e(seq int, kind text, name text, status text, args text, result text,
       error text, execution_id text, effect_class text, attempts int, queued_at bigint, started_at bigint, ended_at bigint, deadline_at bigint)
  ON CONFLICT (run_id, seq) DO UPDATE SET
    status = excluded.status, args = excluded.args, result = excluded.result, error = excluded.error,
    execution_id = excluded.execution_id, effect_class = excluded.effect_class, attempts = excluded.attempts,
    lease_token = excluded.lease_token, queued_at = excluded.queued_at, started_at = excluded.started_at,
    ended_at = excluded.ended_at, deadline_at = excluded.deadline_at
), event_rows AS (
  INSERT INTO events (run_id, seq, type, at, data)
  SELECT :id, guard.first_seq + e.ordinality - 1, e.value->>'type', :now::bigint, e.value->>'data'
  FROM guard, jsonb_array_elements(:events::jsonb) WITH ORDINALITY AS e(value, ordinality)
)
SELECT state_version, status, first_seq FROM guard
