-- A tenant's daily budget was changed: its runs parked on `tenant_budget_exhausted` are due now (they stay `waiting`
-- until claimed, and check the budget again before their model call). Scans the tenant's runs (runs_by_tenant).
-- Params: :tenant_id, :now. Returns the ids of the runs woken.
UPDATE runs SET wake_at = :now::bigint, claim_after = :now::bigint
WHERE tenant_id = :tenant_id AND status = 'waiting' AND waiting_reason = 'tenant_budget_exhausted' AND lease_owner IS NULL
RETURNING id
