// Tells the store which agent versions this process serves, so that any API process (GET
// /v1/agents) can say who serves a version: an announcement at start, a refresh every
// PROCESS_ANNOUNCE_INTERVAL_MS while the process lives, and a retirement at a graceful stop. A
// crashed process stops refreshing and drops out of the list after PROCESS_SEEN_WITHIN_MS. It never
// decides what is claimed: claims name their versions themselves.
import { hostname } from 'node:os';
import type { Store } from '../store/store.ts';

export const PROCESS_ANNOUNCE_INTERVAL_MS = 10_000;
/** A process not seen for this long (three missed refreshes) is no longer listed as serving. */
export const PROCESS_SEEN_WITHIN_MS = 3 * PROCESS_ANNOUNCE_INTERVAL_MS;

export interface ServingAnnouncer {
  /** Stops refreshing and removes this process's row. */
  stop(): Promise<void>;
}

export async function announceServing(
  store: Store,
  process_: { workerId: string; role: string; served: () => string[] },
  onError: (error: unknown) => void,
): Promise<ServingAnnouncer> {
  const startedAt = Date.now();
  const announce = () =>
    store.announceProcess({
      workerId: process_.workerId,
      role: process_.role,
      host: hostname(),
      pid: process.pid,
      served: process_.served(),
      startedAt,
    });
  await announce();
  const timer = setInterval(() => void announce().catch(onError), PROCESS_ANNOUNCE_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await store.retireProcess(process_.workerId).catch(onError);
    },
  };
}
