// The poison rule blames only the run whose own code kills processes: a suspect on its last chance
// (one lost lease short of quarantine) never holds a lease in a process that runs anything else, so
// its last loss cannot be a neighbour's crash. Before, a busy worker took such a suspect's lease and
// handed it back; a crash in that window (a poison neighbour) quarantined a healthy run.
// Real SQLite store and orchestrator; the store is watched to see every claim's answer.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RunRecord } from '../src/domain/records.ts';
import { AgentRegistry } from '../src/engine/registry.ts';
import { Orchestrator } from '../src/engine/orchestrator.ts';
import { defineAgent } from '../src/index.ts';
import { ModelGateway } from '../src/models/gateway.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import type { ClaimRequest, Store } from '../src/store/store.ts';
import { until } from './support/distributed.ts';
import { newRun } from './store/conformance.ts';

test('a busy worker never leases a last-chance suspect: it drains, then runs the suspect alone', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-blame-'));
  const store = new SqliteStore({ path: join(dir, 'keel.db') });
  await store.migrate();
  const tenant = await store.ensureTenant('t', 'hash');
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let busyRunning = false;
  const suspectStartedWhile: boolean[] = [];
  const registry = new AgentRegistry();
  registry.register(
    defineAgent({
      name: 'busy',
      version: '1',
      async run(ctx) {
        return ctx.step('hold', async () => {
          busyRunning = true;
          await released;
          busyRunning = false;
          return 'done';
        });
      },
    }),
  );
  registry.register(
    defineAgent({
      name: 'suspect',
      version: '1',
      async run(ctx) {
        suspectStartedWhile.push(busyRunning);
        return ctx.step('fine', () => 'fine');
      },
    }),
  );
  const create = async (agent: string) =>
    (await store.createRun(newRun(tenant.id, { agent, input: null }))).run.id;

  // The suspect lost a lease once (its claim made it a suspect) and holds a second one, expired:
  // the next claim counts its second loss, one short of the threshold of 3.
  const suspect = await create('suspect');
  for (const [owner, probation] of [
    ['dead-1', false],
    ['dead-2', true],
  ] as const) {
    await store.claimRuns({ owner, limit: 1, leaseMs: 1, served: ['suspect@1'], probation });
    await new Promise((r) => setTimeout(r, 5));
  }
  const busy = await create('busy');

  const worker = 'worker-under-test';
  const leasedWhileBusy: RunRecord[] = [];
  const watched = new Proxy(store, {
    get(target, prop) {
      if (prop === 'claimRuns')
        return async (request: ClaimRequest) => {
          const runs = await target.claimRuns(request);
          const other = await target.getRun(busy);
          for (const run of runs)
            if (run.id === suspect && run.leaseOwner === worker && other?.leaseOwner === worker)
              leasedWhileBusy.push(run);
          return runs;
        };
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as Store;
  const orchestrator = new Orchestrator({
    store: watched,
    registry,
    gateway: new ModelGateway([]),
    owner: worker,
    pollIntervalMs: 10,
    poisonAfterLeaseLosses: 3,
  });
  orchestrator.start();
  t.after(async () => {
    await orchestrator.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  await until('the busy run to start', async () => (busyRunning ? true : undefined), 10_000);
  // Many poll rounds while busy: each asks for suspects and must not take the last-chance lease.
  await new Promise((r) => setTimeout(r, 300));
  const meanwhile = await store.getRun(suspect);
  assert.deepEqual(
    [meanwhile?.status, meanwhile?.leaseOwner, meanwhile?.leaseLosses],
    ['queued', null, 2],
    'held back unleased, its second loss counted once',
  );
  release();
  const done = await until(
    'the suspect to succeed',
    async () => {
      const run = await store.getRun(suspect);
      return run?.status === 'succeeded' ? run : undefined;
    },
    10_000,
  );
  assert.equal(done.result, 'fine');
  assert.equal((await store.getRun(busy))?.status, 'succeeded');
  assert.deepEqual(leasedWhileBusy, [], 'no claim gave the busy worker the suspect’s lease');
  assert.deepEqual(suspectStartedWhile, [false], 'the suspect ran once, alone');
});
