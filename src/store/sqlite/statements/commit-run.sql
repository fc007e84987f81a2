-- The guarded write of one commit: applies only if the run still has the committer's fencing token and the
-- state version it last saw. Bumps the state version and reserves :event_count event sequence numbers.
-- Params: see the column list; :set_* flags (0/1) say which optional fields the commit sets.
-- Returns state_version, status and first_seq, or no row when the commit is stale.
UPDATE runs SET
  status = CASE WHEN :set_status THEN :status ELSE status END,
  result = CASE WHEN :set_result THEN :result ELSE result END,
  error = CASE WHEN :set_error THEN :error ELSE error END,
  outcome = CASE WHEN :set_outcome THEN :outcome ELSE outcome END,
  compensation = CASE WHEN :set_compensation THEN :compensation ELSE compensation END,
  waiting_reason = CASE WHEN :set_waiting THEN :waiting_reason ELSE waiting_reason END,
  -- waiting_since moves only when the reason does (set from none, or to another reason); cleared with it.
  waiting_since = CASE WHEN :set_waiting THEN (CASE WHEN :waiting_reason IS NULL THEN NULL
    WHEN waiting_reason IS :waiting_reason AND waiting_since IS NOT NULL THEN waiting_since ELSE :now END) ELSE waiting_since END,
  progress = CASE WHEN :set_progress THEN :progress ELSE progress END,
  -- a stall is cleared by the commit that reports it over, and by the run's end.
  stalled = CASE WHEN :set_stalled THEN :stalled WHEN :terminal THEN NULL ELSE stalled END,
  wake_at = CASE WHEN :set_wake_at THEN :wake_at ELSE wake_at END,
  steps = steps + :d_steps,
  input_tokens = input_tokens + :d_input_tokens,
  output_tokens = output_tokens + :d_output_tokens,
  cost_usd = cost_usd + :d_cost_usd,
  lease_owner = CASE WHEN :release THEN NULL ELSE lease_owner END,
  lease_expires_at = CASE WHEN :release THEN NULL ELSE lease_expires_at END,
  claim_after = CASE WHEN :set_claim_after THEN :claim_after ELSE claim_after END,
  state_version = state_version + 1,
  lease_losses = 0, lease_loss_owners = NULL,  -- a commit is progress: the run is not poison
  next_event_seq = next_event_seq + :event_count,
  updated_at = :now,
  ended_at = CASE WHEN :terminal THEN :now ELSE ended_at END
WHERE id = :id AND lease_token = :lease_token AND state_version = :expected_state_version
RETURNING state_version, status, next_event_seq - :event_count AS first_seq
