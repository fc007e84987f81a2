// The store's records of MCP servers and tool pins (migration 0022), as plain JSON: the store does
// not know their shape beyond this; src/tools/mcp parses them.
import type { Json } from '../domain/json.ts';

export interface McpServerRow {
  name: string;
  /** The validated configuration, as written. */
  config: Json;
  updatedAt: number;
}

export interface McpToolPinRow {
  /** sha256 of the tools, hex. */
  hash: string;
  /** The pinned tools (name, description, inputSchema, effect), as written. */
  tools: Json;
  pinnedAt: number;
}
