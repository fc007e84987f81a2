// Shared setup for sandbox tests: a temporary sandbox root and artifact directory per test file,
// and the "is this tier usable here" check that turns a missing tier into a skip with its reason
// (never a silent pass).
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileArtifactStore } from '../../src/sandbox/file-artifact-store.ts';
import { MMDEBSTRAP } from '../../src/sandbox/images/image-builder.ts';
import { SandboxManager } from '../../src/sandbox/sandbox-manager.ts';
import { tierAvailability, type Tier } from '../../src/sandbox/tiers.ts';

export function sandboxRoot(): { root: string; artifacts: FileArtifactStore; cleanup(): void } {
  const base = mkdtempSync(join(tmpdir(), 'keel-sbx-'));
  chmodSync(base, 0o711); // sandbox uids must traverse to their workspace; they still cannot list it
  return {
    root: join(base, 'sandboxes'),
    artifacts: new FileArtifactStore(join(base, 'artifacts')),
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}

export function newManager(): { manager: SandboxManager; cleanup(): Promise<void> } {
  const { root, artifacts, cleanup } = sandboxRoot();
  const manager = new SandboxManager({ root, artifacts });
  return {
    manager,
    cleanup: async () => {
      await manager.close();
      cleanup();
    },
  };
}

const MIRROR_PROBE_TIMEOUT_MS = 5_000;

/** Why environment images of `suite` cannot be built here, or undefined. */
export async function imageBuildSkipReason(
  mirror: string,
  suite: string,
): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'image builds need root (mmdebstrap --mode=root)';
  if (!existsSync(MMDEBSTRAP)) return 'mmdebstrap is not installed (apt-get install -y mmdebstrap)';
  try {
    const response = await fetch(`${mirror}/dists/${suite}/InRelease`, {
      method: 'HEAD',
      signal: AbortSignal.timeout(MIRROR_PROBE_TIMEOUT_MS),
    });
    if (!response.ok) return `the Debian mirror ${mirror} answered ${response.status}`;
  } catch (error) {
    return `the Debian mirror ${mirror} is unreachable (${(error as Error).message})`;
  }
  return undefined;
}

/** Undefined when the tier works here; otherwise the reason, for `{ skip: reason }`. */
export function skipUnless(tier: Tier): string | undefined {
  const availability = tierAvailability(tier);
  return availability.ok
    ? undefined
    : `tier ${tier} unavailable on this host: ${availability.reason} (fix: ${availability.fix})`;
}
