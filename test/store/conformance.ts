// The store conformance suite: every Store implementation must pass it unchanged. It exercises the
// contract the engine relies on — claims and leases, fencing of stale commits, idempotent creation
// under races, gapless event sequences under concurrent appends, input/cancel races with parking,
// cursor pagination — through the interface only.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { KeelError } from '../../src/domain/keel-error.ts';
import { newRunId } from '../../src/domain/ids.ts';
import type { NewRun, RunRecord } from '../../src/domain/records.ts';
import type { Store } from '../../src/store/store.ts';

export interface StoreFactory {
  name: string;
  /** A fresh, migrated, isolated store; `dispose` removes it. */
  create(): Promise<{ store: Store; dispose(): Promise<void> }>;
}

export const SERVED = ['agent@1'];

export function newRun(tenantId: string, overrides: Partial<NewRun> = {}): NewRun {
  return {
    id: newRunId(),
    tenantId,
    agent: 'agent',
    agentVersion: '1',
    input: { n: 1 },
    priority: 'interactive',
    budget: {},
    metadata: null,
    parentRunId: null,
    idempotencyKey: null,
    requestHash: null,
    ...overrides,
  };
}

export async function withStore(
  factory: StoreFactory,
  fn: (store: Store, tenantId: string) => Promise<void>,
): Promise<void> {
  const { store, dispose } = await factory.create();
  try {
    const tenant = await store.createTenant(
      `t-${Math.random().toString(36).slice(2)}`,
      `hash-${Math.random()}`,
    );
    await fn(store, tenant.id);
  } finally {
    await dispose();
  }
}

/**
 * Claims the one claimable run (it must be `id`) as worker `w` and commits `change` under its lease:
 * what a worker does in one turn.
 */
export async function claimAndCommit(
  store: Store,
  id: string,
  change: Omit<Parameters<Store['commit']>[0], 'runId' | 'leaseToken' | 'expectedStateVersion'>,
): Promise<void> {
  const [run] = await store.claimRuns({ owner: 'w', limit: 1, leaseMs: 60_000, served: SERVED });
  assert.equal(run?.id, id, 'the run is claimed');
  await store.commit({
    runId: id,
    leaseToken: run.leaseToken,
    expectedStateVersion: run.stateVersion,
    ...change,
  });
}

export async function rejectsWith(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (e: unknown) => e instanceof KeelError && e.code === code);
}

export function storeConformance(factory: StoreFactory): void {
  describe(`store conformance: ${factory.name}`, () => {
    test('tenants: keys resolve to their tenant; ensureTenant is idempotent', () =>
      withStore(factory, async (store) => {
        const t = await store.createTenant('acme', 'h1');
        assert.equal((await store.findTenantByKeyHash('h1'))?.id, t.id);
        assert.equal(await store.findTenantByKeyHash('nope'), null);
        const a = await store.ensureTenant('dev', 'h2');
        const b = await store.ensureTenant('dev', 'h3');
        assert.equal(a.id, b.id);
        assert.equal((await store.findTenantByKeyHash('h3'))?.id, a.id);
        await assert.rejects(store.createTenant('acme', 'h4'));
      }));

    test('createRun: idempotency key returns the first run; a different body conflicts; racing creates make one run', () =>
      withStore(factory, async (store, tenantId) => {
        const first = await store.createRun(
          newRun(tenantId, { idempotencyKey: 'k', requestHash: 'A' }),
        );
        assert.equal(first.created, true);
        const again = await store.createRun(
          newRun(tenantId, { idempotencyKey: 'k', requestHash: 'A' }),
        );
        assert.deepEqual([again.created, again.run.id], [false, first.run.id]);
        await rejectsWith(
          store.createRun(newRun(tenantId, { idempotencyKey: 'k', requestHash: 'B' })),
          'idempotency_conflict',
        );
        const racers = await Promise.all(
          Array.from({ length: 25 }, () =>
            store.createRun(newRun(tenantId, { idempotencyKey: 'race', requestHash: 'X' })),
          ),
        );
        assert.equal(racers.filter((r) => r.created).length, 1);
        assert.equal(new Set(racers.map((r) => r.run.id)).size, 1);
        const events = await store.listEvents(first.run.id, 0, 10);
        assert.deepEqual(
          events.map((e) => [e.seq, e.type]),
          [[1, 'run.created']],
        );
      }));

    test('claims: each run goes to one claimer; the fencing token and state version increase', () =>
      withStore(factory, async (store, tenantId) => {
        const ids = new Set<string>();
        for (let i = 0; i < 30; i++) ids.add((await store.createRun(newRun(tenantId))).run.id);
        await store.createRun(newRun(tenantId, { agentVersion: '2' })); // a version nobody here serves
        // Racing claimers: a claimer may come back short while another holds the tenant (the
        // fair window skips locked tenants), so they claim again until nothing is left. No run
        // may go to two of them.
        const claimed: RunRecord[] = [];
        for (let pass = 0; claimed.length < ids.size && pass < 20; pass++) {
          const claims = await Promise.all(
            ['w1', 'w2', 'w3'].map((owner) =>
              store.claimRuns({ owner, limit: 20, leaseMs: 60_000, served: SERVED }),
            ),
          );
          claimed.push(...claims.flat());
        }
        assert.equal(claimed.length, 30, 'each run claimed once');
        assert.deepEqual(new Set(claimed.map((r) => r.id)), ids);
        for (const run of claimed) {
          assert.equal(run.status, 'running');
          assert.equal(run.leaseToken, 1);
          assert.equal(run.stateVersion, 2);
        }
        assert.deepEqual(
          await store.claimRuns({ owner: 'w4', limit: 10, leaseMs: 60_000, served: SERVED }),
          [],
        );
      }));

    test('claims: interactive runs before batch runs, then oldest first', () =>
      withStore(factory, async (store, tenantId) => {
        const batch = (await store.createRun(newRun(tenantId, { priority: 'batch' }))).run.id;
        const i1 = (await store.createRun(newRun(tenantId))).run.id;
        const i2 = (await store.createRun(newRun(tenantId))).run.id;
        const claimed = await store.claimRuns({
          owner: 'w',
          limit: 3,
          leaseMs: 60_000,
          served: SERVED,
        });
        assert.deepEqual(
          claimed.map((r) => r.id),
          [i1, i2, batch],
        );
      }));

    test('leases: an expired lease is re-claimed with a higher token; the old holder is fenced off and audited', () =>
      withStore(factory, async (store, tenantId) => {
        const id = (await store.createRun(newRun(tenantId))).run.id;
        const [old] = await store.claimRuns({ owner: 'old', limit: 1, leaseMs: 1, served: SERVED });
        assert.ok(old);
        await new Promise((r) => setTimeout(r, 5));
        assert.deepEqual(
          await store.claimRuns({ owner: 'new', limit: 1, leaseMs: 60_000, served: SERVED }),
          [],
          'a run losing its lease is a suspect: not an ordinary claim',
        );
        const [fresh] = await store.claimRuns({
          owner: 'new',
          limit: 1,
          leaseMs: 60_000,
          served: SERVED,
          probation: true,
        });
        assert.equal(fresh?.id, id);
        assert.equal(
          fresh.leaseLosses,
          1,
          'a claim over an unreleased expired lease counts a lost lease',
        );
        assert.deepEqual(fresh.leaseLossOwners, ['old']);
        assert.equal(fresh.leaseToken, old.leaseToken + 1);
        const stale = {
          leaseToken: old.leaseToken,
          expectedStateVersion: old.stateVersion,
          currentLeaseToken: fresh.leaseToken,
          currentStateVersion: fresh.stateVersion,
          currentStatus: 'running',
        };
        const refused = await store
          .commit({
            runId: id,
            leaseToken: old.leaseToken,
            expectedStateVersion: old.stateVersion,
            journal: [{ seq: 1, kind: 'step', name: 's', status: 'succeeded', result: 'late' }],
            run: { counters: { steps: 1 } },
          })
          .then(
            () => undefined,
            (e: unknown) => e,
          );
        assert.ok(refused instanceof KeelError && refused.code === 'stale_write');
        assert.deepEqual(refused.details, stale, 'the refusal says what the run holds now');
        assert.deepEqual(await store.loadJournal(id), [], 'the stale result was not applied');
        const audited = (await store.listAudit(tenantId, { limit: 100 })).filter(
          (a) => a.action === 'stale_commit',
        );
        assert.deepEqual(
          audited.map((a) => [a.runId, a.resource, a.data]),
          [
            [
              id,
              `run:${id}`,
              { ...stale, journal: [{ seq: 1, kind: 'step', name: 's', status: 'succeeded' }] },
            ],
          ],
          'the stale commit is audited with what the run holds now',
        );
        const ok = await store.commit({
          runId: id,
          leaseToken: fresh.leaseToken,
          expectedStateVersion: fresh.stateVersion,
          journal: [
            {
              seq: 1,
              kind: 'step',
              name: 's',
              status: 'succeeded',
              result: 'fresh',
              worker: 'new',
            },
          ],
          run: { counters: { steps: 1 } },
          events: [{ type: 'effect.completed', data: {} }],
        });
        assert.equal(ok.stateVersion, fresh.stateVersion + 1);
        const journal = await store.loadJournal(id);
        assert.equal(journal[0]?.result, 'fresh');
        assert.equal(journal[0]?.leaseToken, fresh.leaseToken);
        assert.equal(journal[0]?.worker, 'new', 'the entry records the worker that wrote it');
        const committed = await store.getRun(id);
        assert.equal(committed?.counters.steps, 1);
        assert.equal(
          committed?.leaseLosses,
          0,
          'a commit is progress: the poison counter is reset',
        );
        assert.deepEqual(committed?.leaseLossOwners, []);
      }));

    test('probation claims take suspects, most lost leases first; readmitRun re-queues only a quarantined run', () =>
      withStore(factory, async (store, tenantId) => {
        const once = (await store.createRun(newRun(tenantId))).run.id;
        const twice = (await store.createRun(newRun(tenantId))).run.id;
        const fine = (await store.createRun(newRun(tenantId))).run.id;
        const lose = async (id: string, owner: string) => {
          const run = await store.getRun(id);
          // Hold the lease briefly and let it expire unreleased, as a dead worker would.
          const [claimed] = await store.claimRuns({
            owner,
            limit: 1,
            leaseMs: 1,
            served: SERVED,
            probation: run!.leaseOwner !== null || run!.leaseLosses > 0,
          });
          assert.equal(claimed?.id, id);
          await new Promise((r) => setTimeout(r, 5));
        };
        await lose(once, 'w1');
        await lose(twice, 'w2');
        // `fine` is ordinary; `once` and `twice` are suspects (their leases expire unreleased).
        const ordinary = await store.claimRuns({
          owner: 'o',
          limit: 5,
          leaseMs: 60_000,
          served: SERVED,
        });
        assert.deepEqual(
          ordinary.map((r) => r.id),
          [fine],
        );
        const [first] = await store.claimRuns({
          owner: 'p',
          limit: 1,
          leaseMs: 1,
          served: SERVED,
          probation: true,
        });
        assert.ok(first !== undefined && [once, twice].includes(first.id));
        await new Promise((r) => setTimeout(r, 5));
        const [next] = await store.claimRuns({
          owner: 'q',
          limit: 1,
          leaseMs: 60_000,
          served: SERVED,
          probation: true,
        });
        assert.equal(next?.id, first.id, 'two lost leases outrank one');
        assert.equal(next.leaseLosses, 2);
        await rejectsWith(store.readmitRun(next.id), 'run_not_quarantined');
        await store.commit({
          runId: next.id,
          leaseToken: next.leaseToken,
          expectedStateVersion: next.stateVersion,
          run: {
            status: 'failed',
            error: { code: 'poison_run', message: 'quarantined' },
            releaseLease: true,
          },
          events: [{ type: 'run.failed', data: {} }],
        });
        assert.equal(
          (await store.listRuns(tenantId, { limit: 10, errorCode: 'poison_run' }))[0]?.id,
          next.id,
        );
        const readmitted = await store.readmitRun(next.id);
        assert.equal(readmitted.status, 'queued');
        assert.equal(readmitted.error, null);
        assert.equal(readmitted.leaseLosses, 0);
        const [again] = await store.claimRuns({
          owner: 'r',
          limit: 5,
          leaseMs: 60_000,
          served: SERVED,
        });
        assert.equal(again?.id, next.id, 'a re-admitted run is ordinary again');
      }));

    test('a probation claim holds a last-chance suspect back unleased (its loss counted once) for a worker not alone', () =>
      withStore(factory, async (store, tenantId) => {
        const id = (await store.createRun(newRun(tenantId))).run.id;
        const expire = async (owner: string, probation: boolean) => {
          const [claimed] = await store.claimRuns({
            owner,
            limit: 1,
            leaseMs: 1,
            served: SERVED,
            probation,
          });
          assert.equal(claimed?.id, id);
          assert.equal(claimed.leaseOwner, owner);
          await new Promise((r) => setTimeout(r, 5));
        };
        await expire('w1', false);
        await expire('w2', true); // its first loss counted: 1
        const held = await store.claimRuns({
          owner: 'busy',
          limit: 1,
          leaseMs: 60_000,
          served: SERVED,
          probation: true,
          heldAtLosses: 2,
        });
        assert.equal(held[0]?.id, id);
        assert.deepEqual(
          [held[0].leaseLosses, held[0].leaseOwner, held[0].status],
          [2, null, 'queued'],
          'the second loss is counted; no lease is taken',
        );
        assert.deepEqual(held[0].leaseLossOwners, ['w1', 'w2']);
        assert.deepEqual(
          await store.claimRuns({ owner: 'o', limit: 5, leaseMs: 60_000, served: SERVED }),
          [],
          'still a suspect: ordinary claims leave it',
        );
        const again = await store.claimRuns({
          owner: 'busy',
          limit: 1,
          leaseMs: 60_000,
          served: SERVED,
          probation: true,
          heldAtLosses: 2,
        });
        assert.deepEqual(
          [again[0]?.id, again[0]?.leaseLosses, again[0]?.leaseOwner],
          [id, 2, null],
          'held again: no lease was lost, so no loss is counted',
        );
        const [alone] = await store.claimRuns({
          owner: 'alone',
          limit: 1,
          leaseMs: 60_000,
          served: SERVED,
          probation: true,
        });
        assert.deepEqual(
          [alone?.id, alone?.leaseLosses, alone?.leaseOwner, alone?.status],
          [id, 2, 'alone', 'running'],
        );
      }));

    test('heartbeats extend held leases and report cancels; a lost lease is missing', () =>
      withStore(factory, async (store, tenantId) => {
        const a = (await store.createRun(newRun(tenantId))).run.id;
        const b = (await store.createRun(newRun(tenantId))).run.id;
        await store.claimRuns({ owner: 'w', limit: 2, leaseMs: 60_000, served: SERVED });
        await store.requestCancel(b);
        const { held } = await store.heartbeat('w', [a, b, 'run_missing'], 60_000);
        const byId = new Map(held.map((h) => [h.id, h.status]));
        assert.equal(byId.get(a), 'running');
        assert.equal(byId.get(b), 'cancelling');
        assert.equal(byId.has('run_missing'), false);
        assert.deepEqual((await store.heartbeat('intruder', [a], 60_000)).held, []);
      }));

    test('a cancel request’s grace is kept with the run and in heartbeats; a cascaded cancel has none', () =>
      withStore(factory, async (store, tenantId) => {
        const [a, b, c, d] = await Promise.all(
          [1, 2, 3, 4].map(async () => (await store.createRun(newRun(tenantId))).run.id),
        );
        const claimed = await store.claimRuns({
          owner: 'w',
          limit: 4,
          leaseMs: 60_000,
          served: SERVED,
        });
        assert.equal((await store.getRun(a!))?.cancelGraceMs, null);
        assert.equal((await store.requestCancel(a!, 250)).cancelGraceMs, 250);
        // Already cancelling: the first request's grace stays.
        assert.equal((await store.requestCancel(a!, 9_000)).cancelGraceMs, 250);
        assert.equal((await store.requestCancel(b!, 0)).cancelGraceMs, 0);
        assert.equal((await store.requestCancel(c!)).cancelGraceMs, null);
        const parent = claimed.find((run) => run.id === c)!;
        const child = claimed.find((run) => run.id === d)!;
        // c's end cascades to d (as a parent's end commit cancels its children): no grace of its own.
        await store.commit({
          runId: parent.id,
          leaseToken: parent.leaseToken!,
          expectedStateVersion: (await store.getRun(parent.id))!.stateVersion,
          run: { status: 'cancelled', releaseLease: true },
          cancelRuns: [child.id],
        });
        assert.equal((await store.getRun(d!))?.status, 'cancelling');
        assert.equal((await store.getRun(d!))?.cancelGraceMs, null);
        const { held } = await store.heartbeat('w', [a!, b!, d!], 60_000);
        const byId = new Map(held.map((h) => [h.id, [h.status, h.cancelGraceMs]]));
        assert.deepEqual(byId.get(a!), ['cancelling', 250]);
        assert.deepEqual(byId.get(b!), ['cancelling', 0]);
        assert.deepEqual(byId.get(d!), ['cancelling', null]);
      }));

    test('commits of one run apply in order, and a commit behind the state version is stale', () =>
      withStore(factory, async (store, tenantId) => {
        const id = (await store.createRun(newRun(tenantId))).run.id;
        const [run] = await store.claimRuns({
          owner: 'w',
          limit: 1,
          leaseMs: 60_000,
          served: SERVED,
        });
        assert.ok(run);
        const commits = Array.from({ length: 10 }, (_, i) =>
          store.commit({
            runId: id,
            leaseToken: run.leaseToken,
            expectedStateVersion: run.stateVersion + i,
            journal: [{ seq: i + 1, kind: 'step', name: `s${i}`, status: 'succeeded', result: i }],
            events: [{ type: 'effect.completed', data: { i } }],
          }),
        );
        const outcomes = await Promise.all(commits);
        assert.deepEqual(
          outcomes.map((o) => o.stateVersion),
          Array.from({ length: 10 }, (_, i) => run.stateVersion + i + 1),
        );
        await rejectsWith(
          store.commit({
            runId: id,
            leaseToken: run.leaseToken,
            expectedStateVersion: run.stateVersion,
          }),
          'stale_write',
        );
      }));

    test('events stay gapless under concurrent appends from commits, inputs and cancels', () =>
      withStore(factory, async (store, tenantId) => {
        const id = (await store.createRun(newRun(tenantId))).run.id;
        const [run] = await store.claimRuns({
          owner: 'w',
          limit: 1,
          leaseMs: 60_000,
          served: SERVED,
        });
        assert.ok(run);
        const writes: Array<Promise<unknown>> = [];
        for (let i = 0; i < 40; i++) {
          writes.push(
            store.commit({
              runId: id,
              leaseToken: run.leaseToken,
              expectedStateVersion: run.stateVersion + i,
              events: [
                { type: 'a', data: i },
                { type: 'b', data: i },
              ],
            }),
          );
          writes.push(store.provideInput(id, `k${i}`, i));
        }
        await Promise.all(writes);
        await store.requestCancel(id);
        const events = await store.listEvents(id, 0, 1000);
        assert.deepEqual(
          events.map((e) => e.seq),
          Array.from({ length: events.length }, (_, i) => i + 1),
        );
        assert.equal(
          events.length,
          1 + 80 + 40 + 1,
          'created, 2 per commit, 1 per input, cancelling (a claim writes no event)',
        );
      }));

    test('park: waiting for an input that is already there queues the run instead (no lost wake-up)', () =>
      withStore(factory, async (store, tenantId) => {
        const id = (await store.createRun(newRun(tenantId))).run.id;
        const [run] = await store.claimRuns({
          owner: 'w',
          limit: 1,
          leaseMs: 60_000,
          served: SERVED,
        });
        assert.ok(run);
        await store.provideInput(id, 'go', true); // arrives while the worker still runs the agent
        const parked = await store.commit({
          runId: id,
          leaseToken: run.leaseToken,
          expectedStateVersion: run.stateVersion,
          journal: [{ seq: 1, kind: 'input', name: 'go', status: 'waiting' }],
          run: { status: 'waiting', waitingReason: 'input', releaseLease: true },
          wakeIf: { inputKeys: ['go'] },
        });
        assert.equal(parked.status, 'queued');
        assert.equal(
          (await store.claimRuns({ owner: 'w2', limit: 1, leaseMs: 60_000, served: SERVED }))
            .length,
          1,
        );
      }));

    test('input: posting for a parked wait queues the run; a duplicate key is refused; a finished run refuses', () =>
      withStore(factory, async (store, tenantId) => {
        const id = (await store.createRun(newRun(tenantId))).run.id;
        const [run] = await store.claimRuns({
          owner: 'w',
          limit: 1,
          leaseMs: 60_000,
          served: SERVED,
        });
        assert.ok(run);
        await store.commit({
          runId: id,
          leaseToken: run.leaseToken,
          expectedStateVersion: run.stateVersion,
          journal: [{ seq: 1, kind: 'input', name: 'go', status: 'waiting' }],
          run: { status: 'waiting', waitingReason: 'input', releaseLease: true },
        });
        assert.equal(
          (await store.provideInput(id, 'other', 1)).status,
          'waiting',
          'an input nobody waits for does not wake the run',
        );
        assert.equal((await store.provideInput(id, 'go', 2)).status, 'queued');
        await rejectsWith(store.provideInput(id, 'go', 3), 'input_already_provided');
        assert.deepEqual(await store.getInput(id, 'go'), { value: 2 });
        const [again] = await store.claimRuns({
          owner: 'w',
          limit: 1,
          leaseMs: 60_000,
          served: SERVED,
        });
        assert.ok(again);
        await store.commit({
          runId: id,
          leaseToken: again.leaseToken,
          expectedStateVersion: again.stateVersion,
          run: { status: 'succeeded', result: 1, releaseLease: true },
        });
        await rejectsWith(store.provideInput(id, 'late', 1), 'run_terminal');
        await rejectsWith(store.requestCancel(id), 'run_terminal');
        await rejectsWith(store.provideInput('run_missing', 'k', 1), 'run_not_found');
      }));

    test('timers: a waiting run is claimable again only when its wake time is due', () =>
      withStore(factory, async (store, tenantId) => {
        const id = (await store.createRun(newRun(tenantId))).run.id;
        const [run] = await store.claimRuns({
          owner: 'w',
          limit: 1,
          leaseMs: 60_000,
          served: SERVED,
        });
        assert.ok(run);
        await store.commit({
          runId: id,
          leaseToken: run.leaseToken,
          expectedStateVersion: run.stateVersion,
          run: {
            status: 'waiting',
            waitingReason: 'timer',
            wakeAt: Date.now() + 60,
            releaseLease: true,
          },
        });
        assert.deepEqual(
          await store.claimRuns({ owner: 'w', limit: 1, leaseMs: 60_000, served: SERVED }),
          [],
        );
        await new Promise((r) => setTimeout(r, 80));
        assert.equal(
          (await store.claimRuns({ owner: 'w', limit: 1, leaseMs: 60_000, served: SERVED }))[0]?.id,
          id,
        );
      }));

    test('cancel of a run nobody holds makes it claimable as cancelling; child completion wakes its parent', () =>
      withStore(factory, async (store, tenantId) => {
        const parent = (await store.createRun(newRun(tenantId))).run.id;
        const [p] = await store.claimRuns({
          owner: 'w',
          limit: 1,
          leaseMs: 60_000,
          served: SERVED,
        });
        assert.ok(p);
        const childId = newRunId();
        await store.commit({
          runId: parent,
          leaseToken: p.leaseToken,
          expectedStateVersion: p.stateVersion,
          journal: [
            {
              seq: 1,
              kind: 'child',
              name: 'agent',
              status: 'waiting',
              args: { childRunId: childId },
            },
          ],
          createRuns: [newRun(tenantId, { id: childId, parentRunId: parent })],
        });
        await store.commit({
          runId: parent,
          leaseToken: p.leaseToken,
          expectedStateVersion: p.stateVersion + 1,
          run: { status: 'waiting', waitingReason: 'child', releaseLease: true },
        });
        const [c] = await store.claimRuns({
          owner: 'w',
          limit: 1,
          leaseMs: 60_000,
          served: SERVED,
        });
        assert.equal(c?.id, childId);
        await store.commit({
          runId: childId,
          leaseToken: c.leaseToken,
          expectedStateVersion: c.stateVersion,
          run: { status: 'succeeded', result: 'r', releaseLease: true },
          wakeRuns: [parent],
        });
        assert.equal((await store.getRun(parent))?.status, 'queued');
        const cancelled = await store.requestCancel(parent);
        assert.equal(cancelled.status, 'cancelling');
        const [again] = await store.claimRuns({
          owner: 'w',
          limit: 1,
          leaseMs: 60_000,
          served: SERVED,
        });
        assert.equal(again?.status, 'cancelling', 'a claimed cancelling run stays cancelling');
      }));

    test('listRuns: cursor pagination returns every run once, newest first, with filters', () =>
      withStore(factory, async (store, tenantId) => {
        const ids: string[] = [];
        for (let i = 0; i < 23; i++)
          ids.push(
            (await store.createRun(newRun(tenantId, { agent: i % 2 === 0 ? 'even' : 'odd' }))).run
              .id,
          );
        const other = await store.createTenant('other', 'other-hash');
        await store.createRun(newRun(other.id));
        const seen: string[] = [];
        let afterId: string | undefined;
        for (;;) {
          const page = await store.listRuns(tenantId, {
            limit: 5,
            ...(afterId ? { afterId } : {}),
          });
          seen.push(...page.map((r) => r.id));
          if (page.length < 5) break;
          afterId = page.at(-1)!.id;
        }
        assert.deepEqual(seen, [...ids].reverse());
        assert.equal((await store.listRuns(tenantId, { limit: 100, agent: 'even' })).length, 12);
        assert.equal((await store.listRuns(tenantId, { limit: 100, status: 'queued' })).length, 23);
        assert.equal((await store.listRuns(tenantId, { limit: 100, status: 'running' })).length, 0);
      }));

    test('releaseLeases hands runs back at once; expireForeignLeases frees a dead owner’s runs', () =>
      withStore(factory, async (store, tenantId) => {
        const a = (await store.createRun(newRun(tenantId))).run.id;
        const b = (await store.createRun(newRun(tenantId))).run.id;
        await store.claimRuns({ owner: 'w1', limit: 1, leaseMs: 60_000, served: SERVED });
        await store.claimRuns({ owner: 'dead', limit: 1, leaseMs: 60_000, served: SERVED });
        await store.releaseLeases('w1', [a]);
        assert.equal((await store.getRun(a))?.status, 'queued');
        assert.equal(await store.expireForeignLeases('me'), 1);
        const reclaimed = await store.claimRuns({
          owner: 'me',
          limit: 5,
          leaseMs: 60_000,
          served: SERVED,
        });
        const suspects = await store.claimRuns({
          owner: 'me',
          limit: 5,
          leaseMs: 60_000,
          served: SERVED,
          probation: true,
        });
        assert.deepEqual(
          reclaimed.map((r) => r.id),
          [a],
          'a released run is ordinary',
        );
        assert.deepEqual(
          suspects.map((r) => r.id),
          [b],
          'a dead owner’s run is a suspect',
        );
      }));
    test("tenantUsage: sums the committed counters of the tenant's runs, and only its own", () =>
      withStore(factory, async (store, tenantId) => {
        const other = await store.createTenant(
          `other-${Math.random().toString(36).slice(2)}`,
          `hash-${Math.random()}`,
        );
        assert.deepEqual(await store.tenantUsage(tenantId), {
          runs: 0,
          steps: 0,
          inputTokens: 0,
          outputTokens: 0,
          costUsd: 0,
        });
        for (const t of [tenantId, tenantId, other.id]) await store.createRun(newRun(t));
        const claimed = await store.claimRuns({
          owner: 'w',
          limit: 10,
          leaseMs: 60_000,
          served: SERVED,
        });
        for (const [i, run] of claimed.entries()) {
          await store.commit({
            runId: run.id,
            leaseToken: run.leaseToken,
            expectedStateVersion: run.stateVersion,
            journal: [{ seq: 1, kind: 'model', name: 'm', status: 'succeeded', result: 'ok' }],
            run: {
              counters: { steps: 1, inputTokens: 100 * (i + 1), outputTokens: 10, costUsd: 0.25 },
            },
          });
        }
        const mine = await store.tenantUsage(tenantId);
        const theirs = await store.tenantUsage(other.id);
        assert.equal(mine.runs, 2);
        assert.equal(theirs.runs, 1);
        assert.equal(mine.steps + theirs.steps, 3);
        assert.equal(mine.inputTokens + theirs.inputTokens, 600);
        assert.equal(mine.outputTokens, 20);
        assert.ok(Math.abs(mine.costUsd - 0.5) < 1e-9);
      }));

    test('liveMetrics: live runs per tenant and status, the claimable queue and its oldest item, unknown executions', () =>
      withStore(factory, async (store, tenantId) => {
        const other = await store.createTenant(
          `t-${Math.random().toString(36).slice(2)}`,
          `hash-${Math.random()}`,
        );
        const empty = await store.liveMetrics(Date.now());
        assert.deepEqual(
          [empty.runs, empty.claimable, empty.oldestClaimableSince, empty.unknownExecutions],
          [[], 0, null, 0],
        );
        const first = (await store.createRun(newRun(tenantId))).run;
        await store.createRun(newRun(tenantId));
        await store.createRun(newRun(other.id, { agent: 'unserved' }));
        const [claimed] = await store.claimRuns({
          owner: 'w',
          limit: 1,
          leaseMs: 60_000,
          served: SERVED,
        });
        assert.equal(claimed?.id, first.id);
        const live = await store.liveMetrics(Date.now() + 1);
        const counts = Object.fromEntries(
          live.runs.map((r) => [`${r.tenantId}/${r.status}`, r.count]),
        );
        assert.deepEqual(counts, {
          [`${tenantId}/running`]: 1,
          [`${tenantId}/queued`]: 1,
          [`${other.id}/queued`]: 1,
        });
        assert.equal(
          live.claimable,
          2,
          'queued runs are in the queue whatever their agent; a leased one is not',
        );
        assert.ok(live.oldestClaimableSince !== null && live.oldestClaimableSince <= Date.now());
        await store.commit({
          runId: first.id,
          leaseToken: claimed!.leaseToken,
          expectedStateVersion: claimed!.stateVersion,
          journal: [
            {
              seq: 1,
              kind: 'tool',
              name: 't',
              status: 'unknown',
              executionId: `${first.id}.1`,
              effectClass: 'side-effect',
            },
          ],
        });
        assert.equal((await store.liveMetrics(Date.now())).unknownExecutions, 1);
        const stalledOf = async () =>
          (await store.liveMetrics(Date.now())).runs.map((r) => [r.status, r.stalled]);
        assert.deepEqual(
          (await stalledOf()).filter(([, n]) => n !== 0),
          [],
          'none stalled yet',
        );
        await store.commit({
          runId: first.id,
          leaseToken: claimed!.leaseToken,
          expectedStateVersion: claimed!.stateVersion + 1,
          run: { stalled: { since: Date.now(), effect: null, policy: 'alert' } },
        });
        assert.deepEqual(
          (await stalledOf()).filter(([, n]) => n !== 0),
          [['running', 1]],
          'the stalled run is counted',
        );
        await store.commit({
          runId: first.id,
          leaseToken: claimed!.leaseToken,
          expectedStateVersion: claimed!.stateVersion + 2,
          run: {
            status: 'failed',
            releaseLease: true,
            error: { code: 'tool_failed', message: 'x' },
          },
        });
        const after = await store.liveMetrics(Date.now());
        assert.equal(
          after.runs.some((r) => r.status === 'running'),
          false,
          'an ended run is no longer live',
        );
        assert.equal(after.unknownExecutions, 0, 'an ended run has no outstanding execution');
      }));
    // Read-only aggregates
    test('summaries: runs per agent and status with consumption; oldest queued; completions per time bucket', () =>
      withStore(factory, async (store, tenantId) => {
        const other = await store.createTenant(
          `o-${Math.random().toString(36).slice(2)}`,
          `hash-${Math.random()}`,
        );
        await store.createRun(newRun(other.id, { agentVersion: '9' })); // another tenant's run (not claimable here) is never counted
        const before = Date.now();
        for (let i = 0; i < 3; i++) await store.createRun(newRun(tenantId));
        await store.createRun(newRun(tenantId, { agent: 'other' }));
        const [a, b] = await store.claimRuns({
          owner: 'w',
          limit: 2,
          leaseMs: 60_000,
          served: SERVED,
        });
        assert.ok(a && b);
        await store.commit({
          runId: a.id,
          leaseToken: a.leaseToken,
          expectedStateVersion: a.stateVersion,
          run: {
            status: 'succeeded',
            result: 1,
            counters: { steps: 2, inputTokens: 10, outputTokens: 5, costUsd: 0.25 },
            releaseLease: true,
          },
        });
        await store.commit({
          runId: b.id,
          leaseToken: b.leaseToken,
          expectedStateVersion: b.stateVersion,
          run: {
            status: 'failed',
            error: { code: 'x', message: 'x' },
            counters: { steps: 1, costUsd: 0.5 },
            releaseLease: true,
          },
        });
        const rows = await store.summarizeRuns(tenantId);
        const row = (agent: string, status: string) =>
          rows.find((r) => r.agent === agent && r.status === status);
        assert.deepEqual(rows.map((r) => `${r.agent}/${r.status}:${r.runs}`).sort(), [
          'agent/failed:1',
          'agent/queued:1',
          'agent/succeeded:1',
          'other/queued:1',
        ]);
        assert.deepEqual(
          [
            row('agent', 'succeeded')?.steps,
            row('agent', 'succeeded')?.inputTokens,
            row('agent', 'succeeded')?.outputTokens,
            row('agent', 'succeeded')?.costUsd,
          ],
          [2, 10, 5, 0.25],
        );
        assert.equal(row('agent', 'failed')?.costUsd, 0.5);
        const oldest = row('agent', 'queued')?.oldestClaimableAt;
        assert.ok(
          oldest !== null &&
            oldest !== undefined &&
            oldest >= before - 1000 &&
            oldest <= Date.now(),
          String(oldest),
        );
        assert.equal(row('agent', 'succeeded')?.oldestClaimableAt, null);
        const buckets = await store.countEndedRuns(tenantId, before - 60_000, 60_000);
        assert.deepEqual(buckets.map((x) => [x.status, x.runs]).sort(), [
          ['failed', 1],
          ['succeeded', 1],
        ]);
        for (const x of buckets) assert.equal(x.bucketStart % 60_000, 0);
        assert.deepEqual(await store.countEndedRuns(tenantId, Date.now() + 60_000, 60_000), []);

        const tenants = await store.summarizeTenants();
        const mine = tenants
          .filter((t) => t.tenantId === tenantId)
          .map((t) => `${t.status}:${t.runs}:${t.costUsd}`)
          .sort();
        assert.deepEqual(mine, ['failed:1:0.5', 'queued:2:0', 'succeeded:1:0.25']);
        assert.equal(
          tenants.find((t) => t.tenantId === tenantId && t.status === 'queued')?.oldestClaimableAt,
          oldest,
        );
        assert.equal(
          tenants.find((t) => t.tenantId === tenantId && t.status === 'succeeded')
            ?.oldestClaimableAt,
          null,
        );
        assert.deepEqual(
          tenants.filter((t) => t.tenantId === other.id).map((t) => [t.status, t.runs]),
          [['queued', 1]],
        );
        const empty = await store.createTenant(
          `e-${Math.random().toString(36).slice(2)}`,
          `hash-${Math.random()}`,
        );
        assert.deepEqual(
          (await store.summarizeTenants())
            .filter((t) => t.tenantId === empty.id)
            .map((t) => [t.status, t.runs, t.tenantName]),
          [[null, 0, empty.name]],
        );
      }));
  });
}
