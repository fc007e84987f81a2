-- Appends one entry to a tenant's audit log. Params: :tenant_id, :run_id, :at, :kind (the action), :resource,
-- :actor_type, :actor_id, :actor_name, :outcome, :data. Returns the entry's id.
INSERT INTO audit (tenant_id, run_id, at, kind, resource, actor_type, actor_id, actor_name, outcome, data)
VALUES (:tenant_id, :run_id, :at, :kind, :resource, :actor_type, :actor_id, :actor_name, :outcome, :data)
RETURNING id
