import { startSchedulesKeel, ADMIN_KEY } from './support/schedules-keel.ts';
import { createFreshDatabase } from './support/fresh-database.ts';
import { defineAgent } from '../src/index.ts';
const waiter = defineAgent({ name: 'waiter', version: '1', async run(ctx) { return ctx.waitForInput('answer'); } });
const db = await createFreshDatabase();
const keel = await startSchedulesKeel({ agents: [waiter], start: '2026-01-01T00:00:00Z', databaseUrl: db.url });
const run = await keel.request('POST', '/v1/runs', { agent: 'waiter' });
const cases: Array<[string, string, unknown]> = [
  ['GET', '/v1/runs/%00', undefined],
  ['GET', '/v1/runs/run_%00x/steps', undefined],
  ['GET', '/v1/runs?agent=%00', undefined],
  ['GET', '/v1/runs?code=a%00', undefined],
  ['GET', '/v1/schedules/%00', undefined],
  ['GET', '/v1/runs/%ED%A0%80', undefined],
  ['POST', '/v1/runs', { agent: 'waiter', idempotencyKey: 'a\u0000b' }],
  ['POST', '/v1/runs', { agent: 'waiter', idempotencyKey: '\ud800' }],
  ['POST', '/v1/runs', { agent: 'waiter\u0000' }],
  ['POST', '/v1/runs', { agent: 'waiter', input: 'x\u0000', metadata: { 'k\u0000': 1 } }],
  ['POST', `/v1/runs/${run.body.id}/input`, { key: 'a\u0000', value: 1 }],
  ['POST', `/v1/runs/${run.body.id}/executions/%00/resolve`, { action: 'retry' }],
  ['POST', '/v1/schedules', { name: 'n\u0000', intervalMs: 60000, timeZone: 'UTC', template: { agent: 'waiter' } }],
  ['POST', '/v1/schedules', { cron: '* * * * *\u0000', timeZone: 'UTC', template: { agent: 'waiter' } }],
  ['POST', '/v1/schedules', { intervalMs: 60000, timeZone: 'UTC\u0000', template: { agent: 'waiter' } }],
  ['PATCH', '/v1/admin/tenants/%00', { weight: 2 }],
  ['GET', '/v1/admin/tenants/%00/webhook-allowlist', undefined],
  ['POST', '/v1/runs', { agent: 'waiter', budget: { maxTokens: 9007199254740991, maxCostUsd: 1e308 } }],
  ['POST', '/v1/admin/tenants', { name: 'big', tpm: 1_000_000_000_000, dailyTokenBudget: 1_000_000_000_000_000, poolCaps: { 'a': 1000000 } }],
  ['GET', '/v1/runs/' + run.body.id + '/events?format=json&after=9007199254740991', undefined],
  ['GET', '/v1/dashboard/pools?minutes=1440', undefined],
];
for (const [m, p, b] of cases) {
  const r = await keel.request(m, p, b, p.includes('admin') ? ADMIN_KEY : undefined);
  console.log(m, p.slice(0, 60), JSON.stringify(b)?.slice(0, 80), '→', r.status, JSON.stringify(r.body).slice(0, 200));
}
await keel.close();
await db.drop();
