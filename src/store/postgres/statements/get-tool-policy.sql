-- The tenant's tool policy. Params: :tenant_id. Returns policy (JSON text) and updated_at, or no row when the
-- tenant has none.
SELECT policy, updated_at FROM tool_policies WHERE tenant_id = :tenant_id::text
