-- Changes a tenant's quotas: each field is set only when its set_ flag is 1 (a NULL limit means unlimited).
-- Params: :id, :set_weight, :weight, :set_max_concurrent_runs, :max_concurrent_runs, :set_max_queued_runs,
--         :max_queued_runs, :now. Returns the updated tenant row, or nothing when there is no such tenant.
UPDATE tenants SET
  weight = CASE WHEN :set_weight = 1 THEN :weight ELSE weight END,
  max_concurrent_runs = CASE WHEN :set_max_concurrent_runs = 1 THEN :max_concurrent_runs ELSE max_concurrent_runs END,
  max_queued_runs = CASE WHEN :set_max_queued_runs = 1 THEN :max_queued_runs ELSE max_queued_runs END,
  updated_at = :now
WHERE id = :id
RETURNING id, name, created_at, weight, max_concurrent_runs, max_queued_runs
