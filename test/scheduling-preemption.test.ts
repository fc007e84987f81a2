// Preemption over HTTP with real Keel processes: every run slot is held by long batch runs made of
// many short steps, then interactive runs arrive. They must start within KEEL_PREEMPT_AFTER_MS plus
// a margin instead of waiting for a batch run to finish; the preempted batch runs go back to the
// queue (waitingReason `preempted`) and still complete with every committed step run exactly once
// (the step ledger of the fixture); the events and metrics record the cost. On SQLite (`keel dev`,
// agent code in isolates and in the main thread) and on Postgres with two processes claiming (`keel
// server` + `keel worker`).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  apiClient,
  distributedScene,
  readLedger,
  stepStarts,
  until,
  type ApiClient,
} from './support/distributed.ts';
import { freePort, startKeelProcess, startKeelRole } from './support/keel-process.ts';
import { postgresAvailable } from './support/postgres.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/preemption-agents.ts', import.meta.url));
const ADMIN_KEY = 'preemption-admin-key-0123456789';
const API_KEY = 'preemption-key-0123456789';
const PREEMPT_AFTER_MS = 500;
/**
 * Poll interval of the claim loop (the check runs once per poll), a step boundary, a claim: plus
 * slack for a busy machine.
 */
const START_MARGIN_MS = 2_000;
const BATCH_STEPS = 60;
const STEP_MS = 50;
const INTERACTIVE_WORK_MS = 800;

interface Scenario {
  url: string;
  api: ApiClient;
  ledger: string;
  /** Run slots of the whole cluster (all held by batch runs before the interactive runs arrive). */
  slots: number;
  /** GET /metrics of each process that claims runs. */
  metricsUrls: string[];
}

const events = async (
  api: ApiClient,
  id: string,
): Promise<Array<{ type: string; at: string; data: any }>> =>
  (await api.request('GET', `/v1/runs/${id}/events?format=json`)).body;

async function metric(urls: string[], name: string): Promise<number> {
  let sum = 0;
  for (const url of urls) {
    const text = await (
      await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
    ).text();
    for (const line of text.split('\n'))
      if (line.startsWith(name) && (line[name.length] === ' ' || line[name.length] === '{'))
        sum += Number(line.split(' ').at(-1));
  }
  return sum;
}

async function preemptInteractive(t: TestContext, s: Scenario): Promise<void> {
  const { api } = s;
  // Fill every slot with batch runs (and queue one more), and let them commit a few steps.
  const batch: string[] = [];
  for (let i = 0; i <= s.slots; i++) {
    batch.push(
      await api.submit(
        'long-batch',
        { key: `b${i}`, steps: BATCH_STEPS, ms: STEP_MS },
        { priority: 'batch' },
      ),
    );
  }
  await until(
    'every slot to hold a batch run with some steps done',
    async () => {
      const runs = await Promise.all(
        batch.map(async (id) => (await api.request('GET', `/v1/runs/${id}`)).body),
      );
      const running = runs.filter((r) => r.status === 'running' && r.counters.steps >= 3);
      return running.length === s.slots ? true : undefined;
    },
    30_000,
  );

  const interactive: string[] = [];
  for (let i = 0; i < s.slots; i++)
    interactive.push(
      await api.submit(
        'quick',
        { key: `i${i}`, ms: INTERACTIVE_WORK_MS },
        { priority: 'interactive' },
      ),
    );

  // While the interactive runs work, a preempted batch run waits in the queue and says why.
  const seenQueued = await until(
    'a preempted batch run to show as queued, waitingReason preempted',
    async () => {
      for (const id of batch) {
        const run = (await api.request('GET', `/v1/runs/${id}`)).body;
        if (run.status === 'queued' && run.waitingReason === 'preempted') return run;
      }
      return undefined;
    },
    10_000,
  );
  assert.ok(
    seenQueued.preemptions >= 1 && seenQueued.preemptedAt !== null,
    JSON.stringify(seenQueued),
  );

  // The interactive runs started within the target plus a margin, long before any batch run
  // finished.
  const starts: number[] = [];
  for (const id of interactive) {
    const started = await until(
      `interactive run ${id} to start`,
      async () => (await events(api, id)).find((e) => e.type === 'run.started'),
      15_000,
    );
    const run = (await api.request('GET', `/v1/runs/${id}`)).body;
    starts.push(Date.parse(started.at) - Date.parse(run.createdAt));
  }
  t.diagnostic(
    `interactive runs started after ${starts.join(', ')} ms (target ${PREEMPT_AFTER_MS} ms; a batch run takes ≥ ${BATCH_STEPS * STEP_MS} ms)`,
  );
  for (const ms of starts)
    assert.ok(
      ms <= PREEMPT_AFTER_MS + START_MARGIN_MS,
      `an interactive run waited ${ms} ms for a slot`,
    );

  // Everything finishes; the batch runs' results are whole, and no committed step ran twice.
  const ended = new Map<string, any>();
  for (const id of [...batch, ...interactive]) {
    ended.set(
      id,
      await until(
        `run ${id} to end`,
        async () => {
          const run = (await api.request('GET', `/v1/runs/${id}`)).body;
          return run.endedAt === null ? undefined : run;
        },
        60_000,
      ),
    );
  }
  for (const run of ended.values()) assert.equal(run.status, 'succeeded', JSON.stringify(run));
  const firstBatchEnd = Math.min(...batch.map((id) => Date.parse(ended.get(id).endedAt)));
  for (const id of interactive)
    assert.ok(
      Date.parse(ended.get(id).endedAt) < firstBatchEnd,
      'interactive runs did not wait for a batch run to finish',
    );
  for (const id of batch)
    assert.deepEqual(ended.get(id).result, { total: (BATCH_STEPS * (BATCH_STEPS - 1)) / 2 });
  const starts2 = stepStarts(readLedger(s.ledger));
  for (let b = 0; b <= s.slots; b++) {
    for (let i = 0; i < BATCH_STEPS; i++)
      assert.equal(
        starts2.get(`b${b} ${i}`)?.length,
        1,
        `step ${i} of batch run b${b} ran ${starts2.get(`b${b} ${i}`)?.length ?? 0} times`,
      );
  }

  // The preemptions and their cost are recorded: on the run, in its events, in the metrics.
  const preempted = batch.filter((id) => ended.get(id).preemptions > 0);
  const total = preempted.reduce((n, id) => n + ended.get(id).preemptions, 0);
  assert.equal(total, s.slots, `as many preemptions as interactive runs waited (${total})`);
  for (const id of interactive)
    assert.equal(ended.get(id).preemptions, 0, 'interactive runs are never preempted');
  for (const id of preempted) {
    const list = await events(api, id);
    const at = list.findIndex((e) => e.type === 'run.preempted');
    const p = list[at]!.data;
    assert.equal(p.reason, 'interactive_waiting');
    assert.ok(p.waitedMs >= PREEMPT_AFTER_MS, `waitedMs ${p.waitedMs}`);
    assert.ok(
      p.positionsKept >= 3 && p.positionsKept < BATCH_STEPS,
      `positionsKept ${p.positionsKept}`,
    );
    assert.ok(
      typeof p.discardedMs === 'number' && p.discardedMs >= 0 && p.discardedMs < 5_000,
      `discardedMs ${p.discardedMs}`,
    );
    const resumed = list.slice(at + 1).find((e) => e.type === 'run.started');
    assert.ok(
      resumed !== undefined &&
        typeof resumed.data.requeueDelayMs === 'number' &&
        resumed.data.requeueDelayMs >= 0,
      JSON.stringify(resumed),
    );
  }
  assert.equal(await metric(s.metricsUrls, 'keel_preemptions_total'), s.slots);
  assert.equal(await metric(s.metricsUrls, 'keel_preemption_requeue_delay_seconds_count'), s.slots);
}

for (const isolation of ['isolate', 'thread'] as const) {
  test(`preemption on SQLite (keel dev, agent code in ${isolation === 'isolate' ? 'isolates' : 'the main thread'})`, {
    timeout: 120_000,
  }, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'keel-preemption-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const ledger = join(dir, 'ledger.txt');
    const keel = await startKeelProcess({
      agents: AGENTS,
      dataDir: join(dir, 'data'),
      apiKey: API_KEY,
      env: {
        KEEL_ADMIN_KEY: ADMIN_KEY,
        KEEL_MAX_ACTIVE_RUNS: '2',
        KEEL_PREEMPT_AFTER_MS: String(PREEMPT_AFTER_MS),
        KEEL_TEST_LEDGER: ledger,
        KEEL_AGENT_ISOLATION: isolation,
      },
    });
    t.after(() => keel.kill('SIGKILL'));
    await preemptInteractive(t, {
      url: keel.url,
      api: apiClient(keel.url, API_KEY),
      ledger,
      slots: 2,
      metricsUrls: [keel.url],
    });
  });
}

test('preemption on Postgres with two processes (keel server + keel worker, one run slot each)', {
  timeout: 120_000,
  skip: !(await postgresAvailable()),
}, async (t) => {
  const scene = await distributedScene(t, 'preemption');
  const ledger = join(scene.dir, 'ledger.txt');
  const metricsPorts = [await freePort(), await freePort()];
  const env = (i: number) => ({
    KEEL_ADMIN_KEY: ADMIN_KEY,
    KEEL_MAX_ACTIVE_RUNS: '1',
    KEEL_PREEMPT_AFTER_MS: String(PREEMPT_AFTER_MS),
    KEEL_TEST_LEDGER: ledger,
    KEEL_METRICS_PORT: String(metricsPorts[i]),
  });
  const server = await startKeelRole({
    role: 'server',
    agents: AGENTS,
    databaseUrl: scene.db.url,
    name: 'preempt-server',
    apiKey: API_KEY,
    env: env(0),
  });
  scene.processes.push(server);
  scene.processes.push(
    await startKeelRole({
      role: 'worker',
      agents: AGENTS,
      databaseUrl: scene.db.url,
      name: 'preempt-worker',
      env: env(1),
    }),
  );
  await preemptInteractive(t, {
    url: server.url,
    api: apiClient(server.url, API_KEY),
    ledger,
    slots: 2,
    metricsUrls: metricsPorts.map((p) => `http://127.0.0.1:${p}`),
  });
});
