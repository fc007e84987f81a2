// Store conformance for tenants' quotas and fair claiming, run on every store: quota records,
// admission of queued runs under races, claims shared by weight and not by queue length,
// concurrency caps, and the weighted share over 1,000-dispatch windows with random arrivals driven
// through the real claim statements.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { RunRecord } from '../../src/domain/records.ts';
import type { Store } from '../../src/store/store.ts';
import { worstShareError, type DispatchLog } from '../support/share-windows.ts';
import { newRun, rejectsWith, SERVED, withStore, type StoreFactory } from './conformance.ts';

const claim = (store: Store, limit: number, owner = 'w') =>
  store.claimRuns({ owner, limit, leaseMs: 60_000, served: SERVED });
const finish = (store: Store, run: RunRecord) =>
  store.commit({
    runId: run.id,
    leaseToken: run.leaseToken,
    expectedStateVersion: run.stateVersion,
    run: { status: 'succeeded', result: null, releaseLease: true },
  });
const count = (runs: RunRecord[], tenantId: string) =>
  runs.filter((r) => r.tenantId === tenantId).length;

async function createMany(
  store: Store,
  tenantId: string,
  n: number,
  priority: 'interactive' | 'batch' = 'batch',
): Promise<void> {
  for (let i = 0; i < n; i += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, n - i) }, () =>
        store.createRun(newRun(tenantId, { priority })),
      ),
    );
  }
}

export function tenantStoreConformance(factory: StoreFactory): void {
  describe(`tenant quotas and fair claims: ${factory.name}`, () => {
    test('tenants: quotas default to weight 1 and no limits; update changes only what it names; list and get', () =>
      withStore(factory, async (store) => {
        const plain = await store.createTenant('plain', 'k1');
        assert.deepEqual(
          [plain.weight, plain.maxConcurrentRuns, plain.maxQueuedRuns],
          [1, null, null],
        );
        const capped = await store.createTenant('capped', 'k2', {
          weight: 3,
          maxConcurrentRuns: 4,
          maxQueuedRuns: 10,
        });
        assert.deepEqual(
          [capped.weight, capped.maxConcurrentRuns, capped.maxQueuedRuns],
          [3, 4, 10],
        );
        assert.deepEqual(await store.findTenantByKeyHash('k2'), capped);
        const updated = await store.updateTenant(capped.id, { maxConcurrentRuns: null, weight: 5 });
        assert.deepEqual(
          [updated.weight, updated.maxConcurrentRuns, updated.maxQueuedRuns],
          [5, null, 10],
        );
        assert.deepEqual(await store.getTenant(capped.id), updated);
        assert.equal(await store.getTenant('ten_missing'), null);
        assert.deepEqual(
          (await store.listTenants())
            .filter((t) => ['plain', 'capped'].includes(t.name))
            .map((t) => t.name),
          ['capped', 'plain'],
        );
        await rejectsWith(store.updateTenant('ten_missing', { weight: 2 }), 'tenant_not_found');
      }));

    test('tenants: rate limits, daily budgets and pool caps are stored, patched field by field, and lifted with null', () =>
      withStore(factory, async (store) => {
        const plain = await store.createTenant('plain-limits', 'k1');
        assert.deepEqual(
          [plain.rpm, plain.tpm, plain.dailyTokenBudget, plain.dailyCostBudgetUsd, plain.poolCaps],
          [null, null, null, null, {}],
        );
        const limited = await store.createTenant('limited', 'k2', {
          rpm: 60,
          tpm: 90_000,
          dailyTokenBudget: 5_000_000_000,
          dailyCostBudgetUsd: 12.5,
          poolCaps: { 'sandbox:default': 2, browser: 1 },
        });
        assert.deepEqual(
          [
            limited.rpm,
            limited.tpm,
            limited.dailyTokenBudget,
            limited.dailyCostBudgetUsd,
            limited.poolCaps,
          ],
          [60, 90_000, 5_000_000_000, 12.5, { 'sandbox:default': 2, browser: 1 }],
        );
        assert.deepEqual(await store.findTenantByKeyHash('k2'), limited);
        const patched = await store.updateTenant(limited.id, {
          tpm: null,
          dailyCostBudgetUsd: 0.25,
          poolCaps: { inline: 4 },
        });
        assert.deepEqual(
          [
            patched.rpm,
            patched.tpm,
            patched.dailyTokenBudget,
            patched.dailyCostBudgetUsd,
            patched.poolCaps,
            patched.weight,
          ],
          [60, null, 5_000_000_000, 0.25, { inline: 4 }, 1],
        );
        assert.deepEqual(await store.getTenant(limited.id), patched);
        assert.deepEqual(
          (await store.listTenants()).find((t) => t.id === limited.id),
          patched,
        );
      }));

    test('tenants: the redaction policy is stored, read back by key, patched alone, and cleared', () =>
      withStore(factory, async (store) => {
        const plain = await store.createTenant('plain-redact', 'kr1');
        assert.deepEqual(plain.redact, { fields: [], tools: {} });
        const policy = { fields: ['password', 'apiKey'], tools: { send_email: ['input.body'] } };
        const strict = await store.createTenant('strict-redact', 'kr2', { redact: policy });
        assert.deepEqual(strict.redact, policy);
        assert.deepEqual((await store.findTenantByKeyHash('kr2'))?.redact, policy);
        const weighted = await store.updateTenant(strict.id, { weight: 2 });
        assert.deepEqual(weighted.redact, policy, 'a patch that does not name redact keeps it');
        const cleared = await store.updateTenant(strict.id, { redact: { fields: [], tools: {} } });
        assert.deepEqual(cleared.redact, { fields: [], tools: {} });
        assert.deepEqual(await store.getTenant(strict.id), cleared);
        assert.deepEqual(
          (await store.listTenants()).find((t) => t.id === strict.id),
          cleared,
        );
      }));

    test('egress lists: a tenant list stored, patched alone, emptied and lifted; a run list stored with the run', () =>
      withStore(factory, async (store) => {
        const open = await store.createTenant('egress-open', 'ke1');
        assert.equal(open.egressAllow, null, 'no list by default');
        const list = [
          { host: 'api.example.com', port: 443 },
          { host: '127.0.0.1', port: 8080 },
        ];
        const narrowed = await store.createTenant('egress-narrow', 'ke2', { egressAllow: list });
        assert.deepEqual(narrowed.egressAllow, list);
        assert.deepEqual((await store.findTenantByKeyHash('ke2'))?.egressAllow, list);
        const weighted = await store.updateTenant(narrowed.id, { weight: 3 });
        assert.deepEqual(weighted.egressAllow, list, 'a patch that does not name it keeps it');
        const none = await store.updateTenant(narrowed.id, { egressAllow: [] });
        assert.deepEqual(none.egressAllow, [], 'an empty list is kept: no destination at all');
        assert.deepEqual(await store.getTenant(narrowed.id), none);
        const lifted = await store.updateTenant(narrowed.id, { egressAllow: null });
        assert.equal(lifted.egressAllow, null);
        assert.deepEqual(
          (await store.listTenants()).find((t) => t.id === narrowed.id),
          lifted,
        );
        const runList = [{ host: '*.pkg.example.org', port: 443 }];
        const withList = await store.createRun({ ...newRun(open.id), egressAllow: runList });
        assert.deepEqual(withList.run.egressAllow, runList);
        assert.deepEqual((await store.getRun(withList.run.id))?.egressAllow, runList);
        const emptyList = await store.createRun({ ...newRun(open.id), egressAllow: [] });
        assert.deepEqual((await store.getRun(emptyList.run.id))?.egressAllow, []);
        const plain = await store.createRun(newRun(open.id));
        assert.equal((await store.getRun(plain.run.id))?.egressAllow, null);
      }));

    test('waiting since: kept while the waiting reason stays, moved when it changes, cleared with it', () =>
      withStore(factory, async (store) => {
        const tenant = await store.createTenant('waits', 'kw');
        await store.createRun(newRun(tenant.id));
        const [run] = await claim(store, 1);
        assert.ok(run);
        let version = run.stateVersion;
        const setReason = async (waitingReason: string | null) => {
          await store.commit({
            runId: run.id,
            leaseToken: run.leaseToken,
            expectedStateVersion: version++,
            run: { waitingReason },
          });
          await new Promise((resolve) => setTimeout(resolve, 5));
          return (await store.getRun(run.id))!;
        };
        const first = await setReason('rate_limited');
        assert.equal(first.waitingReason, 'rate_limited');
        assert.ok(first.waitingSince !== null);
        assert.equal(
          (await setReason('rate_limited')).waitingSince,
          first.waitingSince,
          'the same reason again keeps its start',
        );
        const moved = await setReason('provider_unavailable');
        assert.ok(moved.waitingSince! > first.waitingSince!, 'a new reason starts a new wait');
        const cleared = await setReason(null);
        assert.deepEqual([cleared.waitingReason, cleared.waitingSince], [null, null]);
      }));

    test('daily budgets: model spend since a time sums committed model effects of the tenant only', () =>
      withStore(factory, async (store) => {
        const tenant = await store.createTenant('spender', 'ks');
        const other = await store.createTenant('other-spender', 'ko');
        await store.createRun(newRun(tenant.id));
        await store.createRun(newRun(other.id));
        const runs = await claim(store, 2);
        const now = Date.now();
        const model = (
          seq: number,
          endedAt: number,
          inputTokens: number,
          outputTokens: number,
          costUsd: number,
        ) => ({
          seq,
          kind: 'model' as const,
          name: 'mock',
          status: 'succeeded' as const,
          endedAt,
          result: { text: 'x', usage: { inputTokens, outputTokens, costUsd } },
        });
        for (const run of runs) {
          await store.commit({
            runId: run.id,
            leaseToken: run.leaseToken,
            expectedStateVersion: run.stateVersion,
            journal: [
              model(1, now - 86_400_000, 1_000, 1_000, 1),
              model(2, now - 10, 10, 5, 0.25),
              model(3, now, 20, 7, 0.5),
              {
                seq: 4,
                kind: 'step',
                name: 's',
                status: 'succeeded',
                endedAt: now,
                result: { usage: { inputTokens: 99, outputTokens: 99, costUsd: 9 } },
              },
            ],
          });
        }
        assert.deepEqual(await store.tenantUsageSince(tenant.id, now - 3_600_000), {
          tokens: 42,
          costUsd: 0.75,
        });
        assert.deepEqual(await store.tenantUsageSince(tenant.id, now), {
          tokens: 27,
          costUsd: 0.5,
        });
        assert.deepEqual(await store.tenantUsageSince(tenant.id, now + 1), {
          tokens: 0,
          costUsd: 0,
        });
        // Platform-wide (the daily caps): both tenants' model effects, no step's.
        assert.deepEqual(await store.platformUsageSince(now - 3_600_000), {
          tokens: 84,
          costUsd: 1.5,
        });
        assert.deepEqual(await store.platformUsageSince(now + 1), { tokens: 0, costUsd: 0 });
        const fresh = await store.createTenant('no-spend', 'kn');
        assert.deepEqual(await store.tenantUsageSince(fresh.id, 0), { tokens: 0, costUsd: 0 });
      }));

    test('daily budgets: a patch naming a budget makes runs parked on tenant_budget_exhausted due now; other patches do not', () =>
      withStore(factory, async (store) => {
        const tenant = await store.createTenant('budgeted', 'kb', { dailyTokenBudget: 10 });
        await store.createRun(newRun(tenant.id));
        const [run] = await claim(store, 1);
        assert.ok(run);
        await store.commit({
          runId: run.id,
          leaseToken: run.leaseToken,
          expectedStateVersion: run.stateVersion,
          journal: [
            {
              seq: 1,
              kind: 'model',
              name: 'mock',
              status: 'waiting',
              args: { waitingReason: 'tenant_budget_exhausted' },
            },
          ],
          run: {
            status: 'waiting',
            waitingReason: 'tenant_budget_exhausted',
            wakeAt: Date.now() + 3_600_000,
            releaseLease: true,
          },
        });
        assert.deepEqual(await claim(store, 5), []);
        await store.updateTenant(tenant.id, { weight: 2 });
        assert.deepEqual(await claim(store, 5), [], 'a patch without a budget wakes nothing');
        await store.updateTenant(tenant.id, { dailyTokenBudget: 1_000 });
        const woken = await claim(store, 5);
        assert.deepEqual(
          woken.map((r) => r.id),
          [run.id],
        );
      }));

    test('spend admission: a run created parked on the budget waits (not claimable) until a budget patch makes it due', () =>
      withStore(factory, async (store) => {
        const tenant = await store.createTenant('parked-at-admission', 'kp', {
          dailyTokenBudget: 10,
        });
        const until = Date.now() + 3_600_000;
        const { run } = await store.createRun({
          ...newRun(tenant.id),
          parkOnBudget: { until, detail: 'the run is expected to use 99 model tokens' },
        });
        assert.deepEqual(
          [run.status, run.waitingReason, run.wakeAt],
          ['waiting', 'tenant_budget_exhausted', until],
        );
        const events = await store.listEvents(run.id, 0, 10);
        assert.deepEqual(
          events.map((e) => [e.seq, e.type]),
          [
            [1, 'run.created'],
            [2, 'run.waiting'],
          ],
        );
        assert.deepEqual(await claim(store, 5), [], 'parked: not claimable before its wake');
        await store.updateTenant(tenant.id, { dailyTokenBudget: 1_000 });
        assert.deepEqual(
          (await claim(store, 5)).map((r) => r.id),
          [run.id],
        );
      }));

    test('admission: over max queued runs createRun is tenant_queue_full with a retry delay, even under racing creates', () =>
      withStore(factory, async (store) => {
        const tenant = await store.createTenant('small-queue', 'k', { maxQueuedRuns: 5 });
        const racers = await Promise.allSettled(
          Array.from({ length: 20 }, () => store.createRun(newRun(tenant.id))),
        );
        assert.equal(racers.filter((r) => r.status === 'fulfilled').length, 5);
        const refused = racers.find((r) => r.status === 'rejected');
        assert.equal((refused?.reason as { code?: string } | undefined)?.code, 'tenant_queue_full');
        assert.ok(
          ((refused?.reason as { retryAfterMs?: number } | undefined)?.retryAfterMs ?? 0) > 0,
        );
        // A claimed run no longer counts as queued: room for one more.
        const [running] = await claim(store, 1);
        assert.ok(running);
        assert.equal((await store.createRun(newRun(tenant.id))).created, true);
        await rejectsWith(store.createRun(newRun(tenant.id)), 'tenant_queue_full');
        // Lifting the limit admits again.
        await store.updateTenant(tenant.id, { maxQueuedRuns: null });
        assert.equal((await store.createRun(newRun(tenant.id))).created, true);
      }));

    test('admission: queuedRoom is what is left of max queued runs (null without a limit)', () =>
      withStore(factory, async (store) => {
        const tenant = await store.createTenant('roomy', 'kr', { maxQueuedRuns: 3 });
        assert.equal(await store.queuedRoom(tenant.id), 3);
        await store.createRun(newRun(tenant.id));
        await store.createRun(newRun(tenant.id));
        assert.equal(await store.queuedRoom(tenant.id), 1);
        await store.createRun(newRun(tenant.id));
        assert.equal(await store.queuedRoom(tenant.id), 0);
        await store.updateTenant(tenant.id, { maxQueuedRuns: 2 });
        assert.equal(await store.queuedRoom(tenant.id), 0, 'never negative');
        await store.updateTenant(tenant.id, { maxQueuedRuns: null });
        assert.equal(await store.queuedRoom(tenant.id), null);
        assert.equal(await store.queuedRoom('ten_missing'), null);
      }));

    test('fair claims: tenants share claims by weight, not by queue length', () =>
      withStore(factory, async (store) => {
        const flood = await store.createTenant('flood', 'k1');
        const trickle = await store.createTenant('trickle', 'k2');
        await createMany(store, flood.id, 300);
        await createMany(store, trickle.id, 5);
        const first = await claim(store, 10);
        assert.deepEqual(
          [count(first, flood.id), count(first, trickle.id)],
          [5, 5],
          'equal weights: half each while both are backlogged',
        );
        const heavy = await store.createTenant('heavy', 'k3', { weight: 3 });
        await createMany(store, heavy.id, 300);
        const second = await claim(store, 40);
        assert.deepEqual(
          [count(second, heavy.id), count(second, flood.id)],
          [30, 10],
          'weight 3 against weight 1',
        );
      }));

    test('fair claims: a tenant at max concurrent runs is not claimed from until one of its runs ends', () =>
      withStore(factory, async (store) => {
        const capped = await store.createTenant('capped', 'k1', { maxConcurrentRuns: 2 });
        const other = await store.createTenant('other', 'k2');
        await createMany(store, capped.id, 10);
        await createMany(store, other.id, 10);
        const first = await claim(store, 20);
        assert.deepEqual([count(first, capped.id), count(first, other.id)], [2, 10]);
        assert.equal(await store.heldRuns(capped.id), 2);
        assert.deepEqual(await claim(store, 5), []);
        await finish(store, first.find((r) => r.tenantId === capped.id)!);
        const next = await claim(store, 5);
        assert.deepEqual(
          next.map((r) => r.tenantId),
          [capped.id],
        );
      }));

    test('fair claims: with random arrivals, backlogged tenants stay within 10% of their weight share over any 1,000 claims', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 2, maxLength: 3 }),
          fc.array(fc.record({ tenant: fc.nat(), count: fc.integer({ min: 0, max: 8 }) }), {
            minLength: 5,
            maxLength: 30,
          }),
          fc.array(fc.integer({ min: 1, max: 24 }), { minLength: 30, maxLength: 30 }),
          async (weights, arrivals, batches) =>
            withStore(factory, async (store) => {
              const tenants = await Promise.all(
                weights.map((weight, i) => store.createTenant(`t${i}`, `k${i}`, { weight })),
              );
              const queued = new Map(tenants.map((t) => [t.id, 0]));
              // The first tenant floods; the others trickle in at random; everyone gets a backlog
              // that outlasts the windows.
              const enqueue = async (tenantId: string, n: number) => {
                await createMany(store, tenantId, n);
                queued.set(tenantId, queued.get(tenantId)! + n);
              };
              for (const t of tenants) await enqueue(t.id, t === tenants[0] ? 1_200 : 500);
              const log: DispatchLog = { dispatches: [], backlogged: [] };
              for (let step = 0; log.dispatches.length < 1_300; step++) {
                const arrival = arrivals[step % arrivals.length]!;
                await enqueue(tenants[arrival.tenant % tenants.length]!.id, arrival.count);
                const claimed = await claim(store, batches[step % batches.length]!);
                for (const run of claimed) queued.set(run.tenantId, queued.get(run.tenantId)! - 1);
                const still = new Set(
                  tenants.filter((t) => queued.get(t.id)! > 0).map((t) => t.id),
                );
                for (const run of claimed) {
                  log.dispatches.push(run.tenantId);
                  log.backlogged.push(still);
                }
                if (claimed.length === 0) break;
              }
              const error = worstShareError(
                log,
                new Map(tenants.map((t) => [t.id, t.weight])),
                1_000,
              );
              assert.ok(
                error <= 0.1,
                `worst share error ${(error * 100).toFixed(1)}% with weights ${weights.join(',')}`,
              );
            }),
        ),
        { numRuns: 3 },
      );
    });
  });
}
