-- The named platform admin with this key hash, revoked ones too (the caller refuses them). Params: :key_hash.
-- Returns p.id, p.name, p.created_at, p.revoked_at, or nothing.
SELECT p.id, p.name, p.created_at, p.revoked_at FROM admin_principals p WHERE p.key_hash = :key_hash
