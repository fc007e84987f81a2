-- Allows a tenant's schedules to notify an origin (scheme://host[:port]).
-- Params: :tenant_id, :origin.
INSERT INTO webhook_allowlist (tenant_id, origin) VALUES (:tenant_id::text, :origin::text) ON CONFLICT DO NOTHING
