-- The tool list a run pinned for a server.
-- Params: :run_id, :server. Returns hash, tools (JSON text), pinned_at; no row if none is pinned.
SELECT hash, tools, pinned_at FROM mcp_tool_pins WHERE run_id = :run_id AND server = :server
