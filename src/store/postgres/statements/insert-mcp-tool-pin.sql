-- Pins a server's tool list for a run unless one is pinned already (the first pin wins, forever).
-- Params: :run_id, :server, :hash, :tools (JSON text), :now. Returns nothing.
INSERT INTO mcp_tool_pins (run_id, server, hash, tools, pinned_at)
VALUES (:run_id::text, :server::text, :hash::text, :tools::text, :now::bigint)
ON CONFLICT (run_id, server) DO NOTHING
