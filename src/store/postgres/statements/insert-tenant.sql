-- Creates a tenant.
-- Params: :id, :name, :now. Returns nothing. Fails on a duplicate name (UNIQUE constraint).
INSERT INTO tenants (id, name, created_at) VALUES (:id, :name, :now)
