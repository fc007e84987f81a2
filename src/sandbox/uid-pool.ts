// Hands out one unprivileged host uid per live sandbox, so workspaces (mode 0700) and per-uid
// limits are per sandbox — across every Keel process on the host, not just this one: a uid is
// claimed by creating
// /run/keel-sandbox/uids/<uid> (mkdir is atomic) holding the owner's pid; a claim whose owner died is taken over.
// The range is above any distribution's regular users; a uid is released only after its sandbox is
// gone.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SANDBOX_UID_FIRST = 200_000;
export const SANDBOX_UID_COUNT = 50_000;
const CLAIMS_DIR = '/run/keel-sandbox/uids';

let next = SANDBOX_UID_FIRST + ((process.pid * 7919) % SANDBOX_UID_COUNT);

/** Claims `uid` for this process; false when a live process holds it. @internal */
export function claimUid(uid: number): boolean {
  const dir = join(CLAIMS_DIR, String(uid));
  try {
    mkdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || ownerAlive(dir)) return false;
    rmSync(dir, { recursive: true, force: true }); // its owner died without releasing it
    try {
      mkdirSync(dir);
    } catch {
      return false; // another process took it over first
    }
  }
  writeFileSync(join(dir, 'owner'), String(process.pid));
  return true;
}

function ownerAlive(dir: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(dir, 'owner'), 'utf8'));
  } catch {
    return true; // being written right now by its claimer
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function allocateUid(): number {
  mkdirSync(CLAIMS_DIR, { recursive: true, mode: 0o700 });
  for (let i = 0; i < SANDBOX_UID_COUNT; i++) {
    const uid = next;
    next = next + 1 >= SANDBOX_UID_FIRST + SANDBOX_UID_COUNT ? SANDBOX_UID_FIRST : next + 1;
    if (claimUid(uid)) return uid;
  }
  throw new Error('no free sandbox uid');
}

export function releaseUid(uid: number): void {
  rmSync(join(CLAIMS_DIR, String(uid)), { recursive: true, force: true });
}
