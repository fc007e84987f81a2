// The agents this process serves, by name and version, and the tools they were seen using. Workers
// announce `served()`, so a run pinned to a version is only claimed by a process that has that
// version.
import { KeelError } from '../domain/keel-error.ts';
import { isAgentDefinition, isToolDefinition } from '../sdk/define.ts';
import type { AgentDefinition, Json, ToolDefinition } from '../sdk/types.ts';

export class AgentRegistry {
  readonly #byKey = new Map<string, AgentDefinition>();
  /**
   * Latest registered version per name: the version new runs are pinned to when none is asked for.
   */
  readonly #latest = new Map<string, AgentDefinition>();
  /**
   * Tools by name: exported by the agents module, or seen in a ctx.tool() call. Compensation looks
   * them up.
   */
  readonly #tools = new Map<string, ToolDefinition<unknown, Json>>();

  register(agent: AgentDefinition): void {
    if (!isAgentDefinition(agent))
      throw new TypeError('register() expects an agent made with defineAgent()');
    const key = agentKey(agent.name, agent.version);
    const existing = this.#byKey.get(key);
    if (existing !== undefined) {
      if (existing.run !== agent.run)
        throw new TypeError(`two different agents are registered as ${key}`);
      return;
    }
    this.#byKey.set(key, agent);
    this.#latest.set(agent.name, agent);
  }

  /**
   * Remembers a tool definition; the first one seen under a name wins (names are unique within a
   * deployment).
   */
  registerTool(tool: ToolDefinition<unknown, Json>): void {
    if (!isToolDefinition(tool))
      throw new TypeError('registerTool() expects a tool made with defineTool()');
    if (!this.#tools.has(tool.name)) this.#tools.set(tool.name, tool);
  }

  /**
   * Swaps every definition for a reloaded agents module's (`keel dev --watch`): new runs and new
   * claims see only these; a version the module no longer exports stops being served (its queued
   * runs wait, `agent_version_unavailable`, until it comes back or they are migrated).
   */
  replace(
    agents: readonly AgentDefinition[],
    tools: readonly ToolDefinition<unknown, Json>[],
  ): void {
    const next = new AgentRegistry(); // checked whole first: a conflict leaves this one as it was
    for (const agent of agents) next.register(agent);
    for (const tool of tools) next.registerTool(tool);
    for (const [mine, theirs] of [
      [this.#byKey, next.#byKey],
      [this.#latest, next.#latest],
    ] as const) {
      mine.clear();
      for (const [key, agent] of theirs) mine.set(key, agent);
    }
    this.#tools.clear();
    for (const [name, tool] of next.#tools) this.#tools.set(name, tool);
  }

  tool(name: string): ToolDefinition<unknown, Json> | undefined {
    return this.#tools.get(name);
  }

  /** Resolves `name` or `name@version` for a new run. */
  resolve(ref: string): AgentDefinition {
    const at = ref.lastIndexOf('@');
    const agent = at > 0 ? this.#byKey.get(ref) : this.#latest.get(ref);
    if (agent === undefined)
      throw new KeelError('agent_not_found', `no agent ${JSON.stringify(ref)} is registered`, {
        details: { agent: ref },
      });
    return agent;
  }

  get(name: string, version: string): AgentDefinition | undefined {
    return this.#byKey.get(agentKey(name, version));
  }

  served(): string[] {
    return [...this.#byKey.keys()];
  }

  list(): AgentDefinition[] {
    return [...this.#byKey.values()];
  }
}

export const agentKey = (name: string, version: string): string => `${name}@${version}`;
