// Resolves a run's call of `mcp.<server>.<tool>` to a Keel tool: finds the server's configuration
// (the agent's own first, then the tenant's), pins the server's tool list for the run at its first
// use (durably, before the first call), and checks at each call that the live server still lists
// the pinned tool with the same schema and effect class. The tool it returns calls the server
// through the client pool, with the execution id in the request's _meta. It journals nothing:
// the engine dispatches the returned tool like any declared one.
import { z } from 'zod';
import { KeelError } from '../../domain/keel-error.ts';
import type { Json } from '../../domain/json.ts';
import type { RunRecord } from '../../domain/records.ts';
import type { McpToolResolver } from '../../engine/mcp-port.ts';
import type { AgentDefinition, ToolDefinition } from '../../sdk/types.ts';
import type { Store } from '../../store/store.ts';
import type { McpClientPool } from './client-pool.ts';
import { parseMcpServerConfig, type McpServerConfig } from '../../sdk/mcp-server-config.ts';
import { checkedMcpServerConfig } from './service-sandbox.ts';
import { pinTools, type PinnedTool, type ToolPin } from './tool-pin.ts';
import stringify from 'safe-stable-stringify';

/** How long a server's live tool list is trusted before it is listed again, in ms. */
export const MCP_LIVE_LIST_TTL_MS = 30_000;
/** Attempts of a read or idempotent MCP call whose server was unavailable (reconnecting between). */
export const MCP_RETRY_ATTEMPTS = 3;
/** Errors no retry can fix. */
const NON_RETRYABLE = [
  'mcp_tool_error',
  'mcp_tool_not_found',
  'mcp_origin_not_allowed',
  'mcp_tools_changed',
];

const McpArguments = z.record(z.string(), z.unknown());

export interface McpToolSourceOptions {
  store: Store;
  pool: McpClientPool;
}

export class McpToolSource implements McpToolResolver {
  readonly #store: Store;
  readonly #pool: McpClientPool;
  readonly #live = new Map<string, { pin: ToolPin; at: number }>();

  constructor(options: McpToolSourceOptions) {
    this.#store = options.store;
    this.#pool = options.pool;
  }

  async resolve(
    run: RunRecord,
    agent: AgentDefinition | undefined,
    server: string,
    tool: string,
  ): Promise<ToolDefinition<unknown, Json>> {
    const config = await this.#configOf(run.tenantId, agent, server);
    const pin = await this.#pinFor(run, config);
    const pinned = pin.tools.find((t) => t.name === tool);
    if (pinned === undefined)
      throw new KeelError(
        'mcp_tool_not_found',
        `MCP server ${server} (as pinned for run ${run.id}) has no tool ${tool}`,
        { details: { server, tool, pinnedHash: pin.hash } },
      );
    return this.#toolOf(run.tenantId, config, pin, pinned);
  }

  /** The agent's configuration of `server`, else the tenant's. */
  async #configOf(
    tenantId: string,
    agent: AgentDefinition | undefined,
    server: string,
  ): Promise<McpServerConfig> {
    const own = agent?.mcpServers?.find((s) => s.name === server);
    if (own !== undefined) return checkedMcpServerConfig(parseMcpServerConfig(own));
    const row = (await this.#store.listMcpServers(tenantId)).find((s) => s.name === server);
    if (row === undefined)
      throw new KeelError(
        'mcp_server_not_found',
        `no MCP server ${server} is configured for agent ${agent?.name ?? '?'} or its tenant`,
        { details: { server } },
      );
    return checkedMcpServerConfig(parseMcpServerConfig(row.config));
  }

  async #pinFor(run: RunRecord, config: McpServerConfig): Promise<ToolPin> {
    const stored = await this.#store.getMcpToolPin(run.id, config.name);
    if (stored !== null)
      return {
        server: config.name,
        hash: stored.hash,
        tools: stored.tools as unknown as PinnedTool[],
      };
    const live = await this.#liveList(run.tenantId, config);
    const inForce = await this.#store.pinMcpTools(run.id, config.name, {
      hash: live.hash,
      tools: live.tools as unknown as Json,
    });
    return {
      server: config.name,
      hash: inForce.hash,
      tools: inForce.tools as unknown as PinnedTool[],
    };
  }

  async #liveList(tenantId: string, config: McpServerConfig, fresh = false): Promise<ToolPin> {
    const key = `${tenantId}\u0000${stringify(config)}`;
    const cached = this.#live.get(key);
    if (!fresh && cached !== undefined && Date.now() - cached.at < MCP_LIVE_LIST_TTL_MS)
      return cached.pin;
    const pin = pinTools(config, await this.#pool.listTools(tenantId, config));
    this.#live.set(key, { pin, at: Date.now() });
    return pin;
  }

  /**
   * Refuses a call whose tool the live server no longer lists as pinned (renamed, new schema, new
   * effect class): the run keeps the tools it started with, or fails saying why.
   */
  async #checkUnchanged(tenantId: string, config: McpServerConfig, pin: ToolPin, tool: PinnedTool) {
    let live = await this.#liveList(tenantId, config);
    if (live.hash === pin.hash) return;
    const same = (l: ToolPin) => {
      const now = l.tools.find((t) => t.name === tool.name);
      return now !== undefined && stringify(now) === stringify(tool);
    };
    if (same(live)) return;
    live = await this.#liveList(tenantId, config, true); // a stale cache is not a change
    if (live.hash === pin.hash || same(live)) return;
    throw new KeelError(
      'mcp_tools_changed',
      `MCP server ${config.name} no longer lists tool ${tool.name} as the run pinned it`,
      {
        details: {
          server: config.name,
          tool: tool.name,
          pinnedHash: pin.hash,
          currentHash: live.hash,
        },
      },
    );
  }

  #toolOf(
    tenantId: string,
    config: McpServerConfig,
    pin: ToolPin,
    pinned: PinnedTool,
  ): ToolDefinition<unknown, Json> {
    const rerunnable = pinned.effect !== 'side-effect';
    return {
      kind: 'keel.tool',
      name: `mcp.${config.name}.${pinned.name}`,
      description: pinned.description,
      input: McpArguments as z.ZodType<unknown>,
      effect: pinned.effect,
      // A dropped session is retried (on a new one) only where re-running is safe.
      retry: rerunnable
        ? { maxAttempts: MCP_RETRY_ATTEMPTS, initialDelayMs: 200, nonRetryable: NON_RETRYABLE }
        : { maxAttempts: 1 },
      timeoutMs: config.callTimeoutMs + 5_000,
      run: async (args, ctx) => {
        await this.#checkUnchanged(tenantId, config, pin, pinned);
        return this.#pool.callTool(tenantId, config, pinned.name, args as Record<string, unknown>, {
          executionId: ctx.executionId,
          signal: ctx.signal,
        });
      },
    };
  }
}
