// What `keel dev --watch` does when the agents module changes: evaluates it again (a new
// generation of its project files), loads it in new isolates, then swaps the registry's
// definitions, in that order, so a module that does not load anywhere changes nothing. Reloads run
// one at a time. New runs and new claims use the new code; a run hosted now keeps the code that
// started it until it parks or ends; a run replayed later on changed code either matches its
// journal or fails with `non_determinism`, whose message offers a reset.
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { AgentHost } from '../engine/agent-host.ts';
import { loadAgentsModule } from '../engine/agents-module.ts';
import { IsolateHost } from '../engine/isolation/isolate-host.ts';
import type { AgentRegistry } from '../engine/registry.ts';
import { redefineTools } from '../sdk/define.ts';
import { type AgentsModuleGenerations, watchAgentsModule } from './agents-watch.ts';

export interface ReloadDeps {
  agentsFile: string;
  generations: AgentsModuleGenerations;
  registry: AgentRegistry;
  agentHost: AgentHost;
  log: Logger;
  onReload(line: string): void;
}

/** Reloads the agents module now; resolves false (and reports why) when it changed nothing. */
export async function reloadAgents(deps: ReloadDeps, files: string[]): Promise<boolean> {
  const { agentsFile, generations, registry, agentHost, log } = deps;
  const generation = generations.advance();
  const endRedefining = redefineTools();
  const refuse = (error: unknown) => {
    const reason = error instanceof Error ? error.message : String(error);
    log.error(
      { err: error, files },
      'the changed agents module does not load: still serving the previous code',
    );
    deps.onReload(
      `keel dev: ${agentsFile} changed but does not load (${reason}); still serving the previous code`,
    );
    return false;
  };
  let loaded: Awaited<ReturnType<typeof loadAgentsModule>>;
  try {
    loaded = await loadAgentsModule(resolve(agentsFile));
  } catch (error) {
    return refuse(error);
  } finally {
    endRedefining();
  }
  try {
    if (agentHost instanceof IsolateHost) await agentHost.reload();
    registry.replace(loaded.agents, loaded.tools);
  } catch (error) {
    return refuse(error);
  }
  const served = registry.served();
  log.info({ generation, files, served }, 'agents module reloaded: new runs use the new code');
  deps.onReload(
    `keel dev: reloaded ${agentsFile} (${served.join(', ')}): new runs use the new code`,
  );
  return true;
}

/** Watches the module's files and reloads on each burst of changes; `close()` stops watching. */
export function watchAgentsForReload(deps: ReloadDeps): { close(): void } {
  let queue = Promise.resolve();
  const watcher = watchAgentsModule(deps.generations, (files) => {
    queue = queue
      .then(() => reloadAgents(deps, files))
      .then(() => watcher.refresh())
      .catch((error: unknown) => deps.log.error({ err: error }, 'agents module reload failed'));
  });
  return watcher;
}
