-- Sets (replaces) the tenant's tool policy. Params: :tenant_id, :policy (JSON text), :now. Returns tenant_id.
INSERT INTO tool_policies (tenant_id, policy, updated_at) VALUES (:tenant_id::text, :policy::text, :now::bigint)
ON CONFLICT (tenant_id) DO UPDATE SET policy = excluded.policy, updated_at = excluded.updated_at
RETURNING tenant_id
