// Named platform admins over real HTTP and the CLI, on SQLite and Postgres: the root admin
// (KEEL_ADMIN_KEY) makes a named admin whose own key then works on every admin route, and the
// tenant audit log names that admin (not a shared key); revocation takes effect on the next
// request; an admin key is never a tenant key, and a duplicate name is 409.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { runAdminsCommand } from '../src/cli/client/admins-command.ts';
import { defineAgent } from '../src/index.ts';
import { captureCli } from './support/cli-capture.ts';
import { postgresAvailable } from './support/postgres.ts';
import { ADMIN_KEY, startKeelOn, type SchedulesKeel } from './support/schedules-keel.ts';

const quick = defineAgent({
  name: 'quick',
  version: '1',
  async run() {
    return { ok: true };
  },
});

const start = (t: TestContext, backend: 'sqlite' | 'postgres'): Promise<SchedulesKeel> =>
  startKeelOn(t, backend, [quick]);

for (const backend of ['sqlite', 'postgres'] as const) {
  test(`named platform admins (${backend}): own keys, named in the audit log, revoked at once`, async (t) => {
    if (backend === 'postgres' && !(await postgresAvailable())) return t.skip('no Postgres');
    const keel = await start(t, backend);
    const cli = (argv: string[], key = ADMIN_KEY) =>
      captureCli(runAdminsCommand, { KEEL_URL: keel.url, KEEL_ADMIN_KEY: key }, argv);

    const created = await cli(['create', 'alice', '--json']);
    assert.equal(created.code, 0, created.err);
    const { principal, secret } = JSON.parse(created.out);
    assert.match(principal.id, /^adm_/);
    assert.match(secret, /^keeladm_/);
    const text = await cli(['create', 'bob']);
    assert.equal(text.code, 0, text.err);
    assert.match(text.out, /key +keeladm_/);
    const duplicate = await keel.request(
      'POST',
      '/v1/admin/principals',
      { name: 'alice' },
      ADMIN_KEY,
    );
    assert.equal(duplicate.status, 409);
    assert.equal(duplicate.body.error.code, 'admin_principal_exists');

    // Alice's own key works on admin routes; what she does is hers in the tenant's audit log.
    const tenant = await keel.request('POST', '/v1/admin/tenants', { name: 'acme' }, secret);
    assert.equal(tenant.status, 201, JSON.stringify(tenant.body));
    const tenantId = tenant.body.tenant.id as string;
    const patched = await keel.request(
      'PATCH',
      `/v1/admin/tenants/${tenantId}`,
      { weight: 3 },
      secret,
    );
    assert.equal(patched.status, 200);
    const rootPatch = await keel.request(
      'PATCH',
      `/v1/admin/tenants/${tenantId}`,
      { weight: 2 },
      ADMIN_KEY,
    );
    assert.equal(rootPatch.status, 200);
    const audit = await keel.request(
      'GET',
      `/v1/admin/tenants/${tenantId}/audit`,
      undefined,
      secret,
    );
    assert.equal(audit.status, 200);
    const actors = (
      audit.body.entries as { action: string; actor: { id: string | null; name: string } }[]
    ).map((e) => [e.action, e.actor.id, e.actor.name]);
    assert.deepEqual(actors, [
      ['tenant.update', null, 'platform-admin'],
      ['tenant.update', principal.id, 'alice'],
      ['tenant.create', principal.id, 'alice'],
    ]);
    // A platform admin's key is no tenant key.
    assert.equal((await keel.request('GET', '/v1/runs', undefined, secret)).status, 401);

    const listed = await cli(['list'], secret);
    assert.equal(listed.code, 0, listed.err);
    assert.match(listed.out, /alice +active/);
    assert.match(listed.out, /bob +active/);

    const revoked = await cli(['revoke', principal.id]);
    assert.equal(revoked.code, 0, revoked.err);
    assert.match(revoked.out, new RegExp(`revoked ${principal.id} \\(alice\\)`));
    const refused = await keel.request('GET', '/v1/admin/tenants', undefined, secret);
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error.code, 'admin_principal_revoked');
    assert.match((await cli(['list'])).out, /alice +revoked/);
    assert.equal(
      (await keel.request('GET', '/v1/admin/tenants', undefined, ADMIN_KEY)).status,
      200,
    );
    assert.equal(
      (await keel.request('DELETE', '/v1/admin/principals/adm_missing', undefined, ADMIN_KEY)).body
        .error.code,
      'admin_principal_not_found',
    );
    // An unknown admin-looking key is refused like any wrong key.
    assert.equal(
      (await keel.request('GET', '/v1/admin/tenants', undefined, 'keeladm_not-a-real-key')).status,
      401,
    );
  });
}
