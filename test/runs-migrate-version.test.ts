// Moving runs between agent versions, from real processes: queued runs of greeter@1 that never
// started (and one that did) sit in the store while `keel dev` serves only greeter@2; the start
// warns naming greeter@1 and the count; `keel runs migrate` refuses a version nobody serves
// (agent_version_not_served) and moves the never-started runs to @2 (audited), leaving the started
// one on @1 and naming it; the moved runs finish on the new code.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { hashApiKey } from '../src/api/auth.ts';
import { newRunId } from '../src/domain/ids.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { freePort, startKeelProcess } from './support/keel-process.ts';

const MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const SDK = fileURLToPath(new URL('../src/index.ts', import.meta.url));
const KEY = 'migrate-test-key-0123456789abcdef';

const agentsOf = (version: string) => `
import { defineAgent } from ${JSON.stringify(SDK)};
export const greeter = defineAgent({
  name: 'greeter',
  version: '${version}',
  async run(ctx, input: { n: number }) {
    return ctx.step('greet', () => ({ n: input.n, by: 'v${version}' }));
  },
});
`;

test('keel runs migrate moves queued never-started runs to a served version, audited', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-migrate-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const agents = join(dir, 'agents.ts');
  const dataDir = join(dir, 'data');
  const port = await freePort();

  // The runs of version 1, left queued by a process that is gone: four never started, one started
  // (a committed step, then handed back).
  const store = new SqliteStore({ path: join(dataDir, 'keel.db') });
  await store.migrate();
  const tenant = await store.ensureTenant('dev', hashApiKey(KEY));
  const create = async (n: number) =>
    (
      await store.createRun({
        id: newRunId(),
        tenantId: tenant.id,
        agent: 'greeter',
        agentVersion: '1',
        input: { n },
        priority: 'interactive',
        budget: {},
        metadata: null,
        parentRunId: null,
        idempotencyKey: null,
        requestHash: null,
      })
    ).run.id;
  const started = await create(0);
  const [claimed] = await store.claimRuns({
    owner: 'gone',
    limit: 1,
    leaseMs: 60_000,
    served: ['greeter@1'],
  });
  assert.equal(claimed?.id, started);
  await store.commit({
    runId: started,
    leaseToken: claimed.leaseToken,
    expectedStateVersion: claimed.stateVersion,
    journal: [{ seq: 1, kind: 'step', name: 'greet', status: 'running' }],
  });
  await store.releaseLeases('gone', [started]);
  const fresh = [await create(1), await create(2), await create(3)];
  await store.close();

  writeFileSync(agents, agentsOf('2'));
  const keel = await startKeelProcess({ agents, dataDir, port, apiKey: KEY });
  t.after(() => keel.kill('SIGKILL'));
  const warning = keel
    .output()
    .split('\n')
    .find((line) => line.includes('greeter@1'));
  assert.ok(warning, `a warning at start names greeter@1:\n${keel.output()}`);
  assert.match(warning, /4 queued runs need greeter@1, which this process does not serve/);
  assert.match(warning, /keel runs migrate --agent greeter --from 1 --to 2/);

  const cli = (...argv: string[]) =>
    promisify(execFile)(process.execPath, [MAIN, 'runs', ...argv], {
      env: { ...process.env, KEEL_URL: keel.url, KEEL_API_KEY: KEY },
    });
  await assert.rejects(
    cli('migrate', '--agent', 'greeter', '--from', '1', '--to', '3'),
    (error: any) => {
      assert.equal(error.code, 1);
      assert.match(error.stderr, /agent_version_not_served/);
      assert.match(error.stderr, /greeter@3/);
      return true;
    },
  );
  const same = await fetch(`${keel.url}/v1/runs/migrate-version`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agent: 'greeter', from: '1', to: '1' }),
  });
  assert.equal(same.status, 400);

  const migrated = await cli('migrate', '--agent', 'greeter', '--from', '1', '--to', '2', '--json');
  const report = JSON.parse(migrated.stdout);
  assert.equal(report.moved, 3);
  assert.deepEqual(new Set(report.movedRunIds), new Set(fresh));
  assert.equal(report.started, 1);
  assert.deepEqual(report.startedRunIds, [started]);
  const human = await cli('migrate', '--agent', 'greeter', '--from', '1', '--to', '2');
  assert.match(human.stdout, /moved 0 queued runs of greeter@1 to greeter@2/);
  assert.match(
    human.stdout,
    new RegExp(`left 1 on greeter@1: they had started[^\\n]*\\n  ${started}`),
  );

  for (const id of fresh) {
    const deadline = Date.now() + 30_000;
    let run: any;
    do {
      run = await (
        await fetch(`${keel.url}/v1/runs/${id}`, { headers: { authorization: `Bearer ${KEY}` } })
      ).json();
      if (Date.now() > deadline) throw new Error(`run stuck: ${JSON.stringify(run)}`);
      await new Promise((r) => setTimeout(r, 25));
    } while (run.status !== 'succeeded' && run.status !== 'failed');
    assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
    assert.equal(run.agentVersion, '2');
    assert.equal(run.result.by, 'v2', 'the moved run ran the new code');
  }
  const db = new DatabaseSync(join(dataDir, 'keel.db'), { readOnly: true });
  t.after(() => db.close());
  const audits = db
    .prepare("SELECT run_id, data FROM audit WHERE kind = 'run_version_migrated'")
    .all() as Array<{ run_id: string; data: string }>;
  assert.deepEqual(new Set(audits.map((a) => a.run_id)), new Set(fresh));
  assert.deepEqual(
    { ...JSON.parse(audits[0]!.data), actor: undefined },
    { agent: 'greeter', from: '1', to: '2', actor: undefined },
  );
  const startedRun = await (
    await fetch(`${keel.url}/v1/runs/${started}`, { headers: { authorization: `Bearer ${KEY}` } })
  ).json();
  assert.equal(startedRun.agentVersion, '1');
  assert.equal(startedRun.waitingReason, 'agent_version_unavailable');
});
