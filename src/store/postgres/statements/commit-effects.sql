-- Many effect commits (each changing only counters, journal and events, each for a different run) in one round
-- trip: the guarded UPDATE joins the commits; the journal upserts and event inserts join the UPDATE's rows, so a
-- stale commit (guard not met) writes nothing and is simply absent from the result.
-- Params: :now, :commits (JSON array of {idx, id, lease_token, expected_state_version, d_steps, d_input_tokens,
--         d_output_tokens, d_cost_usd, entries: [journal rows], events: [{type, data}]}); at most one per run.
-- Rows are locked in id order first (like every multi-run write), so two multi-row writes can never deadlock.
-- Returns idx, state_version and status of each commit that applied.
WITH input AS (
  SELECT * FROM jsonb_to_recordset(:commits::jsonb) AS c(idx int, id text, lease_token bigint, expected_state_version bigint,
    d_steps bigint, d_input_tokens bigint, d_output_tokens bigint, d_cost_usd double precision, entries jsonb, events jsonb)
), locked AS (
  SELECT r.id FROM runs r WHERE r.id IN (SELECT id FROM input) ORDER BY r.id FOR UPDATE
), guard AS (
  UPDATE runs r SET
    steps = r.steps + c.d_steps,
    input_tokens = r.input_tokens + c.d_input_tokens,
    output_tokens = r.output_tokens + c.d_output_tokens,
    cost_usd = r.cost_usd + c.d_cost_usd,
    state_version = r.state_version + 1,
    lease_losses = 0, lease_loss_owners = NULL,
    next_event_seq = r.next_event_seq + jsonb_array_length(c.events),
    updated_at = :now::bigint
  FROM input c
  WHERE r.id = c.id AND r.id IN (SELECT id FROM locked) AND r.lease_token = c.lease_token AND r.state_version = c.expected_state_version
  RETURNING c.idx, r.id, r.state_version, r.status, r.next_event_seq - jsonb_array_length(c.events) AS first_seq,
            c.lease_token, c.entries, c.events
), journal_rows AS (
  INSERT INTO journal (run_id, seq, kind, name, status, args, result, error, execution_id, effect_class, attempts,
                       lease_token, worker, queued_at, started_at, ended_at, deadline_at)
  SELECT g.id, e.seq, e.kind, e.name, e.status, e.args, e.result, e.error, e.execution_id, e.effect_class, e.attempts,
         g.lease_token, e.worker, e.queued_at, e.started_at, e.ended_at, e.deadline_at
  FROM guard g, jsonb_to_recordset(g.entries) AS e(seq int, kind text, name text, status text, args text, result text,
       error text, execution_id text, effect_class text, attempts int, worker text, queued_at bigint, started_at bigint, ended_at bigint, deadline_at bigint)
  ON CONFLICT (run_id, seq) DO UPDATE SET
    status = excluded.status, args = excluded.args, result = excluded.result, error = excluded.error,
    execution_id = excluded.execution_id, effect_class = excluded.effect_class, attempts = excluded.attempts,
    lease_token = excluded.lease_token, worker = excluded.worker, queued_at = excluded.queued_at, started_at = excluded.started_at,
    ended_at = excluded.ended_at, deadline_at = excluded.deadline_at
), event_rows AS (
  INSERT INTO events (run_id, seq, type, at, data)
  SELECT g.id, g.first_seq + e.ordinality - 1, e.value->>'type', :now::bigint, e.value->>'data'
  FROM guard g, jsonb_array_elements(g.events) WITH ORDINALITY AS e(value, ordinality)
)
SELECT idx, state_version, status FROM guard
