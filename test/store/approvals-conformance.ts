// Store conformance for tool policies and approval requests (0023), run on every store: a tenant's
// policy replaced whole; a request filed once per call (a replay gets the first); the tenant's
// requests listed newest first by status and run, paged by cursor, never another tenant's; a
// decision recorded once with who and the note, queuing the parked run; a decided or expired
// request refusing a second decision; the engine's expiry losing to a human who came first.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { argumentsHash, type NewApproval } from '../../src/domain/approvals.ts';
import type { Store } from '../../src/store/store.ts';
import { SERVED, newRun, rejectsWith, withStore, type StoreFactory } from './conformance.ts';

export function request(
  runId: string,
  tenantId: string,
  seq: number,
  expiresAt: number,
): NewApproval {
  const args = { to: 'a@example.com', seq };
  return {
    runId,
    executionId: `${runId}.${seq}`,
    tenantId,
    agent: 'agent',
    seq,
    tool: 'send_email',
    args,
    argsHash: argumentsHash(args),
    risk: 'high',
    rule: 'approval.tools:send_*',
    reason: 'tool send_email needs approval',
    requestedAt: 1_000 + seq,
    expiresAt,
  };
}

/** A run claimed and parked on a tool wait, as the engine leaves it for an approval. */
export async function parkedRun(store: Store, tenantId: string): Promise<string> {
  const id = (await store.createRun(newRun(tenantId))).run.id;
  const [run] = await store.claimRuns({ owner: 'w', limit: 1, leaseMs: 60_000, served: SERVED });
  assert.ok(run);
  await store.commit({
    runId: id,
    leaseToken: run.leaseToken,
    expectedStateVersion: run.stateVersion,
    journal: [
      {
        seq: 1,
        kind: 'tool',
        name: 'send_email',
        status: 'waiting',
        args: { waitingReason: 'approval' },
      },
    ],
    run: { status: 'waiting', waitingReason: 'approval', releaseLease: true },
  });
  return id;
}

export function approvalsStoreConformance(factory: StoreFactory): void {
  describe(`store conformance (tool policy and approvals): ${factory.name}`, () => {
    test('tool policy: none at first, replaced whole, unknown tenant refused', () =>
      withStore(factory, async (store, tenantId) => {
        assert.equal(await store.getToolPolicy(tenantId), null);
        await store.putToolPolicy(tenantId, { deny: ['exec'], maxRisk: 'high' });
        await store.putToolPolicy(tenantId, { allow: ['search'] });
        assert.deepEqual(await store.getToolPolicy(tenantId), { allow: ['search'] });
        await rejectsWith(store.putToolPolicy('ten_missing', {}), 'tenant_not_found');
      }));

    test('requests: filed once, listed per tenant newest first with a cursor, filtered', () =>
      withStore(factory, async (store, tenantId) => {
        const far = Date.now() + 3_600_000;
        const a = await parkedRun(store, tenantId);
        const first = await store.requestApproval(request(a, tenantId, 1, far));
        assert.equal(first.status, 'pending');
        const replayed = await store.requestApproval({
          ...request(a, tenantId, 1, far),
          expiresAt: far + 1,
        });
        assert.equal(replayed.expiresAt, far, 'a replay finds the first request');
        await store.requestApproval(request(a, tenantId, 2, far));
        await store.requestApproval(request(a, tenantId, 3, far));
        const other = await store.createTenant('other', 'hash-other-approvals');
        const b = (await store.createRun(newRun(other.id))).run.id;
        await store.requestApproval(request(b, other.id, 1, far));
        const page1 = await store.listApprovals(tenantId, { status: 'pending', limit: 2 });
        assert.deepEqual(
          page1.map((r) => r.seq),
          [3, 2],
        );
        const last = page1.at(-1)!;
        const page2 = await store.listApprovals(tenantId, {
          status: 'pending',
          limit: 2,
          before: { requestedAt: last.requestedAt, executionId: last.executionId },
        });
        assert.deepEqual(
          page2.map((r) => r.seq),
          [1],
        );
        assert.deepEqual(first.args, { to: 'a@example.com', seq: 1 });
        assert.equal((await store.listApprovals(other.id, { limit: 10 })).length, 1);
        assert.equal((await store.listApprovals(tenantId, { runId: b, limit: 10 })).length, 0);
        assert.equal(await store.getApproval(a, `${a}.9`), null);
        // A run that ended (here: it succeeded) has no pending request any more.
        const c = (await store.createRun(newRun(tenantId))).run.id;
        const claimed = (
          await store.claimRuns({ owner: 'w', limit: 5, leaseMs: 60_000, served: SERVED })
        ).find((r) => r.id === c);
        assert.ok(claimed);
        await store.requestApproval(request(c, tenantId, 1, far));
        assert.equal((await store.listApprovals(tenantId, { runId: c, limit: 10 })).length, 1);
        await store.commit({
          runId: c,
          leaseToken: claimed!.leaseToken,
          expectedStateVersion: claimed!.stateVersion,
          run: { status: 'succeeded', result: 1, releaseLease: true },
        });
        const pendingOfC = await store.listApprovals(tenantId, {
          runId: c,
          status: 'pending',
          limit: 10,
        });
        assert.equal(pendingOfC.length, 0);
        assert.equal(
          (await store.listApprovals(tenantId, { runId: c, limit: 10 })).length,
          0,
          'nor is it listed among all requests as pending',
        );
      }));

    test('decisions: recorded once with who and note, the parked run queued; refusals typed', () =>
      withStore(factory, async (store, tenantId) => {
        const id = await parkedRun(store, tenantId);
        await store.requestApproval(request(id, tenantId, 1, Date.now() + 3_600_000));
        const decided = await store.decideApproval(id, `${id}.1`, {
          decision: 'approve',
          decidedBy: 'key_1',
          note: 'looks right',
        });
        assert.deepEqual(
          [decided.status, decided.decidedBy, decided.note],
          ['approved', 'key_1', 'looks right'],
        );
        assert.ok(decided.decidedAt !== null);
        assert.equal((await store.getRun(id))?.status, 'queued');
        const events = await store.listEvents(id, 0, 100);
        assert.ok(events.some((e) => e.type === 'approval.decided'));
        await rejectsWith(
          store.decideApproval(id, `${id}.1`, { decision: 'deny', decidedBy: 'key_2', note: null }),
          'approval_already_decided',
        );
        await rejectsWith(
          store.decideApproval(id, `${id}.7`, { decision: 'deny', decidedBy: 'key_2', note: null }),
          'approval_not_found',
        );
        assert.equal(
          (await store.expireApproval(id, `${id}.1`))?.status,
          'approved',
          'a decision made first stands',
        );
      }));

    test('expiry: a request past its time refuses decisions; the engine expires it once', () =>
      withStore(factory, async (store, tenantId) => {
        const id = await parkedRun(store, tenantId);
        await store.requestApproval(request(id, tenantId, 1, Date.now() - 1));
        await rejectsWith(
          store.decideApproval(id, `${id}.1`, { decision: 'approve', decidedBy: 'k', note: null }),
          'approval_expired',
        );
        const expired = await store.expireApproval(id, `${id}.1`);
        assert.equal(expired?.status, 'expired');
        assert.equal(expired?.decidedBy, null);
      }));
  });
}
