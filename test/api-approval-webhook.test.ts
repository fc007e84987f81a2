// The approver webhook over real HTTP, delivered to a real HTTP server on loopback: the webhook is
// set by a tenant admin (an origin off the allowlist, a missing secret and a key without the admin
// scope are refused; a generated secret is shown once), a parked call's request is POSTed signed
// (HMAC over the exact body), a receiver that fails first gets it again after backoff with the same
// Idempotency-Key, the deliveries list shows the attempts, and the decision is notified too.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { verifyWebhookSignature } from '../src/domain/approval-webhooks.ts';
import { SYSTEM_CLOCK } from '../src/domain/clock.ts';
import { ApprovalNotifier } from '../src/engine/approval-notifier.ts';
import { EnvKeyProvider } from '../src/secrets/key-provider.ts';
import { SecretVault } from '../src/secrets/secret-vault.ts';
import { scheduleAreaOf } from '../src/store/schedule-area.ts';
import { until } from './support/distributed.ts';
import { mailer } from './fixtures/approval-agents.ts';
import { startKeel } from './support/keel-server.ts';
import { startWebhookReceiver } from './support/webhook-receiver.ts';

const DELIVERY_TIMEOUT_MS = 30_000;

test('approver webhook: configured, signed, retried after a failure with the same key, decisions notified', async (t) => {
  const secretsKey = randomBytes(32).toString('base64');
  const keel = await startKeel({ agents: [mailer], secretsKey });
  t.after(() => keel.close());
  // The receiver fails the first delivery, then accepts.
  const receiver = await startWebhookReceiver((i) => (i === 0 ? 500 : 200));
  t.after(() => receiver.close());
  const url = `${receiver.origin}/approvals`;
  const tenantId = (await keel.request('GET', '/v1/admin/tenants', undefined, keel.adminKey)).body
    .tenants[0].id as string;

  const refusedOrigin = await keel.request('PUT', '/v1/approval-webhook', { url });
  assert.equal(refusedOrigin.status, 400);
  assert.equal(refusedOrigin.body.error.code, 'webhook_not_allowed');
  await scheduleAreaOf(keel.store).setWebhookAllowlist(tenantId, [receiver.origin]);
  const missing = await keel.request('PUT', '/v1/approval-webhook', {
    url,
    secret: 'secret:NOPE',
  });
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error.code, 'secret_not_found');
  const reader = (
    await keel.request('POST', '/v1/keys', { name: 'reader', scopes: ['read', 'operate'] })
  ).body.secret as string;
  assert.equal((await keel.request('PUT', '/v1/approval-webhook', { url }, reader)).status, 403);
  assert.equal((await keel.request('GET', '/v1/approval-webhook')).body.webhook, null);

  const set = await keel.request('PUT', '/v1/approval-webhook', { url, events: ['decided'] });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  const signingSecret = set.body.signingSecret as string;
  assert.ok(signingSecret.length >= 32);
  assert.deepEqual(set.body.webhook.events, ['requested', 'decided']);
  assert.equal(set.body.webhook.secret, 'secret:APPROVAL_WEBHOOK_SECRET');
  const read = await keel.request('GET', '/v1/approval-webhook');
  assert.equal(read.body.webhook.url, url);
  assert.ok(!JSON.stringify(read.body).includes(signingSecret), 'the secret is shown once only');

  const notifier = new ApprovalNotifier({
    store: keel.store,
    clock: SYSTEM_CLOCK,
    allowlist: (tenant) => scheduleAreaOf(keel.store).getWebhookAllowlist(tenant),
    revealSecret: (tenant, ref) =>
      new SecretVault(keel.store, new EnvKeyProvider(secretsKey)).reveal(tenant, ref),
    tickMs: 50,
  });
  await notifier.start();
  t.after(() => notifier.stop());

  await keel.request('PUT', '/v1/policy', { approval: { tools: ['send_email'] } });
  const created = await keel.request('POST', '/v1/runs', {
    agent: 'mailer',
    input: { to: 'ann@example.com' },
  });
  const runId = created.body.id as string;
  await keel.waitForRun(runId, (r) => r.waitingReason === 'approval');

  await until(
    'two delivery attempts',
    async () => (receiver.received.length >= 2 ? true : undefined),
    DELIVERY_TIMEOUT_MS,
  );
  const [first, second] = receiver.received;
  assert.deepEqual([first!.answered, second!.answered], [500, 200]);
  assert.equal(first!.body, second!.body, 'every attempt sends the same bytes');
  assert.equal(first!.headers['idempotency-key'], `apn_${runId}.1.requested`);
  assert.equal(second!.headers['idempotency-key'], first!.headers['idempotency-key']);
  assert.equal(second!.headers['keel-event'], 'approval.requested');
  const nowS = Math.floor(Date.now() / 1000);
  for (const attempt of [first!, second!])
    assert.ok(
      verifyWebhookSignature(
        signingSecret,
        String(attempt.headers['keel-signature']),
        attempt.body,
        nowS,
      ),
      'signed with the tenant’s secret',
    );
  assert.ok(
    !verifyWebhookSignature(
      'another-secret',
      String(second!.headers['keel-signature']),
      second!.body,
      nowS,
    ),
  );
  const body = JSON.parse(second!.body);
  assert.equal(body.type, 'approval.requested');
  assert.equal(body.tool, 'send_email');
  assert.deepEqual(body.args, { to: 'ann@example.com', body: 'hello' });
  assert.deepEqual(body.decide, {
    method: 'POST',
    path: `/v1/runs/${runId}/approvals/${runId}.1`,
  });

  const deliveries = await keel.request('GET', '/v1/approval-webhook/deliveries');
  assert.equal(deliveries.status, 200, JSON.stringify(deliveries.body));
  const [requested] = deliveries.body.deliveries;
  assert.deepEqual(
    [requested.kind, requested.status, requested.attempts, requested.lastError],
    ['requested', 'delivered', 2, null],
  );

  const decided = await keel.request('POST', `/v1/runs/${runId}/approvals/${runId}.1`, {
    decision: 'approve',
    note: 'fine',
  });
  assert.equal(decided.status, 200, JSON.stringify(decided.body));
  await until(
    'the decision notified',
    async () => (receiver.received.length >= 3 ? true : undefined),
    DELIVERY_TIMEOUT_MS,
  );
  const decision = JSON.parse(receiver.received[2]!.body);
  assert.deepEqual(
    [decision.type, decision.status, decision.note],
    ['approval.decided', 'approved', 'fine'],
  );
  await keel.waitForRun(runId, (r) => r.status === 'succeeded');
  assert.equal(receiver.received.length, 3, 'one notification per request and event');

  const audit = await keel.request('GET', '/v1/audit?action=approval_webhook.update');
  assert.deepEqual(
    audit.body.entries.map((e: any) => e.outcome),
    ['ok', 'forbidden_scope', 'secret_not_found', 'webhook_not_allowed'],
  );
  assert.equal((await keel.request('DELETE', '/v1/approval-webhook')).status, 200);
  const again = await keel.request('DELETE', '/v1/approval-webhook');
  assert.equal(again.body.error.code, 'approval_webhook_not_found');
});
