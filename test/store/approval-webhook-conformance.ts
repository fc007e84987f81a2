// Store conformance for the approver webhook and its outbox (0033), run on every store: the
// tenant's webhook set, replaced, read and removed; a notification filed with the request only when
// a webhook exists (never twice for a request and kind, a replay files none), decisions and expiries
// only when asked for; deliverers claim due ones under a lease (a claimed one is not claimed again),
// record attempts under the claim's token (a stale token records nothing), retry when due, and a
// store owned alone frees a dead owner's claims.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Store } from '../../src/store/store.ts';
import { parkedRun, request } from './approvals-conformance.ts';
import { rejectsWith, withStore, type StoreFactory } from './conformance.ts';

const URL_A = 'http://127.0.0.1:9/hook';
const HOUR_MS = 3_600_000;

async function kinds(store: Store, tenantId: string, runId: string): Promise<string[]> {
  return (await store.listApprovalNotifications(tenantId, { runId, limit: 10 }))
    .map((n) => n.kind)
    .sort();
}

export function approvalWebhookStoreConformance(factory: StoreFactory): void {
  describe(`store conformance (approver webhook): ${factory.name}`, () => {
    test('webhook: set, replaced, read, removed; unknown tenant refused', () =>
      withStore(factory, async (store, tenantId) => {
        assert.equal(await store.getApprovalWebhook(tenantId), null);
        await store.putApprovalWebhook({
          tenantId,
          url: URL_A,
          secretRef: 'secret:A',
          events: ['requested'],
        });
        const replaced = await store.putApprovalWebhook({
          tenantId,
          url: `${URL_A}2`,
          secretRef: 'secret:B',
          events: ['requested', 'expired'],
        });
        assert.deepEqual(
          [replaced.url, replaced.secretRef, replaced.events],
          [`${URL_A}2`, 'secret:B', ['requested', 'expired']],
        );
        assert.deepEqual(await store.getApprovalWebhook(tenantId), replaced);
        assert.equal(await store.deleteApprovalWebhook(tenantId), true);
        assert.equal(await store.deleteApprovalWebhook(tenantId), false);
        await rejectsWith(
          store.putApprovalWebhook({
            tenantId: 'ten_missing',
            url: URL_A,
            secretRef: 'secret:A',
            events: ['requested'],
          }),
          'tenant_not_found',
        );
      }));

    test('outbox: filed with the request only with a webhook, once per request and kind', () =>
      withStore(factory, async (store, tenantId) => {
        const far = Date.now() + HOUR_MS;
        // Parked first: a decided run is queued again and would be the next one claimed.
        const before = await parkedRun(store, tenantId);
        const a = await parkedRun(store, tenantId);
        const b = await parkedRun(store, tenantId);
        const c = await parkedRun(store, tenantId);
        await store.requestApproval(request(before, tenantId, 1, far));
        assert.deepEqual(await kinds(store, tenantId, before), [], 'no webhook: nothing filed');

        await store.putApprovalWebhook({
          tenantId,
          url: URL_A,
          secretRef: 'secret:A',
          events: ['requested'],
        });
        await store.requestApproval(request(a, tenantId, 1, far));
        await store.requestApproval(request(a, tenantId, 1, far)); // a replay files it again
        const [filed] = await store.listApprovalNotifications(tenantId, { runId: a, limit: 10 });
        assert.equal(filed?.id, `apn_${a}.1.requested`);
        assert.deepEqual(
          [filed?.status, filed?.attempts, filed?.url, filed?.executionId],
          ['pending', 0, URL_A, `${a}.1`],
        );
        const payload = filed!.payload as Record<string, unknown>;
        assert.equal(payload.type, 'approval.requested');
        assert.equal(payload.tool, 'send_email');
        assert.deepEqual(payload.decide, {
          method: 'POST',
          path: `/v1/runs/${a}/approvals/${a}.1`,
        });
        await store.decideApproval(a, `${a}.1`, {
          decision: 'approve',
          decidedBy: 'k',
          note: null,
        });
        assert.deepEqual(await kinds(store, tenantId, a), ['requested'], 'decisions not asked for');

        await store.putApprovalWebhook({
          tenantId,
          url: URL_A,
          secretRef: 'secret:A',
          events: ['requested', 'decided', 'expired'],
        });
        await store.requestApproval(request(b, tenantId, 1, far));
        await store.decideApproval(b, `${b}.1`, { decision: 'deny', decidedBy: 'k', note: 'no' });
        assert.deepEqual(await kinds(store, tenantId, b), ['decided', 'requested']);
        const decided = (
          await store.listApprovalNotifications(tenantId, { runId: b, limit: 10 })
        ).find((n) => n.kind === 'decided')!.payload as Record<string, unknown>;
        assert.deepEqual([decided.status, decided.note], ['denied', 'no']);

        await store.requestApproval(request(c, tenantId, 1, Date.now() - 1));
        await store.expireApproval(c, `${c}.1`);
        await store.expireApproval(c, `${c}.1`);
        assert.deepEqual(await kinds(store, tenantId, c), ['expired', 'requested']);
        const other = await store.createTenant('other-webhook', 'hash-other-webhook');
        assert.equal((await store.listApprovalNotifications(other.id, { limit: 10 })).length, 0);
      }));

    test('delivery: claimed under a lease, attempts recorded under its token, retried when due', () =>
      withStore(factory, async (store, tenantId) => {
        await store.putApprovalWebhook({
          tenantId,
          url: URL_A,
          secretRef: 'secret:A',
          events: ['requested'],
        });
        const id = await parkedRun(store, tenantId);
        await store.requestApproval(request(id, tenantId, 1, Date.now() + HOUR_MS));
        const now = Date.now() + 1_000;
        const [claim] = await store.claimApprovalNotifications('d1', now, 10_000, 10);
        assert.ok(claim);
        assert.deepEqual(
          await store.claimApprovalNotifications('d2', now, 10_000, 10),
          [],
          'a claimed notification is not claimed again while the lease holds',
        );
        const failed = { delivered: false as const, error: 'HTTP 500', retryAt: now + 5_000 };
        assert.equal(
          await store.finishApprovalNotification(claim.id, claim.claimToken - 1, failed, now),
          false,
          'a stale token records nothing',
        );
        assert.equal(
          await store.finishApprovalNotification(claim.id, claim.claimToken, failed, now),
          true,
        );
        assert.deepEqual(await store.claimApprovalNotifications('d2', now + 1, 10_000, 10), []);
        const [retry] = await store.claimApprovalNotifications('d2', now + 5_000, 10_000, 10);
        assert.deepEqual([retry?.attempts, retry?.lastError], [1, 'HTTP 500']);
        assert.ok(retry!.claimToken > claim.claimToken);
        // The first deliverer's token is stale now: its late record is refused.
        assert.equal(
          await store.finishApprovalNotification(claim.id, claim.claimToken, failed, now),
          false,
        );
        // A store owned alone frees the dead owner's claim at once.
        assert.equal(await store.releaseApprovalNotificationClaims('d3'), 1);
        const [again] = await store.claimApprovalNotifications('d3', now + 5_000, 10_000, 10);
        assert.ok(again);
        assert.equal(
          await store.finishApprovalNotification(
            again.id,
            again.claimToken,
            { delivered: true },
            now + 6_000,
          ),
          true,
        );
        const [done] = await store.listApprovalNotifications(tenantId, { limit: 10 });
        assert.deepEqual(
          [done?.status, done?.attempts, done?.deliveredAt],
          ['delivered', 2, now + 6_000],
        );
        assert.deepEqual(
          await store.claimApprovalNotifications('d3', now + HOUR_MS, 10_000, 10),
          [],
        );
      }));
  });
}
