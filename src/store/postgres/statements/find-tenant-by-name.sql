-- Params: :name. Returns the tenant row or nothing.
SELECT id, name, created_at FROM tenants WHERE name = :name
