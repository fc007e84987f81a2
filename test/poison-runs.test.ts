// Poison runs cannot take Keel down forever: agents that kill the process (process.exit, a throw
// from a timer) are quarantined after KEEL_POISON_LEASE_LOSSES lost leases in a row, while healthy
// runs finish across the restarts; the evidence is in the run's events, the list API filters by
// code, and re-admission runs them again explicitly. Agent code runs on the main thread here
// (KEEL_AGENT_ISOLATION=thread): the last line of defence when the whole process dies.
// test/serial/runaway-agents.test.ts shows isolates containing the same code to its own run.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort, startKeelProcess, type KeelProcess } from './support/keel-process.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/poison-agents.ts', import.meta.url));
const KEY = 'poison-test-key';
const HEALTHY = 20;
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

test('process-killing agents are quarantined after 3 lost leases; healthy runs finish; re-admission is explicit', {
  timeout: 180_000,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-poison-'));
  const port = await freePort();
  const ledger = join(dir, 'ledger');
  let keel: KeelProcess | undefined;
  let restarts = 0;
  const start = async () => {
    for (;;) {
      try {
        keel = await startKeelProcess({
          agents: AGENTS,
          dataDir: join(dir, 'data'),
          port,
          apiKey: KEY,
          env: { KEEL_TEST_LEDGER: ledger, KEEL_AGENT_ISOLATION: 'thread' },
        });
        return;
      } catch (error) {
        // A poison run claimed at start-up can take the process down before it answers: start it
        // again.
        if (!/exited with/.test(String(error))) throw error;
        restarts++;
      }
    }
  };
  t.after(async () => {
    await keel?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  const api = async (method: string, path: string, body?: unknown) => {
    for (;;) {
      try {
        const res = await fetch(keel!.url + path, {
          method,
          headers: {
            authorization: `Bearer ${KEY}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: res.status, body: (await res.json()) as any };
      } catch {
        await keepAlive();
      }
    }
  };
  /** Like a supervisor (systemd, Kubernetes): whenever the process died, start it again. */
  const keepAlive = async () => {
    if (keel !== undefined && keel.child.exitCode === null && keel.child.signalCode === null)
      return;
    restarts++;
    await start();
  };
  const settle = async (ids: string[]) => {
    const deadline = Date.now() + 120_000;
    const done = new Map<string, any>();
    while (done.size < ids.length) {
      assert.ok(Date.now() < deadline, `runs did not settle; ${restarts} restarts`);
      await keepAlive();
      for (const id of ids.filter((i) => !done.has(i))) {
        const run = (await api('GET', `/v1/runs/${id}`)).body;
        if (TERMINAL.has(run.status)) done.set(id, run);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    return done;
  };
  const starts = (agent: string, id: string) =>
    readFileSync(ledger, 'utf8')
      .split('\n')
      .filter((l) => l === `${agent} ${id}`).length;

  await start();
  const healthy: string[] = [];
  for (let n = 0; n < HEALTHY; n++)
    healthy.push((await api('POST', '/v1/runs', { agent: 'healthy', input: { n } })).body.id);
  const exits = (await api('POST', '/v1/runs', { agent: 'exits' })).body.id as string;
  const throws = (await api('POST', '/v1/runs', { agent: 'throws-later' })).body.id as string;

  const finals = await settle([...healthy, exits, throws]);
  for (const [n, id] of healthy.entries())
    assert.deepEqual(
      [finals.get(id).status, finals.get(id).result],
      ['succeeded', n * 2],
      `healthy run ${n}: ${JSON.stringify(finals.get(id).error)} (${restarts} restarts)`,
    );
  for (const [agent, id] of [
    ['exits', exits],
    ['throws-later', throws],
  ] as const) {
    const run = finals.get(id);
    assert.equal(run.status, 'failed', `${agent}: ${JSON.stringify(run)}`);
    assert.equal(run.error.code, 'poison_run');
    // 3 losses quarantine it; a 4th is possible only if the other poison run killed the process
    // mid-quarantine.
    assert.ok(run.error.details.leaseLosses >= 3, `lease losses: ${run.error.details.leaseLosses}`);
    const ran = starts(agent, id);
    assert.ok(
      ran >= 1 && ran <= 3,
      `${agent}'s code ran ${ran} times; never more than the threshold`,
    );
    const events = (await api('GET', `/v1/runs/${id}/events?format=json`)).body as any[];
    const quarantined = events.find((e) => e.type === 'run.quarantined');
    assert.ok(
      quarantined.data.workers.length >= 3,
      'the evidence names the workers that lost the lease',
    );
    assert.equal(events.at(-1).type, 'run.failed');
  }
  assert.ok(
    restarts >= 3 && restarts <= 8,
    `the two bad runs took the process down at most 3 times each (restarts: ${restarts})`,
  );

  const listed = (await api('GET', '/v1/runs?status=failed&code=poison_run')).body.runs
    .map((r: any) => r.id)
    .sort();
  assert.deepEqual(listed, [exits, throws].sort());

  // Re-admission is explicit and only for quarantined runs; the still-broken code is quarantined
  // again after 3 more.
  assert.equal(
    (await api('POST', `/v1/runs/${healthy[0]}/retry`)).body.error.code,
    'run_not_quarantined',
  );
  const readmitted = await api('POST', `/v1/runs/${exits}/retry`);
  assert.equal(readmitted.status, 202);
  assert.equal(readmitted.body.status, 'queued');
  assert.equal(readmitted.body.leaseLosses, 0);
  const again = (await settle([exits])).get(exits);
  assert.equal(again.error.code, 'poison_run');
  assert.ok(starts('exits', exits) <= 6, 'after re-admission, again at most 3 more executions');
});
