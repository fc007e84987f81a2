-- Many effect commits (each changing only counters, journal and events, each for a different run) as one statement,
-- which is also a whole transaction on its own: run outside BEGIN/COMMIT it commits in ONE round trip (the write
-- queue does that when a batch holds nothing else). The guarded UPDATE joins the commits; the journal upserts and
-- event inserts join the UPDATE's rows, so a stale commit (guard not met) writes nothing: it is audited instead
-- (`stale_commit`, with what the run holds now) and returned with applied = false. With :channel set, the changes
-- are announced with pg_notify (`{origin, changes}` in chunks of 60, the write queue's format), delivered if the
-- statement's transaction commits; with :channel null the enclosing transaction announces them.
-- Params: :now, :channel, :origin, :commits (JSON array of {idx, id, lease_token, expected_state_version, d_steps,
--         d_input_tokens, d_output_tokens, d_cost_usd, entries: [journal rows], events: [{type, data}]}); at most one
--         per run.
-- Rows are locked in id order first (like every multi-run write), so two multi-row writes can never deadlock; the
-- lock returns each run's newest committed state, which is what a stale commit's audit records.
-- Returns idx and applied of each commit: state_version and status if it applied, else current_lease_token,
-- current_state_version and current_status (null for a run that does not exist). Extra rows with a null idx (the
-- notifications) are to be ignored.
-- To add a column written by an effect commit: add it to the commit's JSON (postgres-store.ts #commitEffects) and to
-- the recordset and INSERT/UPDATE below.
WITH input AS (
  SELECT * FROM jsonb_to_recordset(:commits::jsonb) AS c(idx int, id text, lease_token bigint, expected_state_version bigint,
    d_steps bigint, d_input_tokens bigint, d_output_tokens bigint, d_cost_usd double precision, entries jsonb, events jsonb)
), locked AS (
  SELECT r.id, r.tenant_id, r.lease_token, r.state_version, r.status FROM runs r
  WHERE r.id IN (SELECT id FROM input) ORDER BY r.id FOR UPDATE
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
), stale AS (
  SELECT c.idx, c.id, c.lease_token, c.expected_state_version, c.entries,
         l.tenant_id, l.lease_token AS current_lease_token, l.state_version AS current_state_version, l.status AS current_status
  FROM input c LEFT JOIN locked l ON l.id = c.id
  WHERE c.idx NOT IN (SELECT idx FROM guard)
), stale_audit AS (
  INSERT INTO audit (tenant_id, run_id, at, kind, resource, data)
  SELECT s.tenant_id, s.id, :now::bigint, 'stale_commit', 'run:' || s.id,
         json_build_object('leaseToken', s.lease_token, 'expectedStateVersion', s.expected_state_version,
           'currentLeaseToken', s.current_lease_token, 'currentStateVersion', s.current_state_version,
           'currentStatus', s.current_status,
           'journal', (SELECT coalesce(json_agg(json_build_object('seq', j.value->'seq', 'kind', j.value->'kind',
                                                'name', j.value->'name', 'status', j.value->'status') ORDER BY j.n), '[]'::json)
                       FROM jsonb_array_elements(s.entries) WITH ORDINALITY AS j(value, n)))::text
  FROM stale s ORDER BY s.idx
), announced AS (
  SELECT pg_notify(:channel::text, json_build_object('origin', :origin::text,
           'changes', json_agg(json_build_object('runId', a.id, 'signal', 'events') ORDER BY a.n))::text) AS sent
  FROM (SELECT g.id, row_number() OVER (ORDER BY g.idx) - 1 AS n FROM guard g WHERE jsonb_array_length(g.events) > 0) a
  WHERE :channel::text IS NOT NULL
  GROUP BY a.n / 60
)
SELECT idx, true AS applied, state_version, status,
       NULL::bigint AS current_lease_token, NULL::bigint AS current_state_version, NULL::text AS current_status
FROM guard
UNION ALL
SELECT idx, false, NULL, NULL, current_lease_token, current_state_version, current_status FROM stale
UNION ALL
SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM announced
