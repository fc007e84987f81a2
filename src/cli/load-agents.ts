// Loads a user's agents module (TypeScript or JavaScript) and collects what it exports: agents (named exports, or a
// default export that is an agent or an array of them; the same name+version twice counts once), models and tools.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isAgentDefinition, isModelDefinition, isToolDefinition } from '../sdk/define.ts';
import type { AgentDefinition, Json, ModelDefinition, ToolDefinition } from '../sdk/types.ts';

export interface LoadedAgents {
  agents: AgentDefinition[];
  models: ModelDefinition[];
  /** Exported tools: a worker that did not run an agent's code can still compensate their executions. */
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
      if (seen !== undefined && seen.run !== value.run) throw new Error(`${file} exports two different agents named ${key}`);
      agents.set(key, value);
    } else if (isModelDefinition(value)) {
      models.set(value.name, value);
    } else if (isToolDefinition(value)) {
      tools.set(value.name, value);
    }
  }
  if (agents.size === 0) throw new Error(`${file} exports no agents: export the result of defineAgent() (named or default)`);
  return { agents: [...agents.values()], models: [...models.values()], tools: [...tools.values()] };
}
