-- Removes a tenant's MCP server configuration (runs that pinned its tools keep their pins).
-- Params: :tenant_id, :name. Returns the name when a row went, no row otherwise.
DELETE FROM mcp_servers WHERE tenant_id = :tenant_id AND name = :name RETURNING name
