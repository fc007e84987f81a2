// Conformance of the archive area (retention and archival) on every store: due runs by day and by
// count, one claim per run at a time and fenced writes, watermarks derived from the recorded chunks
// (a gap holds them back whatever arrives after it), removal of live rows never past a watermark,
// and the archiver end to end with an injected failure of chunk 2 of 3, detected and re-sent.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ArchiveReader, restoreFromArchive } from '../../src/archive/archive-reader.ts';
import { withArchiveReads } from '../../src/archive/archive-reads.ts';
import { Archiver, DAY_MS } from '../../src/archive/archiver.ts';
import { ManualClock } from '../../src/domain/clock.ts';
import { PAYLOAD_MEDIA_TYPE } from '../../src/domain/payload-ref.ts';
import { FileArtifactStore } from '../../src/sandbox/file-artifact-store.ts';
import { archiveAreaOf } from '../../src/store/archive-area.ts';
import type { ArtifactStore } from '../../src/store/artifact-store.ts';
import type { Store } from '../../src/store/store.ts';
import { newRun, rejectsWith, SERVED, withStore, type StoreFactory } from './conformance.ts';

/** Creates an ended run with `entries` journal entries (positions 0..entries-1) and `events` events. */
async function endedRun(
  store: Store,
  tenantId: string,
  entries: number,
  events = 2,
): Promise<string> {
  const id = (await store.createRun(newRun(tenantId))).run.id;
  const [claimed] = await store.claimRuns({
    owner: 'w',
    limit: 1,
    leaseMs: 60_000,
    served: SERVED,
  });
  assert.equal(claimed?.id, id);
  await store.commit({
    runId: id,
    leaseToken: claimed.leaseToken,
    expectedStateVersion: claimed.stateVersion,
    journal: Array.from({ length: entries }, (_, seq) => ({
      seq,
      kind: 'step' as const,
      name: `s${seq}`,
      status: 'succeeded' as const,
      result: { seq, text: 'x'.repeat(50) },
    })),
    events: Array.from({ length: events }, (_, i) => ({ type: 'step', data: { i } })),
    run: { status: 'succeeded', result: 'done', releaseLease: true },
  });
  return id;
}

/** An artifact store whose `put` fails on the listed calls (1-based), as a broken disk would. */
function failingPuts(inner: ArtifactStore, failOn: Set<number>): ArtifactStore {
  let puts = 0;
  return {
    put: (bytes) =>
      failOn.has(++puts) ? Promise.reject(new Error('injected failure')) : inner.put(bytes),
    get: (sha) => inner.get(sha),
    has: (sha) => inner.has(sha),
    setRef: (name, sha) => inner.setRef(name, sha),
    getRef: (name) => inner.getRef(name),
  };
}

export function archiveStoreConformance(factory: StoreFactory): void {
  describe(`archive conformance: ${factory.name}`, () => {
    test('due runs, claims, gap-bounded watermarks and removal up to them', () =>
      withStore(factory, async (store, tenantId) => {
        const archives = archiveAreaOf(store);
        const [a, b, c] = [
          await endedRun(store, tenantId, 5),
          await endedRun(store, tenantId, 5),
          await endedRun(store, tenantId, 5),
        ];
        const due = (keepRuns: number | null, endedBefore: number | null) =>
          archives
            .dueRuns({ tenantId, keepRuns, endedBefore, now: Date.now(), limit: 10 })
            .then((rows) => rows.map((r) => r.runId));
        assert.deepEqual(await due(1, null), [a, b], 'all but the newest one');
        assert.deepEqual(await due(5, null), []);
        assert.deepEqual((await due(null, Date.now() + 1)).sort(), [a, b, c].sort());
        assert.deepEqual(await due(null, 0), []);

        const claim = await archives.claimArchival(a, tenantId, 'p1', 60_000);
        assert.ok(claim);
        assert.equal(await archives.claimArchival(a, tenantId, 'p2', 60_000), null, 'one claimer');
        assert.deepEqual(await due(1, null), [b], 'a claimed run is not offered again');
        await rejectsWith(
          archives.setArchiveExtent(a, claim.claimToken + 1, {
            journalLast: 4,
            eventsLast: 2,
            snapshotSha256: 'f'.repeat(64),
          }),
          'stale_write',
        );
        // Pruning before the snapshot is written removes nothing.
        assert.deepEqual(await archives.pruneArchived(a, claim.claimToken), {
          journalPruned: 0,
          eventsPruned: 0,
          complete: false,
        });
        const again = await archives.claimArchival(a, tenantId, 'p1', 60_000);
        assert.ok(again && again.claimToken > claim.claimToken, 'a new claim, a new token');
        await archives.setArchiveExtent(a, again.claimToken, {
          journalLast: 4,
          eventsLast: 2,
          snapshotSha256: 'f'.repeat(64),
        });
        const chunk = (first: number, last: number) => ({
          runId: a,
          stream: 'journal' as const,
          firstSeq: first,
          lastSeq: last,
          sha256: 'e'.repeat(64),
          bytes: 10,
          records: last - first + 1,
        });
        await rejectsWith(archives.recordChunk(claim.claimToken, chunk(0, 1)), 'stale_write');
        let record = await archives.recordChunk(again.claimToken, chunk(0, 1));
        assert.equal(record.journalWatermark, 1);
        record = await archives.recordChunk(again.claimToken, chunk(4, 4));
        assert.equal(record.journalWatermark, 1, 'chunk 3 arrived, chunk 2 missing: the gap holds');
        const pruned = await archives.pruneArchived(a, again.claimToken);
        assert.deepEqual(pruned, { journalPruned: 2, eventsPruned: 0, complete: false });
        assert.deepEqual(
          (await store.loadJournal(a)).map((e) => e.seq),
          [2, 3, 4],
          'nothing past the watermark is removed',
        );
        const third = await archives.claimArchival(a, tenantId, 'p2', 60_000);
        assert.ok(third, 'pruning freed the claim');
        record = await archives.recordChunk(third.claimToken, chunk(2, 3));
        assert.equal(record.journalWatermark, 4, 'the gap is filled');
        record = await archives.recordChunk(third.claimToken, { ...chunk(0, 2), stream: 'events' });
        assert.equal(record.eventsWatermark, 2);
        assert.deepEqual(await archives.pruneArchived(a, third.claimToken), {
          journalPruned: 3,
          eventsPruned: 2,
          complete: true,
        });
        assert.equal((await store.loadJournal(a)).length, 0);
        assert.ok((await archives.getArchive(a))?.prunedAt);
        assert.equal(await archives.claimArchival(a, tenantId, 'p1', 60_000), null, 'archived');
        assert.equal((await archives.listChunks(a)).length, 4);

        await archives.putRetention(tenantId, { keepDays: 3, keepRuns: null });
        assert.deepEqual(await archives.getRetention(tenantId), { keepDays: 3, keepRuns: null });
        assert.equal(await archives.deleteRetention(tenantId), true);
        assert.equal(await archives.getRetention(tenantId), null);
        const payload = Buffer.from('a payload the run references');
        const sha256 = createHash('sha256').update(payload).digest('hex');
        await store.putPayloadChunk(sha256, 0, payload);
        await store.sealPayload(
          a,
          { sha256, size: payload.length, mediaType: PAYLOAD_MEDIA_TYPE, chunks: 1 },
          1_000_000,
        );
        const storage = (await archives.storageByTenant()).find((s) => s.tenantId === tenantId);
        assert.ok(storage && storage.journalBytes > 0 && storage.archiveBytes === 40);
        assert.equal(storage.payloadBytes, payload.length);
      }));

    test('archiver: chunk 2 of 3 fails, the gap is detected and re-sent; read-back and restore', () =>
      withStore(factory, async (store, tenantId) => {
        const dir = mkdtempSync(join(tmpdir(), 'keel-archive-'));
        try {
          const files = new FileArtifactStore(dir);
          const archives = archiveAreaOf(store);
          const id = await endedRun(store, tenantId, 9, 4);
          const journal = await store.loadJournal(id);
          const events = await store.listEvents(id, 0, 100);
          const clock = new ManualClock(Date.now());
          // Puts: 1 snapshot, 2 journal chunk 1, 3 journal chunk 2 (fails), 4 journal chunk 3, ...
          const artifacts = failingPuts(files, new Set([3]));
          const archiver = new Archiver({
            store,
            archives,
            artifacts,
            clock,
            owner: 'archiver-1',
            defaults: { keepDays: 1, keepRuns: null },
            chunkPositions: 3,
            intervalMs: 60_000,
          });
          let report = await archiver.pass();
          assert.equal(report.chunksStored, 0, 'nothing is due before a day has passed');
          clock.advance(DAY_MS + 1);
          report = await archiver.pass();
          assert.equal(report.chunkFailures, 1);
          assert.equal(report.runsIncomplete, 1);
          const record = await archives.getArchive(id);
          assert.equal(record?.journalWatermark, 2, 'the watermark stops before the failed chunk');
          assert.equal(record?.journalLast, 8);
          assert.deepEqual(
            (await store.loadJournal(id)).map((e) => e.seq),
            [3, 4, 5, 6, 7, 8],
          );
          const restored = await restoreFromArchive(files, id);
          assert.equal(restored?.status, 'incomplete');
          assert.deepEqual(restored?.missing, [{ stream: 'journal', firstSeq: 3, lastSeq: 5 }]);

          const api = withArchiveReads(store, new ArchiveReader(archives, files));
          assert.deepEqual((await api.getRun(id))?.archive, { complete: false });
          assert.deepEqual(await api.loadJournal(id), journal, 'read back whole across the gap');

          report = await archiver.pass();
          assert.equal(report.runsArchived, 1, 'the gap was re-sent');
          assert.equal(report.chunkFailures, 0);
          assert.equal((await store.loadJournal(id)).length, 0);
          assert.deepEqual((await api.getRun(id))?.archive, { complete: true });
          assert.deepEqual(await api.loadJournal(id), journal);
          assert.deepEqual(await api.listEvents(id, 0, 100), events);
          assert.deepEqual(await api.listEvents(id, 2, 1), events.slice(2, 3));
          const whole = await restoreFromArchive(files, id);
          assert.equal(whole?.status, 'complete');
          assert.deepEqual(whole?.journal, journal);
          assert.deepEqual(whole?.events, events);
          assert.equal(whole?.run.status, 'succeeded');
          assert.equal(await restoreFromArchive(files, 'run_missing'), null);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }));

    test('archiver: a tenant override keeps runs the platform default would archive', () =>
      withStore(factory, async (store, tenantId) => {
        const dir = mkdtempSync(join(tmpdir(), 'keel-archive-'));
        try {
          const archives = archiveAreaOf(store);
          const id = await endedRun(store, tenantId, 2);
          const clock = new ManualClock(Date.now());
          const archiver = new Archiver({
            store,
            archives,
            artifacts: new FileArtifactStore(dir),
            clock,
            owner: 'archiver-1',
            defaults: { keepDays: null, keepRuns: 0 },
            intervalMs: 60_000,
          });
          await archives.putRetention(tenantId, { keepDays: 30, keepRuns: null });
          // An upload that never sealed: kept within the grace, collected by a later pass.
          const orphan = 'e'.repeat(64);
          await store.putPayloadChunk(orphan, 0, Buffer.from('never sealed'));
          assert.equal((await archiver.pass()).payloadsCollected, 0);
          assert.ok(await store.readPayloadChunk(orphan, 0), 'within the grace: kept');
          clock.advance(29 * DAY_MS);
          assert.equal((await archiver.pass()).runsArchived, 0);
          assert.equal(await store.readPayloadChunk(orphan, 0), null, 'past the grace: collected');
          assert.equal((await store.loadJournal(id)).length, 2);
          clock.advance(2 * DAY_MS);
          assert.equal((await archiver.pass()).runsArchived, 1);
          assert.equal((await store.loadJournal(id)).length, 0);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }));
  });
}
