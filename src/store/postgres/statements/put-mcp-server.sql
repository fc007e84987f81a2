-- Inserts or replaces a tenant's MCP server configuration.
-- Params: :tenant_id, :name, :config (JSON text), :now. Returns nothing.
INSERT INTO mcp_servers (tenant_id, name, config, updated_at)
VALUES (:tenant_id::text, :name::text, :config::text, :now::bigint)
ON CONFLICT (tenant_id, name) DO UPDATE SET config = excluded.config, updated_at = excluded.updated_at
