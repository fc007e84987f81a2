// The approver webhook survives a crash: a real `keel dev` process files an approval request and
// starts delivering it to a real receiver on loopback that holds the request unanswered; the process
// is killed (SIGKILL) mid-delivery and started again on the same data directory. The restarted Keel
// delivers the notification, with the same Idempotency-Key, and it is accepted exactly once.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { generateApiKey } from '../src/api/auth.ts';
import { verifyWebhookSignature } from '../src/domain/approval-webhooks.ts';
import { apiClient, until } from './support/distributed.ts';
import { startKeelProcess, type KeelProcess } from './support/keel-process.ts';
import { startWebhookReceiver } from './support/webhook-receiver.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/approval-agents.ts', import.meta.url));
const DELIVERY_TIMEOUT_MS = 60_000;

test('approver webhook: a Keel killed mid-delivery delivers the notification once after its restart', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'keel-approval-webhook-'));
  const apiKey = generateApiKey();
  const adminKey = `admin-${randomBytes(16).toString('hex')}`;
  const env = {
    KEEL_ADMIN_KEY: adminKey,
    KEEL_SECRETS_KEY: randomBytes(32).toString('base64'),
  };
  const processes: KeelProcess[] = [];
  const start = async () => {
    const keel = await startKeelProcess({ agents: AGENTS, dataDir, apiKey, env });
    processes.push(keel);
    return keel;
  };
  // The first delivery is held unanswered (Keel dies waiting); later ones are accepted.
  const receiver = await startWebhookReceiver((i) => (i === 0 ? 'hold' : 200));
  t.after(async () => {
    await Promise.all(processes.map((p) => p.kill('SIGKILL')));
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const first = await start();
  const api = apiClient(first.url, apiKey);
  const admin = apiClient(first.url, adminKey);
  const tenantId = (await admin.request('GET', '/v1/admin/tenants')).body.tenants[0].id;
  const allow = await admin.request('PUT', `/v1/admin/tenants/${tenantId}/webhook-allowlist`, {
    origins: [receiver.origin],
  });
  assert.equal(allow.status, 200, JSON.stringify(allow.body));
  const set = await api.request('PUT', '/v1/approval-webhook', {
    url: `${receiver.origin}/hook`,
  });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  const signingSecret = set.body.signingSecret as string;
  await api.request('PUT', '/v1/policy', { approval: { tools: ['send_email'] } });
  const runId = await api.submit('mailer', { to: 'ann@example.com' });

  await until(
    'the first delivery to reach the receiver',
    async () => (receiver.received.length >= 1 ? true : undefined),
    DELIVERY_TIMEOUT_MS,
  );
  assert.equal(receiver.received[0]!.answered, null, 'held: Keel has not seen an answer');
  await first.kill('SIGKILL');

  const second = await start();
  const restarted = apiClient(second.url, apiKey);
  const delivered = await until(
    'the notification delivered after the restart',
    async () => {
      const page = await restarted.request('GET', '/v1/approval-webhook/deliveries');
      const row = page.body.deliveries?.[0];
      return row?.status === 'delivered' ? row : undefined;
    },
    DELIVERY_TIMEOUT_MS,
    () => second.output(),
  );
  assert.deepEqual([delivered.kind, delivered.attempts], ['requested', 1]);
  const accepted = receiver.received.filter((r) => r.answered === 200);
  assert.equal(accepted.length, 1, 'accepted exactly once');
  const keys = new Set(receiver.received.map((r) => r.headers['idempotency-key']));
  assert.deepEqual([...keys], [`apn_${runId}.1.requested`], 'every attempt carries the same key');
  assert.ok(
    verifyWebhookSignature(
      signingSecret,
      String(accepted[0]!.headers['keel-signature']),
      accepted[0]!.body,
      Math.floor(Date.now() / 1000),
    ),
  );
  assert.equal(JSON.parse(accepted[0]!.body).run.id, runId);
  const run = await restarted.request('GET', `/v1/runs/${runId}`);
  assert.equal(run.body.waitingReason, 'approval', 'the run still waits for its approver');
});
