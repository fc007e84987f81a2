-- Appends one entry to the platform audit log. Params: :at, :kind (the action), :resource, :tenant_id, :actor_type,
-- :actor_id, :actor_name, :outcome, :data. Returns the entry's id.
INSERT INTO platform_audit (at, kind, resource, tenant_id, actor_type, actor_id, actor_name, outcome, data)
VALUES (:at, :kind, :resource, :tenant_id, :actor_type, :actor_id, :actor_name, :outcome, :data)
RETURNING id
