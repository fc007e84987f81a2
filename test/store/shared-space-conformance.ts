// Store conformance for the shared space of a run tree (issue 21), run on every store: versions
// count from 1 and a write must name the latest; racing writers with one expected version let
// exactly one in and tell the others the current version; a write id applied again answers its
// first version (no false conflict after a crash); trees do not see each other's files; a list
// gives each file's latest version by path, under a prefix.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SharedFileWrite } from '../../src/domain/shared-space.ts';
import { newRun, withStore, type StoreFactory } from './conformance.ts';

export function sharedSpaceStoreConformance(factory: StoreFactory): void {
  describe(`store conformance (shared space): ${factory.name}`, () => {
    test('compare-and-set versions, racing writers, idempotent write ids, tree isolation', () =>
      withStore(factory, async (store, tenantId) => {
        const root = (await store.createRun(newRun(tenantId))).run.id;
        const other = (await store.createRun(newRun(tenantId))).run.id;
        const write = (over: Partial<SharedFileWrite>): SharedFileWrite => ({
          rootRunId: root,
          tenantId,
          path: 'notes/plan.md',
          content: 'v1',
          expectedVersion: 0,
          writtenByRun: root,
          writeId: `${root}.1`,
          ...over,
        });
        assert.equal(await store.readSharedFile(root, 'notes/plan.md'), null);
        assert.deepEqual(await store.writeSharedFile(write({})), {
          ok: true,
          version: 1,
          duplicate: false,
        });
        assert.deepEqual(
          await store.writeSharedFile(write({ content: 'again' })),
          { ok: true, version: 1, duplicate: true },
          'the same write id answers its first version, even with other content',
        );
        assert.deepEqual(
          await store.writeSharedFile(write({ writeId: `${root}.2`, content: 'x' })),
          { ok: false, currentVersion: 1 },
          'must-not-exist on an existing file is a conflict',
        );
        const racers = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            store.writeSharedFile(
              write({
                expectedVersion: 1,
                content: `racer ${i}`,
                writeId: `child${i}.1`,
                writtenByRun: `child${i}`,
              }),
            ),
          ),
        );
        const winners = racers.filter((r) => r.ok);
        assert.equal(winners.length, 1, 'exactly one racer wins');
        assert.deepEqual(winners[0], { ok: true, version: 2, duplicate: false });
        for (const r of racers.filter((r) => !r.ok))
          assert.deepEqual(r, { ok: false, currentVersion: 2 });
        const winner = racers.findIndex((r) => r.ok);
        const file = await store.readSharedFile(root, 'notes/plan.md');
        assert.equal(file?.version, 2);
        assert.equal(file?.content, `racer ${winner}`);
        assert.equal(file?.writtenByRun, `child${winner}`);
        assert.equal(file?.size, Buffer.byteLength(`racer ${winner}`));

        assert.deepEqual(
          await store.writeSharedFile(write({ expectedVersion: 5, writeId: 'late.1' })),
          { ok: false, currentVersion: 2 },
          'a version ahead of the latest is a conflict too',
        );
        const text = 'ünïcødé ✓ and a \u0000 byte';
        assert.equal(
          (await store.writeSharedFile(write({ path: 'a/b.txt', content: text, writeId: 'w.3' })))
            .ok,
          true,
        );
        assert.equal((await store.readSharedFile(root, 'a/b.txt'))?.content, text);
        await store.writeSharedFile(write({ path: 'a/c.txt', content: '', writeId: 'w.4' }));
        assert.equal((await store.readSharedFile(root, 'a/c.txt'))?.content, '');

        assert.equal(await store.readSharedFile(other, 'notes/plan.md'), null, 'another tree');
        assert.deepEqual(await store.listSharedFiles(other, '', 100), []);
        assert.deepEqual(
          await store.writeSharedFile(write({ rootRunId: other, writeId: `${root}.1` })),
          { ok: true, version: 1, duplicate: false },
          'write ids and versions are per tree',
        );

        const listed = await store.listSharedFiles(root, '', 100);
        assert.deepEqual(
          listed.map((f) => [f.path, f.version]),
          [
            ['a/b.txt', 1],
            ['a/c.txt', 1],
            ['notes/plan.md', 2],
          ],
        );
        assert.deepEqual(
          (await store.listSharedFiles(root, 'a/', 100)).map((f) => f.path),
          ['a/b.txt', 'a/c.txt'],
        );
        assert.deepEqual(
          (await store.listSharedFiles(root, '', 1)).map((f) => f.path),
          ['a/b.txt'],
          'the limit holds',
        );
        assert.deepEqual(await store.listSharedFiles(root, '%', 100), [], 'no LIKE wildcards');
      }));
  });
}
