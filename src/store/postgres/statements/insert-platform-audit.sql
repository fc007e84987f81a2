-- Appends one entry to the platform audit log. Params: :at, :kind (the action), :resource, :tenant_id, :actor_type,
-- :actor_id, :actor_name, :outcome, :data. Returns the entry's id.
INSERT INTO platform_audit (at, kind, resource, tenant_id, actor_type, actor_id, actor_name, outcome, data)
VALUES (:at::bigint, :kind::text, :resource::text, :tenant_id::text, :actor_type::text, :actor_id::text,
        :actor_name::text, :outcome::text, :data::text)
RETURNING id
