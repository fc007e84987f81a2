// Store conformance for large payloads (0039), run on every store: chunks stored and read back
// byte for byte; a seal refuses a payload with a missing chunk and a run past its byte limit; one
// payload per content however many runs reference it; collection deletes only what no run
// references, and chunks of an upload that never sealed. Then the offload wrapper on the same
// store: a large input, result and output are stored as references and read back as values, an
// ordinary value shaped like a reference survives, an oversize result fails the run with a typed
// error in the same commit.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { PAYLOAD_MEDIA_TYPE, asPayloadRef } from '../../src/domain/payload-ref.ts';
import { withPayloads } from '../../src/store/payload-offload.ts';
import { readPayloadText } from '../../src/store/payload-io.ts';
import {
  SERVED,
  claimAndCommit,
  newRun,
  rejectsWith,
  withStore,
  type StoreFactory,
} from './conformance.ts';

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const FAR_FUTURE = Date.now() + 3_600_000;
const LIMITS = { inlineMaxBytes: 1024, storedMaxBytes: 64 * 1024, runMaxBytes: 96 * 1024 };

export function payloadsStoreConformance(factory: StoreFactory): void {
  describe(`store conformance (payloads): ${factory.name}`, () => {
    test('chunks round-trip; seal needs every chunk and fits the run limit; dedup; collection', () =>
      withStore(factory, async (store) => {
        const parts = [Buffer.from([0, 1, 2, 255]), Buffer.alloc(3000, 7)];
        const whole = Buffer.concat(parts);
        const info = {
          sha256: sha(whole),
          size: whole.length,
          mediaType: PAYLOAD_MEDIA_TYPE,
          chunks: 2,
        };
        await store.putPayloadChunk(info.sha256, 0, parts[0]!);
        assert.equal(await store.getPayload(info.sha256), null, 'unsealed: not a payload yet');
        await rejectsWith(store.sealPayload('run-a', info, 1_000_000), 'payload_incomplete');
        await store.putPayloadChunk(info.sha256, 1, parts[1]!);
        await rejectsWith(store.sealPayload('run-a', info, 100), 'run_payloads_too_large');
        await store.sealPayload('run-a', info, 1_000_000);
        await store.sealPayload('run-a', info, whole.length); // sealed again: counted once
        await store.sealPayload('run-b', info, 1_000_000);
        assert.deepEqual(await store.getPayload(info.sha256), info);
        const read = [
          Buffer.from((await store.readPayloadChunk(info.sha256, 0))!),
          Buffer.from((await store.readPayloadChunk(info.sha256, 1))!),
        ];
        assert.deepEqual(Buffer.concat(read), whole);
        assert.equal(await store.readPayloadChunk(info.sha256, 2), null);
        assert.equal(await store.runReferencesPayload('run-a', info.sha256), true);
        assert.equal(await store.runReferencesPayload('run-c', info.sha256), false);
        // An upload that never sealed.
        await store.putPayloadChunk('f'.repeat(64), 0, Buffer.from('orphan'));

        // Nothing is collected before the grace time; a payload some run references stays.
        await store.releaseRunPayloads('run-a');
        assert.deepEqual(await store.collectUnreferencedPayloads(0), []);
        assert.equal(await store.releaseRunPayloads('run-b'), 1);
        assert.deepEqual(await store.collectUnreferencedPayloads(FAR_FUTURE), [info.sha256]);
        assert.equal(await store.getPayload(info.sha256), null);
        assert.equal(await store.readPayloadChunk(info.sha256, 0), null);
        assert.equal(await store.readPayloadChunk('f'.repeat(64), 0), null, 'orphan chunk gone');
      }));

    test('references of runs that no longer exist are collected; those of live runs stay', () =>
      withStore(factory, async (store, tenantId) => {
        const live = newRun(tenantId);
        await store.createRun(live);
        const bytes = Buffer.from('"x"');
        const info = { sha256: sha(bytes), size: 3, mediaType: PAYLOAD_MEDIA_TYPE, chunks: 1 };
        await store.putPayloadChunk(info.sha256, 0, bytes);
        await store.sealPayload('gone-run', info, 1_000);
        await store.sealPayload(live.id, info, 1_000);
        assert.deepEqual(await store.collectUnreferencedPayloads(FAR_FUTURE), []);
        assert.equal(await store.runReferencesPayload('gone-run', info.sha256), false);
        assert.equal(await store.runReferencesPayload(live.id, info.sha256), true);
      }));

    test('offload: large values become references and read back whole; dedup across runs', () =>
      withStore(factory, async (raw, tenantId) => {
        const store = withPayloads(raw, LIMITS);
        const big = { text: 'é'.repeat(5000), n: [1, 2, 3] };
        const lookalike = { $keelPayload: { sha256: '0'.repeat(64), size: 1, mediaType: 'x' } };
        const a = newRun(tenantId, { input: big });
        const created = await store.createRun(a);
        assert.deepEqual(created.run.input, big);
        const stored = asPayloadRef((await raw.getRun(a.id))?.input);
        assert.ok(stored !== undefined, 'the row holds a reference');
        assert.equal(stored.size, Buffer.byteLength(JSON.stringify(big)));
        assert.deepEqual(JSON.parse(await readPayloadText(raw, stored.sha256)), big);
        assert.deepEqual((await store.getRun(a.id))?.input, big);

        await claimAndCommit(store, a.id, {
          journal: [
            { seq: 1, kind: 'tool', name: 'big', status: 'succeeded', args: {}, result: big },
            { seq: 2, kind: 'step', name: 'odd', status: 'succeeded', result: lookalike },
            { seq: 3, kind: 'step', name: 'small', status: 'succeeded', result: 'ok' },
          ],
          run: { status: 'succeeded', result: big, releaseLease: true },
          events: [{ type: 'run.succeeded', data: { status: 'succeeded', result: big } }],
        });
        const rawJournal = await raw.loadJournal(a.id);
        assert.equal(asPayloadRef(rawJournal[0]?.result)?.sha256, stored.sha256, 'one payload');
        assert.ok(asPayloadRef(rawJournal[1]?.result) !== undefined, 'a lookalike is stored too');
        assert.equal(rawJournal[2]?.result, 'ok');
        const journal = await store.loadJournal(a.id);
        assert.deepEqual(
          journal.map((e) => e.result),
          [big, lookalike, 'ok'],
        );
        const run = await store.getRun(a.id);
        assert.equal(run?.status, 'succeeded');
        assert.deepEqual(run?.result, big);
        const events = await store.listEvents(a.id, 0, 100);
        assert.deepEqual(events.find((e) => e.type === 'run.succeeded')?.data, {
          status: 'succeeded',
          result: big,
        });
        // Another run with the same input: the same payload, referenced by both.
        const b = newRun(tenantId, { input: big });
        await store.createRun(b);
        assert.equal(asPayloadRef((await raw.getRun(b.id))?.input)?.sha256, stored.sha256);
        assert.equal(await raw.runReferencesPayload(b.id, stored.sha256), true);
      }));

    test('offload: an oversize input is refused; an oversize result fails the run, typed', () =>
      withStore(factory, async (raw, tenantId) => {
        const store = withPayloads(raw, LIMITS);
        const huge = 'x'.repeat(LIMITS.storedMaxBytes + 1);
        await rejectsWith(store.createRun(newRun(tenantId, { input: huge })), 'result_too_large');
        const a = newRun(tenantId);
        await store.createRun(a);
        await claimAndCommit(store, a.id, {
          journal: [{ seq: 1, kind: 'tool', name: 'huge', status: 'succeeded', result: huge }],
          run: { counters: { steps: 1 } },
        });
        const run = await store.getRun(a.id);
        assert.equal(run?.status, 'failed');
        assert.equal(run?.error?.code, 'result_too_large');
        const [entry] = await store.loadJournal(a.id);
        assert.equal(entry?.status, 'failed');
        assert.equal(entry?.error?.code, 'result_too_large');
        assert.equal(entry?.result, null);
        // The run's total: two distinct 40 KiB results pass 96 KiB? No: 80 KiB fits, a third does not.
        const b = newRun(tenantId);
        await store.createRun(b);
        const [claimed] = await store.claimRuns({
          owner: 'w',
          limit: 1,
          leaseMs: 60_000,
          served: SERVED,
        });
        assert.equal(claimed?.id, b.id);
        let version = claimed.stateVersion;
        for (const [i, letter] of ['a', 'b', 'c'].entries()) {
          const outcome = await store.commit({
            runId: b.id,
            leaseToken: claimed.leaseToken,
            expectedStateVersion: version,
            journal: [
              {
                seq: i + 1,
                kind: 'tool',
                name: 't',
                status: 'succeeded',
                result: letter.repeat(40 * 1024),
              },
            ],
          });
          version = outcome.stateVersion;
        }
        const ended = await store.getRun(b.id);
        assert.equal(ended?.status, 'failed');
        assert.equal(ended?.error?.code, 'run_payloads_too_large');
        const journal = await store.loadJournal(b.id);
        assert.deepEqual(
          journal.map((e) => e.status),
          ['succeeded', 'succeeded', 'failed'],
        );
        assert.equal(journal[1]?.result, 'b'.repeat(40 * 1024));
      }));
  });
}
