// Tenant rate limits, daily budgets and pool caps over real HTTP (issue 7): the admin API and `keel tenants` set and
// show them, bad input is a 4xx with a stable code; a tenant whose daily budget is spent waits (durably, explained)
// instead of failing and resumes when an admin raises the budget; waiting is explained in runs and events.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { runTenantsCommand } from '../src/cli/client/tenants-command.ts';
import { defineAgent } from '../src/index.ts';
import { assertError } from './support/assert-error.ts';
import { captureCli } from './support/cli-capture.ts';
import { startKeel, type TestKeel } from './support/keel-server.ts';

const quick = defineAgent({ name: 'quick', version: '1', async run() { return { done: true }; } });

async function start(t: TestContext, agents = [quick]): Promise<TestKeel> {
  const keel = await startKeel({ agents });
  t.after(() => keel.close());
  return keel;
}

test('admin API: rate limits, daily budgets and pool caps are created, patched, listed; bad values are 400 validation_failed', async (t) => {
  const keel = await start(t);
  const created = await keel.request('POST', '/v1/admin/tenants', {
    name: 'acme', rpm: 60, tpm: 90_000, dailyTokenBudget: 1_000_000, dailyCostBudgetUsd: 2.5, poolCaps: { 'sandbox:default': 2, browser: 1 },
  }, keel.adminKey);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const { tenant } = created.body;
  assert.deepEqual([tenant.rpm, tenant.tpm, tenant.dailyTokenBudget, tenant.dailyCostBudgetUsd, tenant.poolCaps],
    [60, 90_000, 1_000_000, 2.5, { 'sandbox:default': 2, browser: 1 }]);
  const plain = await keel.request('POST', '/v1/admin/tenants', { name: 'plain' }, keel.adminKey);
  assert.deepEqual([plain.body.tenant.rpm, plain.body.tenant.dailyTokenBudget, plain.body.tenant.poolCaps], [null, null, {}]);

  const patched = await keel.request('PATCH', `/v1/admin/tenants/${tenant.id}`, { rpm: null, dailyCostBudgetUsd: 0, poolCaps: {} }, keel.adminKey);
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  assert.deepEqual([patched.body.tenant.rpm, patched.body.tenant.tpm, patched.body.tenant.dailyCostBudgetUsd, patched.body.tenant.poolCaps], [null, 90_000, 0, {}]);
  const listed = await keel.request('GET', '/v1/admin/tenants', undefined, keel.adminKey);
  assert.deepEqual(listed.body.tenants.find((x: any) => x.id === tenant.id), patched.body.tenant);

  for (const body of [{ rpm: 0 }, { rpm: 1.5 }, { tpm: -3 }, { tpm: '100' }, { dailyTokenBudget: -1 }, { dailyTokenBudget: 0.5 },
    { dailyCostBudgetUsd: -0.01 }, { dailyCostBudgetUsd: 'lots' }, { poolCaps: [] }, { poolCaps: { sandbox: 0 } }, { poolCaps: { sandbox: 'x' } },
    { poolCaps: { '': 1 } }, { poolCaps: { 'bad pool name': 1 } }, { poolCaps: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`p${i}`, 1])) }]) {
    assertError(await keel.request('POST', '/v1/admin/tenants', { name: 'bad', ...body }, keel.adminKey), 400, 'validation_failed');
    assertError(await keel.request('PATCH', `/v1/admin/tenants/${tenant.id}`, body, keel.adminKey), 400, 'validation_failed');
  }
});

test('keel tenants create|update|list take and show rate limits, daily budgets and pool caps', async (t) => {
  const keel = await start(t);
  const cli = (...argv: string[]) => captureCli(runTenantsCommand, { KEEL_URL: keel.url, KEEL_ADMIN_KEY: keel.adminKey }, argv);
  const created = await cli('create', 'acme', '--rpm', '60', '--tpm', '1000', '--daily-token-budget', '0', '--daily-cost-budget-usd', '1.25',
    '--pool-caps', 'sandbox:default=2,browser=1', '--json');
  assert.equal(created.code, 0, created.err);
  const { tenant } = JSON.parse(created.out);
  assert.deepEqual([tenant.rpm, tenant.tpm, tenant.dailyTokenBudget, tenant.dailyCostBudgetUsd, tenant.poolCaps],
    [60, 1000, 0, 1.25, { 'sandbox:default': 2, browser: 1 }]);
  const updated = await cli('update', tenant.id, '--rpm', 'none', '--daily-token-budget', '500', '--pool-caps', 'none');
  assert.equal(updated.code, 0, updated.err);
  assert.match(updated.out, /rpm\s+unlimited\ntpm\s+1000\ndaily tokens\s+500\ndaily cost usd\s+1.25\npool caps\s+none/);
  const listed = await cli('list');
  assert.match(listed.out, /acme\s+1\s+unlimited\s+unlimited\s+unlimited\s+1000\s+500\s+1.25\s+none/);
  for (const argv of [['--rpm', '0'], ['--tpm', 'x'], ['--daily-token-budget', '-1'], ['--daily-cost-budget-usd', '-2'], ['--pool-caps', 'sandbox'],
    ['--pool-caps', 'sandbox=0']]) {
    assert.equal((await cli('update', tenant.id, ...argv)).code, 2, argv.join(' '));
  }
});
