-- Sets a tenant's retention override (null: the platform default for that dimension).
-- Params: :tenant_id, :keep_days, :keep_runs, :now. Result: the row.
INSERT INTO tenant_retention (tenant_id, keep_days, keep_runs, updated_at) VALUES (:tenant_id, :keep_days, :keep_runs, :now)
ON CONFLICT (tenant_id) DO UPDATE SET keep_days = excluded.keep_days, keep_runs = excluded.keep_runs,
  updated_at = excluded.updated_at
RETURNING keep_days, keep_runs
