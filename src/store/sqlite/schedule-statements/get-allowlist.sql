-- A tenant's allowed webhook origins.
-- Params: :tenant_id.
SELECT origin FROM webhook_allowlist WHERE tenant_id = :tenant_id ORDER BY origin
