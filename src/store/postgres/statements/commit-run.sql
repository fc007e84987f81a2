-- The guarded write of one commit: applies only if the run still has the committer's fencing token and the
-- state version it last saw. Bumps the state version and reserves :event_count event sequence numbers.
-- Params: see the column list; :set_* flags (0/1) say which optional fields the commit sets.
-- Returns state_version, status and first_seq, or no row when the commit is stale.
UPDATE runs SET
  status = CASE WHEN :set_status::int = 1 THEN :status::text ELSE status END,
  result = CASE WHEN :set_result::int = 1 THEN :result::text ELSE result END,
  error = CASE WHEN :set_error::int = 1 THEN :error::text ELSE error END,
  outcome = CASE WHEN :set_outcome::int = 1 THEN :outcome::text ELSE outcome END,
  compensation = CASE WHEN :set_compensation::int = 1 THEN :compensation::text ELSE compensation END,
  waiting_reason = CASE WHEN :set_waiting::int = 1 THEN :waiting_reason::text ELSE waiting_reason END,
  -- waiting_since moves only when the reason does (set from none, or to another reason); cleared with it.
  waiting_since = CASE WHEN :set_waiting::int = 1 THEN (CASE WHEN :waiting_reason::text IS NULL THEN NULL
    WHEN waiting_reason IS NOT DISTINCT FROM :waiting_reason::text AND waiting_since IS NOT NULL THEN waiting_since ELSE :now::bigint END) ELSE waiting_since END,
  progress = CASE WHEN :set_progress::int = 1 THEN :progress::text ELSE progress END,
  -- a stall is cleared by the commit that reports it over, and by the run's end.
  stalled = CASE WHEN :set_stalled::int = 1 THEN :stalled::text WHEN :terminal::int = 1 THEN NULL ELSE stalled END,
  wake_at = CASE WHEN :set_wake_at::int = 1 THEN :wake_at::bigint ELSE wake_at END,
  steps = steps + :d_steps::bigint,
  input_tokens = input_tokens + :d_input_tokens::bigint,
  output_tokens = output_tokens + :d_output_tokens::bigint,
  cost_usd = cost_usd + :d_cost_usd::double precision,
  lease_owner = CASE WHEN :release::int = 1 THEN NULL ELSE lease_owner END,
  lease_expires_at = CASE WHEN :release::int = 1 THEN NULL ELSE lease_expires_at END,
  claim_after = CASE WHEN :set_claim_after::int = 1 THEN :claim_after::bigint ELSE claim_after END,
  state_version = state_version + 1,
  lease_losses = 0, lease_loss_owners = NULL,  -- a commit is progress: the run is not poison
  next_event_seq = next_event_seq + :event_count::bigint,
  updated_at = :now::bigint,
  ended_at = CASE WHEN :terminal::int = 1 THEN :now::bigint ELSE ended_at END
WHERE id = :id AND lease_token = :lease_token::bigint AND state_version = :expected_state_version::bigint
RETURNING state_version, status, next_event_seq - :event_count::bigint AS first_seq
