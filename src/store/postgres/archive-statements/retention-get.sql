-- A tenant's retention override. Params: :tenant_id. Result: { keep_days, keep_runs } or none.
SELECT keep_days, keep_runs FROM tenant_retention WHERE tenant_id = :tenant_id
