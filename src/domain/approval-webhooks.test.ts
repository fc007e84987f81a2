// The approver webhook's signature: what Keel sends verifies with the same secret and body only,
// within the timestamp tolerance; a changed byte, another secret, a stale or malformed header fails.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  signWebhookBody,
  verifyWebhookSignature,
  WEBHOOK_SIGNATURE_TOLERANCE_S,
} from './approval-webhooks.ts';

const SECRET = 'whsec-test';
const BODY = '{"type":"approval.requested","tool":"send_email"}';
const T = 1_767_225_600;

describe('approver webhook signature', () => {
  it('verifies what was signed, and nothing else', () => {
    const header = signWebhookBody(SECRET, T, BODY);
    assert.match(header, /^t=1767225600,v1=[0-9a-f]{64}$/);
    assert.equal(verifyWebhookSignature(SECRET, header, BODY, T), true);
    assert.equal(verifyWebhookSignature(SECRET, header, BODY.replace('send', 'Send'), T), false);
    assert.equal(verifyWebhookSignature('other', header, BODY, T), false);
    assert.equal(
      verifyWebhookSignature(SECRET, header.replace(`t=${T}`, `t=${T + 1}`), BODY, T),
      false,
    );
  });

  it('refuses a timestamp outside the tolerance and a malformed header', () => {
    const header = signWebhookBody(SECRET, T, BODY);
    assert.equal(
      verifyWebhookSignature(SECRET, header, BODY, T + WEBHOOK_SIGNATURE_TOLERANCE_S),
      true,
    );
    assert.equal(
      verifyWebhookSignature(SECRET, header, BODY, T + WEBHOOK_SIGNATURE_TOLERANCE_S + 1),
      false,
    );
    for (const bad of ['', 'v1=abc', `t=${T}`, `t=x,v1=${'0'.repeat(64)}`])
      assert.equal(verifyWebhookSignature(SECRET, bad, BODY, T), false, bad);
  });
});
