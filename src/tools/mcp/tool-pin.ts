// A server's tool list as a run pins it: each tool's name, description, JSON Schema input and effect
// class (from its annotations, or the configuration's override), and a hash over all of it. The
// pin is taken at a run's first use of the server and kept for the run, so a server that changes
// its tools mid-run cannot change what an already-started run calls. Pure: no I/O.
import { createHash } from 'node:crypto';
import stringify from 'safe-stable-stringify';
import type { ToolEffect } from '../../sdk/types.ts';
import type { McpServerConfig } from '../../sdk/mcp-server-config.ts';

export interface PinnedTool {
  name: string;
  description: string;
  /** JSON Schema of the arguments, as the server listed it. */
  inputSchema: Record<string, unknown>;
  effect: ToolEffect;
}

export interface ToolPin {
  server: string;
  /** sha256 over the tools (names, schemas, effect classes), hex. */
  hash: string;
  tools: PinnedTool[];
}

/** The subset of an MCP `tools/list` entry the pin reads. */
export interface ListedTool {
  name: string;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean; idempotentHint?: boolean } | undefined;
}

/**
 * `readOnlyHint` → read; `idempotentHint` → idempotent; anything else → side-effect (the MCP spec's
 * defaults are "not read-only, not idempotent", so a tool that says nothing is never re-run).
 */
export function effectFromAnnotations(annotations: ListedTool['annotations']): ToolEffect {
  if (annotations?.readOnlyHint === true) return 'read';
  if (annotations?.idempotentHint === true) return 'idempotent';
  return 'side-effect';
}

export function pinTools(config: McpServerConfig, listed: readonly ListedTool[]): ToolPin {
  const tools = listed
    .map((tool) => ({
      name: tool.name,
      description: tool.description ?? '',
      inputSchema: tool.inputSchema,
      effect: config.effects[tool.name] ?? effectFromAnnotations(tool.annotations),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
  const hash = createHash('sha256')
    .update(stringify(tools) ?? '')
    .digest('hex');
  return { server: config.name, hash, tools };
}
