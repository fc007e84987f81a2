// Fair claim order across tenants: the weighted share of continuously backlogged tenants over any
// window of 1,000 dispatches (property, random arrivals and claim batch sizes), caps, the
// no-banked-credit rule, and tie-breaks.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { worstShareError, type DispatchLog } from '../../test/support/share-windows.ts';
import {
  allocateClaims,
  FairClaim,
  INTERACTIVE_LEAD_CLAIMS,
  pickOne,
  type BackloggedTenant,
} from './fair-share.ts';

const WINDOW = 1_000;
const TOLERANCE = 0.1;

const tenant = (
  tenantId: string,
  weight: number,
  overrides: Partial<BackloggedTenant> = {},
): BackloggedTenant => ({
  tenantId,
  weight,
  vtime: 0,
  room: Infinity,
  headKey: 0,
  interactiveHead: false,
  ...overrides,
});

/**
 * Dispatches with FairClaim the way a store does: claims of random batch sizes, each tenant handing
 * over at most what it has queued; tenant virtual times and the clock carried from claim to claim
 * as the store persists them.
 */
function simulate(
  weights: number[],
  initial: number[],
  arrivals: Array<{ tenant: number; count: number }>,
  batches: number[],
  heads: boolean[],
): DispatchLog {
  const ids = weights.map((_, i) => `t${i}`);
  const queued = [...initial];
  const vtimes = new Map<string, number>();
  let clock = 0;
  const sim: DispatchLog = { dispatches: [], backlogged: [] };
  for (let step = 0; step < batches.length; step++) {
    const arrival = arrivals[step % arrivals.length]!;
    queued[arrival.tenant % ids.length]! += arrival.count;
    // Whether each tenant's next run is interactive varies at random: the interactive lead must
    // stay within the bound.
    const backlog = ids
      .filter((_, i) => queued[i]! > 0)
      .map((id, i) =>
        tenant(id, weights[ids.indexOf(id)]!, {
          vtime: vtimes.get(id) ?? 0,
          interactiveHead: heads[(step * 7 + i) % heads.length]!,
        }),
      );
    const claim = new FairClaim<string>(backlog, clock, batches[step]!);
    for (let plan = claim.next(); plan !== null; plan = claim.next()) {
      const claimed = new Map<string, string[]>();
      for (const [id, n] of plan) {
        const i = ids.indexOf(id);
        const take = Math.min(n, queued[i]!);
        queued[i]! -= take;
        claimed.set(
          id,
          Array.from({ length: take }, () => id),
        );
      }
      claim.record(claimed);
    }
    const result = claim.result();
    for (const [id, v] of result.vtimes) vtimes.set(id, v);
    clock = result.clock;
    const planned = new Set(
      backlog.map((t) => t.tenantId).filter((id) => queued[ids.indexOf(id)]! > 0),
    );
    for (const id of result.items) {
      sim.dispatches.push(id);
      sim.backlogged.push(planned);
    }
  }
  return sim;
}

describe('fair share across tenants', () => {
  it('keeps each backlogged tenant within 10% of its weight share over any 1,000 dispatches (random arrivals)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 2, maxLength: 4 }).chain((weights) =>
          fc.record({
            weights: fc.constant(weights),
            // Some tenants start with a deep queue, others with a few runs or none: queue length must
            // not buy service.
            initial: fc.array(
              fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 1_500, max: 5_000 })),
              { minLength: weights.length, maxLength: weights.length },
            ),
            arrivals: fc.array(
              fc.record({ tenant: fc.nat(), count: fc.integer({ min: 0, max: 6 }) }),
              { minLength: 1, maxLength: 200 },
            ),
            batches: fc.array(fc.integer({ min: 1, max: 16 }), { minLength: 400, maxLength: 600 }),
            heads: fc.array(fc.boolean(), { minLength: 1, maxLength: 64 }),
          }),
        ),
        ({ weights, initial, arrivals, batches, heads }) => {
          const sim = simulate(weights, initial, arrivals, batches, heads);
          const error = worstShareError(sim, new Map(weights.map((w, i) => [`t${i}`, w])), WINDOW);
          assert.ok(
            error <= TOLERANCE,
            `worst share error ${(error * 100).toFixed(1)}% with weights ${weights.join(',')}`,
          );
        },
      ),
      { numRuns: 60 },
    );
  });

  it('serves by weight, not by queue length', () => {
    const picks = allocateClaims([tenant('big', 1), tenant('small', 1)], 0, 10).map(
      (p) => p.tenantId,
    );
    assert.deepEqual(picks.filter((p) => p === 'small').length, 5);
    const weighted = allocateClaims([tenant('a', 1), tenant('b', 3)], 0, 8).map((p) => p.tenantId);
    assert.deepEqual(
      [weighted.filter((p) => p === 'a').length, weighted.filter((p) => p === 'b').length],
      [2, 6],
    );
  });

  it("never exceeds a tenant's room and skips a tenant at its cap", () => {
    const picks = allocateClaims(
      [tenant('capped', 5, { room: 2 }), tenant('full', 5, { room: 0 }), tenant('free', 1)],
      0,
      10,
    );
    assert.equal(picks.filter((p) => p.tenantId === 'capped').length, 2);
    assert.equal(picks.filter((p) => p.tenantId === 'full').length, 0);
    assert.equal(picks.filter((p) => p.tenantId === 'free').length, 8);
  });

  it('gives a tenant back from idling no banked credit: it restarts at the clock', () => {
    // `busy` was served 1,000 times alone (vtime 1000, clock 999); `back` was last served long ago
    // (vtime 3).
    const picks = allocateClaims(
      [tenant('busy', 1, { vtime: 1_000 }), tenant('back', 1, { vtime: 3 })],
      999,
      10,
    ).map((p) => p.tenantId);
    assert.ok(picks.filter((p) => p === 'back').length <= 6, picks.join(','));
  });

  it('lets interactive work of a tenant pass batch work of another, at most its share of INTERACTIVE_LEAD_CLAIMS ahead', () => {
    const claims = (n: number) => {
      const vtimes = new Map<string, number>();
      let clock = 0;
      const served: string[] = [];
      for (let i = 0; i < n; i++) {
        const claim = new FairClaim<string>(
          [
            tenant('batch', 1, { vtime: vtimes.get('batch') ?? 0 }),
            tenant('chat', 1, { vtime: vtimes.get('chat') ?? 0, interactiveHead: true }),
          ],
          clock,
          1,
        );
        const plan = claim.next()!;
        claim.record(new Map([...plan].map(([id]) => [id, [id]])));
        const result = claim.result();
        for (const [id, v] of result.vtimes) vtimes.set(id, v);
        clock = result.clock;
        served.push(...result.items);
      }
      return served;
    };
    const served = claims(200);
    const lead = INTERACTIVE_LEAD_CLAIMS / 2; // two tenants of weight 1: half of the lead each
    assert.deepEqual(served.slice(0, lead), Array(lead).fill('chat'), 'interactive first');
    const chat = served.filter((s) => s === 'chat').length;
    assert.ok(chat - (200 - chat) <= lead + 1, `then back to the weighted share: ${chat} of 200`);
  });

  it('keeps the clock with a tenant served alone: a flood arriving later neither jumps ahead nor is starved', () => {
    let clock = 0;
    const vtimes = new Map<string, number>();
    const claimOne = (tenants: BackloggedTenant[]) => {
      const claim = new FairClaim<string>(
        tenants.map((t) => ({ ...t, vtime: vtimes.get(t.tenantId) ?? 0 })),
        clock,
        1,
      );
      claim.record(new Map([...claim.next()!].map(([id]) => [id, [id]])));
      const result = claim.result();
      for (const [id, v] of result.vtimes) vtimes.set(id, v);
      clock = result.clock;
      return result.items[0]!;
    };
    for (let i = 0; i < 60; i++) claimOne([tenant('chat', 1, { interactiveHead: true })]);
    const both = [tenant('chat', 1, { interactiveHead: true }), tenant('flood', 1)];
    const next = Array.from({ length: 100 }, () => claimOne(both));
    assert.deepEqual(
      next.slice(0, 20),
      Array(20).fill('chat'),
      'the interactive tenant keeps its lead over a newly arrived flood',
    );
    const flood = next.filter((id) => id === 'flood').length;
    assert.ok(
      flood >= 50 - INTERACTIVE_LEAD_CLAIMS / 2 - 1,
      `the flood gets its share after the lead: ${flood} of 100`,
    );
  });

  it('breaks ties of finish time by the older (aged) head, then by tenant id', () => {
    const picks = allocateClaims(
      [tenant('b', 1, { headKey: 5 }), tenant('a', 1, { headKey: 9 })],
      0,
      2,
    ).map((p) => p.tenantId);
    assert.deepEqual(picks, ['b', 'a']);
  });

  it('re-plans the slots a tenant with fewer runs than planned leaves to the others', () => {
    const claim = new FairClaim<string>([tenant('few', 1), tenant('many', 1)], 0, 10);
    const first = claim.next()!;
    assert.deepEqual([first.get('few'), first.get('many')], [5, 5]);
    claim.record(
      new Map([
        ['few', ['f1']],
        ['many', ['m1', 'm2', 'm3', 'm4', 'm5']],
      ]),
    );
    const second = claim.next()!;
    assert.deepEqual([...second], [['many', 4]]);
    claim.record(new Map([['many', ['m6', 'm7', 'm8', 'm9']]]));
    assert.equal(claim.next(), null);
    const { items, vtimes } = claim.result();
    assert.equal(items.length, 10);
    assert.deepEqual([vtimes.get('few'), vtimes.get('many')], [1, 9]);
  });

  it('pickOne makes exactly the pick, virtual time and clock a one-slot FairClaim makes (fast-check)', () => {
    const arbitraryTenant = fc.record({
      weight: fc.integer({ min: 1, max: 5 }),
      vtime: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 50, noNaN: true })),
      room: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3 }), fc.constant(Infinity)),
      headKey: fc.integer({ min: 0, max: 10 }),
      interactiveHead: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.array(arbitraryTenant, { minLength: 1, maxLength: 12 }),
        fc.double({ min: 0, max: 40, noNaN: true }),
        (specs, clock) => {
          const tenants: BackloggedTenant[] = specs.map((spec, i) => ({
            tenantId: `t${i}`,
            ...spec,
          }));
          // A pool passes only tenants with room (FairClaim's clock would count the others too).
          const open = tenants.filter((t) => t.room > 0);
          const claim = new FairClaim<string>(open, clock, 1);
          const plan = claim.next();
          if (plan !== null)
            claim.record(
              new Map([...plan].map(([id, n]) => [id, Array.from({ length: n }, () => id)])),
            );
          const expected = claim.result();
          const picked = pickOne(tenants, clock);
          if (expected.items.length === 0) {
            assert.equal(picked, null);
            return;
          }
          assert.equal(picked?.tenantId, expected.items[0]);
          assert.equal(picked?.vtime, expected.vtimes.get(expected.items[0]!));
          assert.equal(picked?.clock, expected.clock);
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
