-- The guarded write of an effect's commit that changes only counters and events (a step, model or tool result):
-- the common case, kept lean so it rewrites no indexed column. Same guard and result as commit-run.
-- Params: :id, :lease_token, :expected_state_version, :d_steps, :d_input_tokens, :d_output_tokens, :d_cost_usd,
--         :event_count, :now. Returns state_version, status and first_seq, or no row when the commit is stale.
UPDATE runs SET
  steps = steps + :d_steps::bigint,
  input_tokens = input_tokens + :d_input_tokens::bigint,
  output_tokens = output_tokens + :d_output_tokens::bigint,
  cost_usd = cost_usd + :d_cost_usd::double precision,
  state_version = state_version + 1,
  lease_losses = 0, lease_loss_owners = NULL,  -- a commit is progress: the run is not poison
  next_event_seq = next_event_seq + :event_count::bigint,
  updated_at = :now::bigint
WHERE id = :id AND lease_token = :lease_token::bigint AND state_version = :expected_state_version::bigint
RETURNING state_version, status, next_event_seq - :event_count::bigint AS first_seq
