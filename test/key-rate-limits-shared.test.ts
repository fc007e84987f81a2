// Per-key rate limits shared across API processes: two real `keel server` processes on one fresh
// Postgres database together admit a key's requestsPerMinute (counted in the database), then answer
// 429 key_rate_limited with Retry-After on either process; another key is not held back.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { generateApiKey } from '../src/api/auth.ts';
import { createFreshDatabase } from './support/fresh-database.ts';
import { startKeelRole } from './support/keel-process.ts';
import { postgresAvailable } from './support/postgres.ts';
import { apiClient } from './support/distributed.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/schedule-agents.ts', import.meta.url));
const hasPostgres = await postgresAvailable();
const LIMIT = 5;

test('Postgres: two keel server processes together admit a key’s limit per minute, then 429 with Retry-After', {
  skip: !hasPostgres,
}, async (t) => {
  const db = await createFreshDatabase();
  t.after(() => db.drop());
  const apiKey = generateApiKey();
  const servers = await Promise.all(
    ['rate-a', 'rate-b'].map((name) =>
      startKeelRole({ role: 'server', agents: AGENTS, databaseUrl: db.url, name, apiKey }),
    ),
  );
  t.after(() => Promise.all(servers.map((s) => s.kill('SIGKILL'))));
  const created = await apiClient(servers[0]!.url, apiKey).request('POST', '/v1/keys', {
    name: 'tight',
    scopes: ['read'],
    requestsPerMinute: LIMIT,
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const secret = created.body.secret as string;

  // 2 × LIMIT requests alternating between the processes: exactly LIMIT admitted in total.
  const statuses: number[] = [];
  let refused: Response | undefined;
  for (let i = 0; i < 2 * LIMIT; i++) {
    const response = await fetch(`${servers[i % 2]!.url}/v1/runs`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    statuses.push(response.status);
    if (response.status === 429) refused ??= response;
    else await response.body?.cancel();
  }
  assert.deepEqual(statuses, [
    ...Array.from({ length: LIMIT }, () => 200),
    ...Array.from({ length: LIMIT }, () => 429),
  ]);
  const retryAfter = Number(refused!.headers.get('retry-after'));
  assert.ok(retryAfter >= 1 && retryAfter <= 61, `Retry-After ${retryAfter}`);
  const body = (await refused!.json()) as { error: { code: string; details: unknown } };
  assert.equal(body.error.code, 'key_rate_limited');
  assert.deepEqual(body.error.details, { limitPerMinute: LIMIT });

  // The tenant's other key (no limit) is not held back on either process.
  for (const server of servers)
    assert.equal((await apiClient(server.url, apiKey).request('GET', '/v1/runs')).status, 200);
});
