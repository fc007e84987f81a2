-- Revokes a named platform admin now (a revoked one keeps its first revocation time).
-- Params: :id, :now. Returns the id, or nothing when there is no such principal.
UPDATE admin_principals SET revoked_at = COALESCE(revoked_at, :now) WHERE id = :id RETURNING id
