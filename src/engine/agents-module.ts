// Loads a user's agents module (TypeScript or JavaScript) and collects what it exports: agents
// (named exports, or a default export that is an agent or an array of them; the same name+version
// twice counts once), models and tools. Tools are found where the effect plane can reach them by
// name: exported tools, tools inside an exported object (what sandboxTools() returns), the tools
// agents declare (a loop agent's), and any other tool defined while the module loaded. Loaded by
// the main thread and by every agent isolate (worker thread), which must see the same module.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  isAgentDefinition,
  isModelDefinition,
  isToolDefinition,
  toolsDefined,
} from '../sdk/define.ts';
import type { AgentDefinition, Json, ModelDefinition, ToolDefinition } from '../sdk/types.ts';

export interface LoadedAgents {
  agents: AgentDefinition[];
  models: ModelDefinition[];
  /**
   * Exported tools: a worker that did not run an agent's code can still compensate their
   * executions.
   */
  tools: ToolDefinition<unknown, Json>[];
}

export async function loadAgentsModule(file: string): Promise<LoadedAgents> {
  const url = pathToFileURL(resolve(file)).href;
  const mod = (await import(url)) as Record<string, unknown>;
  const candidates: unknown[] = [];
  for (const [name, value] of Object.entries(mod)) {
    if (name === 'default' && Array.isArray(value)) candidates.push(...value);
    else candidates.push(value);
  }
  const agents = new Map<string, AgentDefinition>();
  const models = new Map<string, ModelDefinition>();
  const tools = new Map<string, ToolDefinition<unknown, Json>>();
  for (const value of candidates) {
    if (isAgentDefinition(value)) {
      const key = `${value.name}@${value.version}`;
      const seen = agents.get(key);
      if (seen !== undefined && seen.run !== value.run)
        throw new Error(`${file} exports two different agents named ${key}`);
      agents.set(key, value);
    } else if (isModelDefinition(value)) {
      models.set(value.name, value);
    } else if (isToolDefinition(value)) {
      tools.set(value.name, value);
    } else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      for (const inner of Object.values(value))
        if (isToolDefinition(inner) && !tools.has(inner.name)) tools.set(inner.name, inner);
    }
  }
  for (const agent of agents.values())
    for (const tool of agent.tools ?? [])
      if (!tools.has(tool.name)) tools.set(tool.name, tool as ToolDefinition<unknown, Json>);
  // Tools defined while the module loaded but reachable from no export (a `const tools =
  // sandboxTools(…)`).
  for (const [name, tool] of toolsDefined()) if (!tools.has(name)) tools.set(name, tool);
  if (agents.size === 0)
    throw new Error(
      `${file} exports no agents: export the result of defineAgent() (named or default)`,
    );
  return { agents: [...agents.values()], models: [...models.values()], tools: [...tools.values()] };
}
