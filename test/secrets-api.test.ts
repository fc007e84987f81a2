// Secrets over the API and the CLI against a real Keel over HTTP: create, list, rotate, delete;
// values are write-only (no response, CLI output or audit entry carries one, the store holds only
// ciphertext); the admin scope is needed; another tenant sees nothing; a value is never a CLI
// argument; without a key-encryption key the routes answer 409 secrets_unconfigured.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runSecretsCommand } from '../src/cli/client/secrets-command.ts';
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

test('keel secrets create|list|rotate|delete: write-only values, audited, admin scope, per tenant', async (t) => {
  const keel = await startKeel({ agents: [quick], secretsKey: randomBytes(32).toString('base64') });
  const dir = mkdtempSync(join(tmpdir(), 'keel-secrets-cli-'));
  t.after(async () => {
    await keel.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const value = `canary-cli-${randomBytes(10).toString('hex')}`;
  const file = join(dir, 'value');
  writeFileSync(file, `${value}\n`);
  const env = { KEEL_URL: keel.url, KEEL_API_KEY: keel.apiKey };
  const cli = (argv: string[]) => captureCli(runSecretsCommand, env, argv);
  const outputs: string[] = [];
  const run = async (argv: string[]) => {
    const result = await cli(argv);
    outputs.push(result.out, result.err);
    return result;
  };

  const created = await run(['create', 'API_TOKEN', '--from-file', file]);
  assert.equal(created.code, 0, created.err);
  assert.match(created.out, /created secret:API_TOKEN \(version 1\)/);
  const noValue = await run(['create', 'OTHER']);
  assert.equal(noValue.code, 2);
  assert.match(noValue.err, /--from-file/);
  const duplicate = await run(['create', 'API_TOKEN', '--from-file', file]);
  assert.equal(duplicate.code, 1);
  assert.match(duplicate.err, /secret_exists/);

  writeFileSync(file, `${value}-2`);
  const rotated = await run(['rotate', 'API_TOKEN', '--from-file', file, '--json']);
  assert.equal(rotated.code, 0, rotated.err);
  assert.equal(JSON.parse(rotated.out).secret.version, 2);
  const listed = await run(['list']);
  assert.match(listed.out, /API_TOKEN +2 /);

  // The store holds ciphertext only.
  const stored = await keel.store.getSecret(await tenantOf(keel), 'API_TOKEN');
  assert.ok(stored !== null && !JSON.stringify(stored).includes(value));

  // A key without the admin scope is refused; another tenant sees none of it.
  const reader = await keel.request('POST', '/v1/keys', {
    name: 'reader',
    scopes: ['read', 'submit', 'operate'],
  });
  assert.equal(reader.status, 201);
  const asReader = await keel.request('GET', '/v1/secrets', undefined, reader.body.secret);
  assert.equal(asReader.status, 403);
  assert.equal(asReader.body.error.code, 'forbidden_scope');
  const other = await keel.request('POST', '/v1/admin/tenants', { name: 'other' }, keel.adminKey);
  const otherKey = await keel.request(
    'POST',
    `/v1/admin/tenants/${other.body.tenant.id}/keys`,
    { name: 'adm', scopes: ['admin'] },
    keel.adminKey,
  );
  const theirs = await keel.request('GET', '/v1/secrets', undefined, otherKey.body.secret);
  assert.deepEqual(theirs.body, { secrets: [] });
  const notTheirs = await keel.request(
    'DELETE',
    '/v1/secrets/API_TOKEN',
    undefined,
    otherKey.body.secret,
  );
  assert.equal(notTheirs.status, 404);
  assert.equal(notTheirs.body.error.code, 'secret_not_found');
  const badName = await keel.request('POST', '/v1/secrets', { name: 'no spaces', value: 'x' });
  assert.equal(badName.status, 400);

  const deleted = await run(['delete', 'API_TOKEN']);
  assert.equal(deleted.code, 0, deleted.err);
  assert.match((await run(['list'])).out, /no secrets/);

  // Audited: actions and names, never the value.
  const audit = await keel.request('GET', '/v1/audit');
  const actions = (
    audit.body.entries as Array<{ action: string; resource: string; outcome: string }>
  )
    .filter((e) => e.action.startsWith('secret.'))
    .map((e) => `${e.action} ${e.resource} ${e.outcome}`);
  assert.deepEqual(actions.sort(), [
    'secret.create secret:API_TOKEN ok',
    'secret.create secret:API_TOKEN secret_exists',
    'secret.create secret:no spaces validation_failed',
    'secret.delete secret:API_TOKEN ok',
    'secret.rotate secret:API_TOKEN ok',
  ]);
  assert.ok(!JSON.stringify(audit.body).includes(value));
  assert.ok(!outputs.some((text) => text.includes(value)), 'no CLI output holds the value');
});

test('without a key-encryption key the secrets routes answer 409 secrets_unconfigured', async (t) => {
  const keel = await startKeel({ agents: [quick] });
  t.after(() => keel.close());
  const created = await keel.request('POST', '/v1/secrets', { name: 'X', value: 'y' });
  assert.equal(created.status, 409);
  assert.equal(created.body.error.code, 'secrets_unconfigured');
  assert.match(created.body.error.message, /KEEL_SECRETS_KEY/);
});

async function tenantOf(keel: Awaited<ReturnType<typeof startKeel>>): Promise<string> {
  const tenants = await keel.store.listTenants();
  return tenants.find((tenant) => tenant.name === 'test')!.id;
}
