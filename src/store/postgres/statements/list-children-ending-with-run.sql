-- The live children an ending run must cancel in its own end's transaction that its journal does not name: those
-- started through the API with its delegated token and on_parent_end 'cancel' (0037). A child already cancelling or
-- ended is left out (nothing is cancelled twice). Params: :parent_run_id, :statuses (JSON array: the statuses a cancel
-- request moves). Returns ids, oldest id first.
SELECT id FROM runs
WHERE parent_run_id = :parent_run_id::text AND on_parent_end = 'cancel'
  AND status IN (SELECT jsonb_array_elements_text(:statuses::jsonb))
ORDER BY id
