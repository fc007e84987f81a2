-- 0017: a tenant's redaction policy (issue 17), set through the admin API (PATCH /v1/admin/tenants/:id `redact`).
-- redact: JSON object { "fields": [key, ...], "tools": { tool: ["input.path", "output.path", ...] } }: values the API
-- and CLI show as "[redacted]" in the tenant's run inputs/results and step inputs/outputs. The journal keeps every
-- value (replay needs them); redaction happens only on the way out.
ALTER TABLE tenants ADD COLUMN redact TEXT NOT NULL DEFAULT '{}';
