-- A tenant's MCP server configurations, by name.
-- Params: :tenant_id. Returns name, config (JSON text), updated_at.
SELECT name, config, updated_at FROM mcp_servers WHERE tenant_id = :tenant_id::text ORDER BY name
