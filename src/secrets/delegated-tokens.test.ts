import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DelegatedTokens, delegationIssuer } from './delegated-tokens.ts';

const KEY = Buffer.alloc(32, 1);
const GRANT = {
  tenantId: 'ten_1',
  runId: 'run_1',
  executionId: 'run_1.2',
  scopes: ['runs:child' as const],
};

test('a minted token verifies to its claims until it expires, for its audience only', () => {
  const tokens = new DelegatedTokens({ key: KEY, audience: 'keel-a', ttlMs: 1_000 });
  const { token, claims } = tokens.mint(GRANT, 10_000);
  assert.match(token, /^kdt_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  assert.deepEqual(tokens.verify(token, 10_999), claims);
  assert.deepEqual(claims, { audience: 'keel-a', ...GRANT, issuedAt: 10_000, expiresAt: 11_000 });
  assert.throws(() => tokens.verify(token, 11_000), { code: 'delegated_token_expired' });
  const other = new DelegatedTokens({ key: KEY, audience: 'keel-b', ttlMs: 1_000 });
  assert.throws(() => other.verify(token, 10_500), { code: 'delegated_token_audience' });
  const forger = new DelegatedTokens({
    key: Buffer.alloc(32, 2),
    audience: 'keel-a',
    ttlMs: 1_000,
  });
  assert.throws(() => forger.verify(token, 10_500), { code: 'delegated_token_invalid' });
  for (const bad of ['kdt_', 'kdt_abc', `${token}x`, token.replace('kdt_', 'kdt_x'), 'keel_x.y']) {
    assert.throws(() => tokens.verify(bad, 10_500), { code: 'delegated_token_invalid' }, bad);
  }
});

test('a key shorter than 32 bytes is refused; the issuer reads the API URL at each call', () => {
  assert.throws(() => new DelegatedTokens({ key: Buffer.alloc(16), audience: 'a', ttlMs: 1 }), {
    code: 'config_invalid',
  });
  let url: string | undefined;
  const issuer = delegationIssuer(
    new DelegatedTokens({ key: KEY, audience: 'a', ttlMs: 60_000 }),
    () => url,
  );
  assert.equal(issuer.issue(GRANT).apiUrl, undefined);
  url = 'http://127.0.0.1:1234';
  const issued = issuer.issue(GRANT);
  assert.equal(issued.apiUrl, url);
  assert.deepEqual(issued.scopes, ['runs:child']);
});

test('a long tool call reads a fresh token once half of its lifetime has passed', () => {
  let at = 50_000;
  const tokens = new DelegatedTokens({ key: KEY, audience: 'a', ttlMs: 1_000 });
  const delegation = delegationIssuer(
    tokens,
    () => undefined,
    () => at,
  ).issue(GRANT);
  const first = delegation.token;
  assert.equal(delegation.expiresAt, 51_000);
  at = 50_400;
  assert.equal(delegation.token, first, 'more than half its lifetime left: the same token');
  at = 50_600;
  const second = delegation.token;
  assert.notEqual(second, first);
  assert.equal(delegation.expiresAt, 51_600);
  assert.equal(tokens.verify(second, 51_500).executionId, GRANT.executionId);
});
