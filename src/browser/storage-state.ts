// A run's browser storage state (cookies and local storage, Playwright's `storageState`) kept as a
// content-addressed artifact under the reference `browser/<runId>`, so a session reclaimed, crashed
// or picked up by another process is rebuilt with the same logins. Saved after every action; the
// artifact store dedupes identical states, so an action that changed nothing costs a hash. It never
// keeps the page itself (URL, DOM, scroll): those are gone after a rebuild, and the docs say so.
import type { BrowserContext } from 'playwright-core';
import type { ArtifactStore } from '../store/artifact-store.ts';

/** Playwright's storage state, as `context.storageState()` gives it and `newContext` takes it. */
export type StorageState = Awaited<ReturnType<BrowserContext['storageState']>>;

/** Largest storage state kept; past it the state is not saved (the previous one stays). */
export const STORAGE_STATE_MAX_BYTES = 4 * 1024 * 1024;

export const storageStateRef = (runId: string): string => `browser/${runId}`;

export interface SavedState {
  sha256: string;
  bytes: number;
}

/** Saves the context's storage state as the run's artifact; undefined when it is too large. */
export async function saveStorageState(
  artifacts: ArtifactStore,
  runId: string,
  context: BrowserContext,
): Promise<SavedState | undefined> {
  const bytes = Buffer.from(JSON.stringify(await context.storageState()));
  if (bytes.byteLength > STORAGE_STATE_MAX_BYTES) return undefined;
  const sha256 = await artifacts.put(bytes);
  await artifacts.setRef(storageStateRef(runId), sha256);
  return { sha256, bytes: bytes.byteLength };
}

/** The run's last saved storage state, or undefined when it has none. */
export async function loadStorageState(
  artifacts: ArtifactStore,
  runId: string,
): Promise<StorageState | undefined> {
  const sha256 = await artifacts.getRef(storageStateRef(runId));
  if (sha256 === undefined) return undefined;
  return JSON.parse((await artifacts.get(sha256)).toString('utf8')) as StorageState;
}
