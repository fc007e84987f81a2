// `keel keys` against a real Keel over HTTP: create (the secret printed once), list, revoke, with a
// tenant admin key and, with --tenant, as the platform admin; bad scopes are usage errors (exit 2)
// before any request.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runKeysCommand } from '../src/cli/client/keys-command.ts';
import { defineAgent } from '../src/index.ts';
import { captureCli } from './support/cli-capture.ts';
import { startKeel } from './support/keel-server.ts';

const quick = defineAgent({
  name: 'quick',
  version: '1',
  async run() {
    return { ok: true };
  },
});

test('keel keys create|list|revoke: the tenant admin and the platform admin', async (t) => {
  const keel = await startKeel({ agents: [quick] });
  t.after(() => keel.close());
  const env = { KEEL_URL: keel.url, KEEL_API_KEY: keel.apiKey, KEEL_ADMIN_KEY: keel.adminKey };
  const cli = (argv: string[]) => captureCli(runKeysCommand, env, argv);

  const created = await cli(['create', 'ci', '--scopes', 'submit,read', '--json']);
  assert.equal(created.code, 0, created.err);
  const { key, secret } = JSON.parse(created.out);
  assert.deepEqual(key.scopes, ['submit', 'read']);
  assert.equal((await keel.request('GET', '/v1/runs', undefined, secret)).status, 200);
  assert.equal((await keel.request('POST', `/v1/runs/x/cancel`, undefined, secret)).status, 403);

  const text = await cli(['create', 'temp', '--scopes', 'read']);
  assert.equal(text.code, 0, text.err);
  assert.match(text.out, /secret +keel_/);
  assert.match(text.out, /shown only now/);

  const listed = await cli(['list']);
  assert.equal(listed.code, 0, listed.err);
  assert.match(listed.out, /ci +submit,read +active/);
  assert.match(listed.out, /default +submit,read,operate,admin +active/);

  const revoked = await cli(['revoke', key.id]);
  assert.equal(revoked.code, 0, revoked.err);
  assert.match(revoked.out, new RegExp(`revoked ${key.id} \\(ci\\)`));
  assert.equal((await keel.request('GET', '/v1/runs', undefined, secret)).status, 401);
  assert.match((await cli(['list'])).out, /ci +submit,read +revoked/);

  const bad = await cli(['create', 'x', '--scopes', 'read,root']);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /unknown scope root/);

  // The platform admin manages any tenant's keys with --tenant.
  const tenant = await keel.request('POST', '/v1/admin/tenants', { name: 'other' }, keel.adminKey);
  const asAdmin = await cli([
    'create',
    'ops',
    '--scopes',
    'operate',
    '--tenant',
    tenant.body.tenant.id,
    '--json',
  ]);
  assert.equal(asAdmin.code, 0, asAdmin.err);
  const adminList = await cli(['list', '--tenant', tenant.body.tenant.id, '--json']);
  assert.deepEqual(
    JSON.parse(adminList.out).keys.map((k: any) => k.name),
    ['default', 'ops'],
  );
});
