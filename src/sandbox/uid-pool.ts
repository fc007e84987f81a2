// Hands out one unprivileged host uid per live sandbox, so workspaces (mode 0700) and RLIMIT_NPROC are per sandbox.
// The range is above any distribution's regular users; a uid returns to the pool only after its sandbox is gone.
export const SANDBOX_UID_FIRST = 200_000;
export const SANDBOX_UID_COUNT = 50_000;

const inUse = new Set<number>();
let next = SANDBOX_UID_FIRST + (process.pid % SANDBOX_UID_COUNT);

export function allocateUid(): number {
  for (let i = 0; i < SANDBOX_UID_COUNT; i++) {
    const uid = next;
    next = next + 1 >= SANDBOX_UID_FIRST + SANDBOX_UID_COUNT ? SANDBOX_UID_FIRST : next + 1;
    if (!inUse.has(uid)) {
      inUse.add(uid);
      return uid;
    }
  }
  throw new Error('no free sandbox uid');
}

export function releaseUid(uid: number): void {
  inUse.delete(uid);
}
