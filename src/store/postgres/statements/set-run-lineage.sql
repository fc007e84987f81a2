-- Records where a new run came from (a rerun, or a reset/fork from a position) and what seeds its randomness.
-- Params: :id, :rerun_of (or NULL), :reset_from_run_id (or NULL), :reset_from_position (or NULL), :random_seed (or NULL).
-- Returns the run row.
UPDATE runs SET
  rerun_of = :rerun_of::text,
  reset_from_run_id = :reset_from_run_id::text,
  reset_from_position = :reset_from_position::int,
  random_seed = :random_seed::text
WHERE id = :id
RETURNING *
