-- One named platform admin. Params: :id. Returns p.id, p.name, p.created_at, p.revoked_at, or nothing.
SELECT p.id, p.name, p.created_at, p.revoked_at FROM admin_principals p WHERE p.id = :id
