-- Every named platform admin, oldest first (revoked ones too). Params: none. Returns p.id, p.name, p.created_at, p.revoked_at.
SELECT p.id, p.name, p.created_at, p.revoked_at FROM admin_principals p ORDER BY p.created_at, p.id
