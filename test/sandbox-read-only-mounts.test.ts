// External mounts declared read-only in a sandbox profile (issue 21), on the namespace tier: the
// host directory is readable at its target inside the sandbox, and neither a write into it nor a
// removal reaches the host; a profile that asks for them on another tier, or with a relative path
// or a target over /workspace, is refused when it is defined.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { defineSandboxProfile } from '../src/sandbox/profile.ts';
import { newManager, skipUnless } from './support/sandbox.ts';

const { manager, cleanup } = newManager();
after(cleanup);

test('a read-only mount is readable inside the sandbox and never written through', {
  skip: skipUnless('namespace'),
}, async (t) => {
  const host = mkdtempSync(join(tmpdir(), 'keel-ro-'));
  t.after(() => rmSync(host, { recursive: true, force: true }));
  writeFileSync(join(host, 'fact.txt'), 'the sky is blue');
  chmodSync(host, 0o777); // even a directory anyone may write stays read-only through the mount
  chmodSync(join(host, 'fact.txt'), 0o666);
  const profile = defineSandboxProfile({
    name: 'ro-mounts',
    tier: 'namespace',
    readOnlyMounts: [{ source: host, target: '/mnt/shared' }],
  });
  const { value } = await manager.call(
    'run_ro_mounts',
    profile,
    (env) =>
      env.exec({
        argv: [
          '/bin/sh',
          '-c',
          'cat /mnt/shared/fact.txt; echo; ' +
            '(echo changed > /mnt/shared/fact.txt) 2>/dev/null && echo wrote || echo refused; ' +
            '(touch /mnt/shared/new.txt) 2>/dev/null && echo created || echo refused; ' +
            '(rm -f /mnt/shared/fact.txt) 2>/dev/null; echo done',
        ],
      }),
    { snapshot: false },
  );
  assert.equal(value.exitCode, 0, value.stderr);
  assert.deepEqual(value.stdout.trim().split('\n'), [
    'the sky is blue',
    'refused',
    'refused',
    'done',
  ]);
  assert.equal(readFileSync(join(host, 'fact.txt'), 'utf8'), 'the sky is blue');
  assert.deepEqual(readdirSync(host), ['fact.txt']);
  await manager.endRun('run_ro_mounts');
});

test('read-only mounts are checked when the profile is defined', () => {
  const mount =
    (m: unknown, tier = 'namespace') =>
    () =>
      defineSandboxProfile({ name: 'bad', tier, readOnlyMounts: [m] } as never);
  assert.throws(mount({ source: '/srv/data', target: '/mnt' }, 'process'));
  assert.throws(mount({ source: '/srv/data', target: '/mnt' }, 'gvisor'));
  assert.throws(mount({ source: 'srv/data', target: '/mnt' }));
  assert.throws(mount({ source: '/srv/../etc', target: '/mnt' }));
  assert.throws(mount({ source: '/srv/\0data', target: '/mnt' }));
  assert.throws(mount({ source: '/srv/data', target: '/workspace/data' }));
  assert.throws(mount({ source: '/srv/data', target: '/' }));
  assert.throws(mount({ source: '/srv/data', target: '/mnt', rw: true }));
  assert.deepEqual(
    defineSandboxProfile({ name: 'ok', readOnlyMounts: [{ source: '/srv/data', target: '/mnt' }] })
      .readOnlyMounts,
    [{ source: '/srv/data', target: '/mnt' }],
  );
});
