-- 0022: MCP servers (issue 19). mcp_servers: a tenant's MCP server configurations (config: JSON, validated by
-- src/sdk/mcp-server-config.ts before it is written), by name, from the admin API or the servers file.
-- mcp_tool_pins: the tool list a run pinned for a server at its first use (tools: JSON array of name, description,
-- inputSchema, effect; hash: sha256 of it), so the run keeps calling the tools it started with; written once per
-- (run, server), never updated.
CREATE TABLE mcp_servers (
  tenant_id   TEXT NOT NULL,
  name        TEXT NOT NULL,
  config      TEXT NOT NULL,
  updated_at  INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, name)
);
CREATE TABLE mcp_tool_pins (
  run_id     TEXT NOT NULL,
  server     TEXT NOT NULL,
  hash       TEXT NOT NULL,
  tools      TEXT NOT NULL,
  pinned_at  INTEGER NOT NULL,
  PRIMARY KEY (run_id, server)
);
