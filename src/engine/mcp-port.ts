// What the engine asks of the MCP plane (src/tools/mcp): turn a tool call named `mcp.<server>.<tool>`
// into a concrete tool definition for this run, with the effect class and schema the run pinned.
// The engine then dispatches it like any declared tool (journal, effect class, retries, pools and
// any policy check on that path). The engine knows this interface only, never the MCP client.
import type { RunRecord } from '../domain/records.ts';
import type { AgentDefinition, Json, ToolDefinition } from '../sdk/types.ts';

export interface McpToolResolver {
  /**
   * The tool for this run: pins the server's tool list at the run's first use of it, and refuses
   * (typed KeelError) a server that is not configured, a tool the pin lacks, or a server whose
   * tools changed under the pin.
   */
  resolve(
    run: RunRecord,
    agent: AgentDefinition | undefined,
    server: string,
    tool: string,
  ): Promise<ToolDefinition<unknown, Json>>;
}
