// Names agent code uses to call a tool of an MCP server: `mcpTool('fs', 'read_file')` is a tool
// definition named `mcp.fs.read_file` that ctx.tool() accepts like any other. It carries no code:
// the engine resolves the name, at the call, to the tool the run pinned for that server (its
// effect class and schema) and calls it through the server's client session. Imported by replayed
// agent code: no Node server modules here.
import { z } from 'zod';
import type { Json, ToolDefinition } from './types.ts';

/** Prefix of every MCP tool's Keel name: `mcp.<server>.<tool>`. */
export const MCP_TOOL_PREFIX = 'mcp.';
const SERVER = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const TOOL = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/** Arguments of an MCP tool: a JSON object, checked by the server against its own schema. */
const McpArguments = z.record(z.string(), z.unknown());

export type McpToolArguments = Record<string, unknown>;

/**
 * The tool `tool` of the MCP server named `server` (configured in `defineAgent({ mcpServers })` or
 * for the tenant), for `ctx.tool`. Its effect class is the pinned one, from the server's
 * annotations or the configuration's override; `effect` here is only a placeholder.
 * @example
 * const echo = mcpTool('everything', 'echo');
 * const answer = await ctx.tool(echo, { message: 'hi' }); // { content: [{ type: 'text', ... }] }
 */
export function mcpTool(server: string, tool: string): ToolDefinition<McpToolArguments, Json> {
  if (!SERVER.test(server))
    throw new TypeError(`MCP server name must match ${SERVER}, got ${JSON.stringify(server)}`);
  if (!TOOL.test(tool))
    throw new TypeError(`MCP tool name must match ${TOOL}, got ${JSON.stringify(tool)}`);
  return Object.freeze({
    kind: 'keel.tool' as const,
    name: `${MCP_TOOL_PREFIX}${server}.${tool}`,
    description: `Tool ${tool} of MCP server ${server}`,
    input: McpArguments,
    effect: 'side-effect' as const,
    run: () => {
      throw new Error(`${MCP_TOOL_PREFIX}${server}.${tool} runs only through ctx.tool`);
    },
  });
}

/** The server and tool an MCP tool's Keel name stands for, or undefined for any other name. */
export function parseMcpToolName(name: string): { server: string; tool: string } | undefined {
  if (!name.startsWith(MCP_TOOL_PREFIX)) return undefined;
  const rest = name.slice(MCP_TOOL_PREFIX.length);
  const dot = rest.indexOf('.');
  if (dot < 0) return undefined;
  const server = rest.slice(0, dot);
  const tool = rest.slice(dot + 1);
  return SERVER.test(server) && TOOL.test(tool) ? { server, tool } : undefined;
}
