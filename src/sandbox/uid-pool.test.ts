import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { allocateUid, claimUid, releaseUid, SANDBOX_UID_FIRST } from './uid-pool.ts';

const skip = process.getuid?.() === 0 ? undefined : 'needs root (/run)';

test("uids are unique while held, reusable after release, and a dead owner's claim is taken over", {
  skip,
}, () => {
  const held = Array.from({ length: 50 }, () => allocateUid());
  assert.equal(new Set(held).size, held.length);
  assert.ok(held.every((uid) => uid >= SANDBOX_UID_FIRST));
  for (const uid of held) releaseUid(uid);
  assert.ok(held.every((uid) => !existsSync(`/run/keel-sandbox/uids/${uid}`)));
  const uid = allocateUid();
  assert.equal(
    claimUid(uid),
    false,
    'a uid held by a live process (this one) is not handed out twice',
  );
  // A claim left by a process that no longer exists (pid 2^22 + 1 is above the default pid_max) is
  // taken over.
  writeFileSync(`/run/keel-sandbox/uids/${uid}/owner`, String(4_194_305));
  assert.equal(claimUid(uid), true);
  releaseUid(uid);
});
