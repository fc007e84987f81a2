// The isolation tiers and how to tell whether this host can run each one. Availability is checked,
// not assumed: a tier that is missing says which package to install, and `keel doctor` prints
// exactly these answers.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { detectCgroups } from './cgroup.ts';
import { PERL } from './env-carrier.ts';

export const TIERS = ['process', 'namespace', 'gvisor'] as const;
export type Tier = (typeof TIERS)[number];

/** Debian package that provides each tier's binary. */
export const TIER_PACKAGES: Record<Tier, string | null> = {
  process: null,
  namespace: 'bubblewrap',
  gvisor: 'runsc',
};
export const TIER_BINARIES: Record<Tier, string | null> = {
  process: null,
  namespace: 'bwrap',
  gvisor: 'runsc',
};

export type TierAvailability =
  | { tier: Tier; ok: true; detail: string }
  | { tier: Tier; ok: false; reason: string; fix: string };

const cache = new Map<Tier, TierAvailability>();

export function tierAvailability(tier: Tier): TierAvailability {
  const known = cache.get(tier);
  if (known !== undefined) return known;
  const answer = probe(tier);
  cache.set(tier, answer);
  return answer;
}

function probe(tier: Tier): TierAvailability {
  if (process.platform !== 'linux')
    return { tier, ok: false, reason: 'sandboxes need Linux', fix: 'run Keel on Linux' };
  if (process.getuid?.() !== 0) {
    return {
      tier,
      ok: false,
      reason: 'sandboxes need root to create cgroups and drop to an unprivileged uid',
      fix: 'run the Keel node as root',
    };
  }
  const cgroups = detectCgroups();
  if (!cgroups.ok)
    return {
      tier,
      ok: false,
      reason: cgroups.reason,
      fix: 'mount the cgroup controllers memory, pids, cpu, cpuacct and freezer',
    };
  // The process tier's last launch step and the namespace tier's entry into kept sandboxes are Perl.
  if (tier !== 'gvisor' && !existsSync(PERL))
    return { tier, ok: false, reason: `${PERL} is missing`, fix: 'apt-get install -y perl-base' };
  const binary = TIER_BINARIES[tier];
  if (binary === null)
    return { tier, ok: true, detail: `cgroup ${cgroups.version}; not a security boundary` };
  const version = versionOf(binary);
  if (version === undefined) {
    return {
      tier,
      ok: false,
      reason: `${binary} is not installed`,
      fix: `apt-get install -y ${TIER_PACKAGES[tier]}`,
    };
  }
  return { tier, ok: true, detail: `${version}; cgroup ${cgroups.version}` };
}

function versionOf(binary: string): string | undefined {
  try {
    return execFileSync(binary, ['--version'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 5000,
    })
      .split('\n')[0]!
      .trim();
  } catch {
    return undefined;
  }
}
