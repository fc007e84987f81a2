// The start-up warning about queued runs pinned to an agent version this process does not serve
// (after a version bump, the old version's queued runs wait for a process that serves it, maybe
// forever): names each agent@version, how many runs, and the two ways forward. It only reads.
import type { Logger } from 'pino';
import type { AgentRegistry } from '../engine/registry.ts';
import type { QueuedVersion, Store } from '../store/store.ts';

/** The queued versions `registry` does not serve. */
export function unservedQueued(
  queued: readonly QueuedVersion[],
  registry: AgentRegistry,
): QueuedVersion[] {
  return queued.filter((q) => registry.get(q.agent, q.version) === undefined);
}

/** Logs one warning per unserved version with queued runs; never fails the start. */
export async function warnUnservedVersions(
  store: Store,
  registry: AgentRegistry,
  shared: boolean,
  log: Logger,
): Promise<void> {
  let queued: QueuedVersion[];
  try {
    queued = await store.queuedByVersion();
  } catch (error) {
    log.warn({ err: error }, 'could not count queued runs by agent version');
    return;
  }
  for (const { agent, version, runs } of unservedQueued(queued, registry)) {
    const served = registry
      .list()
      .filter((a) => a.name === agent)
      .map((a) => a.version);
    const forward =
      served.length === 0
        ? `serve ${agent}@${version} (export it from the agents module)`
        : `serve ${agent}@${version} again, or move the runs that never started: keel runs migrate --agent ${agent} --from ${version} --to ${served.at(-1)}`;
    log.warn(
      { agent, version, queuedRuns: runs, served },
      `${runs} queued run${runs === 1 ? '' : 's'} need${runs === 1 ? 's' : ''} ${agent}@${version}, which this process does not serve${shared ? ' (another process may)' : ''}: ${forward}`,
    );
  }
}
