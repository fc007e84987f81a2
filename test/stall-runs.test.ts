// Progress and stuck runs on a real `keel dev` (SQLite), and a `keel server` on Postgres: a tool that hangs (never resolves, ignores
// its signal) behind an agent with stallAfterMs 1 s is shown stalled — the run's `stalled` field,
// a `run.stalled` event no sooner than its limit, keel_runs_stalled_total — and each onStall
// policy runs: `alert` leaves the run running, `retry-effect` aborts the attempt and the retry
// answers (the run succeeds, `run.unstalled`), `fail` fails the run with `run_stalled`. And
// ctx.progress is in the run's view in both isolation modes, and survives a kill and a restart
// (the replayed report writes nothing; the next live one does).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { runRunsCommand } from '../src/cli/client/runs-command.ts';
import { apiClient, distributedScene, until, type ApiClient } from './support/distributed.ts';
import { startKeelProcess, startKeelRole, type KeelProcess } from './support/keel-process.ts';
import { postgresAvailable } from './support/postgres.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/stall-agents.ts', import.meta.url));
const KEY = 'stall-runs-key';
const ADMIN = 'stall-runs-admin-key-0123456789abcdef';
const STALL_AFTER_MS = 1_000;

async function start(
  t: { after(fn: () => Promise<void>): void },
  env: Record<string, string> = {},
) {
  const dir = mkdtempSync(join(tmpdir(), 'keel-stall-'));
  const ledger = join(dir, 'ledger.txt');
  const options = {
    agents: AGENTS,
    dataDir: join(dir, 'data'),
    apiKey: KEY,
    env: { KEEL_TEST_LEDGER: ledger, KEEL_ADMIN_KEY: ADMIN, ...env },
  };
  const state: { keel: KeelProcess } = { keel: await startKeelProcess(options) };
  t.after(async () => {
    await state.keel.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  return { state, options, ledger };
}

async function events(
  api: ApiClient,
  runId: string,
): Promise<Array<{ type: string; at: string; data: any }>> {
  return (await api.request('GET', `/v1/runs/${runId}/events?format=json`)).body;
}

/** `keel runs get <id>` against the process: what it printed. */
async function keelRunsGet(url: string, runId: string): Promise<string> {
  let stdout = '';
  const code = await runRunsCommand(['get', runId], {
    stdout: new Writable({
      write(chunk, _encoding, callback) {
        stdout += String(chunk);
        callback();
      },
    }),
    stderr: new Writable({ write: (_c, _e, callback) => callback() }),
    env: { KEEL_URL: url, KEEL_API_KEY: KEY },
  });
  assert.equal(code, 0, stdout);
  return stdout;
}

/** Polls the run until `predicate` holds of it (failing with `what` after `timeoutMs`). */
function runWhen(
  api: ApiClient,
  runId: string,
  what: string,
  predicate: (run: any) => boolean,
  timeoutMs: number,
): Promise<any> {
  return until(
    what,
    async () => {
      const r = (await api.request('GET', `/v1/runs/${runId}`)).body;
      return predicate(r) ? r : undefined;
    },
    timeoutMs,
  );
}

async function submit(api: ApiClient, agent: string, input: unknown): Promise<string> {
  const r = await api.request('POST', '/v1/runs', { agent, input });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.id;
}

test('a hung tool is shown stalled within its limit, and each onStall policy runs', async (t) => {
  const { state, ledger } = await start(t);
  const api = apiClient(state.keel.url, KEY);
  const alertRun = await submit(api, 'stall-alert', { key: 'a', hangOn: [1, 2, 3] });
  const retryRun = await submit(api, 'stall-retry', { key: 'r', hangOn: [1] });
  const failRun = await submit(api, 'stall-fail', { key: 'f', hangOn: [1, 2, 3] });

  // alert: the run stays running, marked stalled with the tool call in flight.
  const stalled = await runWhen(
    api,
    alertRun,
    'the alert run to be marked stalled',
    (r) => r.stalled !== null,
    30_000,
  );
  assert.equal(stalled.status, 'running');
  assert.deepEqual(stalled.stalled.effect, {
    seq: 1,
    kind: 'tool',
    name: 'stall-hang',
    attempt: 1,
  });
  assert.equal(stalled.stalled.policy, 'alert');
  assert.deepEqual(stalled.progress.state, { phase: 'calling the tool' });
  const alertEvents = await events(api, alertRun);
  const marked = alertEvents.find((e) => e.type === 'run.stalled');
  assert.ok(marked, alertEvents.map((e) => e.type).join(' '));
  assert.equal(marked.data.policy, 'alert');
  assert.ok(
    Date.parse(marked.at) - Date.parse(marked.data.since) >= STALL_AFTER_MS,
    'not marked before its limit',
  );
  assert.ok(!alertEvents.some((e) => e.type === 'run.unstalled'));
  const metrics = await (
    await fetch(`${state.keel.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })
  ).text();
  const shown = await keelRunsGet(state.keel.url, alertRun);
  assert.match(shown, /progress:\s+\{"phase":"calling the tool"\}/);
  assert.match(shown, /stalled:\s+since .* on tool stall-hang #1 \(attempt 1\), onStall alert/);
  assert.match(metrics, /keel_runs_stalled_total\{tenant="[^"]+",policy="alert"\} [1-9]/);
  assert.match(metrics, /keel_runs_stalled\{tenant="[^"]+"\} [1-9]/, 'the gauge counts it now');

  // retry-effect: attempt 1 is aborted when the run stalls; attempt 2 answers.
  const retried = await runWhen(
    api,
    retryRun,
    'the retry run to end',
    (r) => r.status === 'succeeded' || r.status === 'failed',
    30_000,
  );
  assert.equal(retried.status, 'succeeded', JSON.stringify(retried.error));
  assert.deepEqual(retried.result, { answeredOn: 2 });
  assert.equal(retried.stalled, null);
  const retryTypes = (await events(api, retryRun)).map((e) => [e.type, e.data?.error?.code]);
  const at = (type: string) => retryTypes.findIndex(([t]) => t === type);
  assert.ok(at('run.stalled') >= 0, JSON.stringify(retryTypes));
  assert.deepEqual(
    retryTypes.find(([type]) => type === 'effect.retrying'),
    ['effect.retrying', 'effect_stalled'],
  );
  assert.ok(at('run.unstalled') > at('run.stalled'), 'the retry moved the run again');
  const attempts = readFileSync(ledger, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('attempt r '));
  assert.deepEqual(attempts, ['attempt r 1', 'attempt r 2']);

  // fail: the run fails with the stable code.
  const failed = await runWhen(
    api,
    failRun,
    'the fail run to end',
    (r) => r.status === 'failed' || r.status === 'succeeded',
    30_000,
  );
  assert.equal(failed.status, 'failed');
  assert.equal(failed.error.code, 'run_stalled');
  assert.equal(failed.stalled, null);
  assert.ok((await events(api, failRun)).some((e) => e.type === 'run.stalled'));

  const cancel = await api.request('POST', `/v1/runs/${alertRun}/cancel`, {});
  assert.ok(cancel.status < 300, JSON.stringify(cancel.body));
});

test('retry-effect on a side effect reconciles it: retried when not found, parked when unknown', async (t) => {
  const { state, ledger } = await start(t);
  const api = apiClient(state.keel.url, KEY);
  const asked = await submit(api, 'stall-side', { key: 's', hangOn: [1], blind: false });
  const blind = await submit(api, 'stall-side', { key: 'b', hangOn: [], blind: true });

  const retried = await runWhen(
    api,
    asked,
    'the side effect with a query hook to end',
    (r) => r.status === 'succeeded' || r.status === 'failed',
    30_000,
  );
  assert.equal(retried.status, 'succeeded', JSON.stringify(retried.error));
  assert.deepEqual(retried.result, { answeredOn: 2 });
  const reconciled = (await events(api, asked)).filter((e) => e.type === 'effect.reconciled');
  assert.deepEqual(
    reconciled.map((e) => [e.data.verdict, e.data.cause]),
    [['not_found', 'stall']],
  );

  // No query hook: the aborted attempt may have happened, so the run parks for an operator.
  const parked = await runWhen(
    api,
    blind,
    'the blind side effect to park',
    (r) => r.status === 'waiting',
    30_000,
  );
  assert.equal(parked.waitingReason, 'unknown_side_effect');
  assert.ok((await events(api, blind)).some((e) => e.type === 'effect.unknown'));
  const lines = readFileSync(ledger, 'utf8').split('\n');
  assert.deepEqual(
    lines.filter((l) => l.startsWith('attempt b ')),
    ['attempt b 1'],
    'never run again blindly',
  );
  assert.deepEqual(
    lines.filter((l) => l.startsWith('attempt s ')),
    ['attempt s 1', 'attempt s 2'],
  );
});

for (const isolation of ['isolate', 'thread'] as const) {
  test(`ctx.progress is in the run's view and survives a restart (${isolation})`, async (t) => {
    const { state, options } = await start(t, { KEEL_AGENT_ISOLATION: isolation });
    const api = apiClient(state.keel.url, KEY);
    const runId = await submit(api, 'progress-report', { sleepMs: 2_000 });
    const first = await runWhen(
      api,
      runId,
      'the first progress report',
      (r) => r.progress !== null,
      30_000,
    );
    assert.deepEqual(first.progress.state, { phase: 'first', done: 1 });
    assert.ok(Number.isFinite(Date.parse(first.progress.at)));

    await state.keel.kill('SIGKILL');
    state.keel = await startKeelProcess({
      ...options,
      env: { ...options.env, KEEL_AGENT_ISOLATION: isolation },
    });
    const restarted = apiClient(state.keel.url, KEY);
    const kept = (await restarted.request('GET', `/v1/runs/${runId}`)).body;
    assert.ok(
      ['first', 'second'].includes(kept.progress?.state?.phase),
      `the report survived the restart: ${JSON.stringify(kept.progress)}`,
    );
    const second = await runWhen(
      restarted,
      runId,
      'the second progress report',
      (r) => r.progress?.state?.phase === 'second',
      60_000,
    );
    const done = await runWhen(
      restarted,
      runId,
      'the run to succeed',
      (r) => r.status === 'succeeded',
      60_000,
    );
    // The replays after each sleep ran `progress({ phase: 'first' })` again: it wrote nothing.
    assert.deepEqual(
      done.progress,
      second.progress,
      'the replay after the last sleep rewrote nothing',
    );
  });
}

test('on Postgres (keel server): a hung tool is shown stalled, and onStall fail fails the run', {
  skip: !(await postgresAvailable()),
}, async (t) => {
  const { dir, db, processes } = await distributedScene(t, 'stall-runs');
  const server = await startKeelRole({
    role: 'server',
    name: 'keel-server',
    agents: AGENTS,
    databaseUrl: db.url,
    apiKey: KEY,
    env: { KEEL_TEST_LEDGER: join(dir, 'ledger.txt') },
  });
  processes.push(server);
  const api = apiClient(server.url, KEY);
  const alertRun = await submit(api, 'stall-alert', { key: 'a', hangOn: [1, 2, 3] });
  const failRun = await submit(api, 'stall-fail', { key: 'f', hangOn: [1, 2, 3] });
  const stalled = await runWhen(
    api,
    alertRun,
    'the alert run to be marked stalled',
    (r) => r.stalled !== null,
    30_000,
  );
  assert.equal(stalled.status, 'running');
  assert.equal(stalled.stalled.effect?.name, 'stall-hang');
  assert.deepEqual(stalled.progress.state, { phase: 'calling the tool' });
  const failed = await runWhen(
    api,
    failRun,
    'the fail run to end',
    (r) => r.status === 'failed' || r.status === 'succeeded',
    30_000,
  );
  assert.equal(failed.error?.code, 'run_stalled');
  assert.equal(failed.stalled, null);
  await api.request('POST', `/v1/runs/${alertRun}/cancel`, {});
});
