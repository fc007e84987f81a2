// Placement order: unit cases and properties (fast-check) of power-of-k, least-loaded and random.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { loadOf, type NodeLoad, PlacementView, placementOrder, STRATEGIES } from './placement.ts';
import { seededRandom } from './seeded-random.ts';

const node = (id: string, active: number, slots = 10): NodeLoad => ({ id, slots, active });
const none = new Map<string, number>();

describe('placementOrder', () => {
  test('with k = the node count, power-of-k picks the least loaded first', () => {
    const view = [node('a', 9), node('b', 2), node('c', 5)];
    const order = placementOrder(view, none, { k: 3, candidates: 3, random: seededRandom(1) });
    assert.equal(order[0], 'b');
    assert.deepEqual([...order].sort(), ['a', 'b', 'c']);
  });

  test("the placer's own recent placements count as load", () => {
    const view = [node('a', 0), node('b', 1)];
    const recent = new Map([['a', 5]]);
    assert.deepEqual(
      placementOrder(view, recent, { strategy: 'least-loaded', random: Math.random }),
      ['b', 'a'],
    );
  });

  test('a node without slots is full', () => {
    assert.equal(loadOf(node('a', 0, 0), none), Number.POSITIVE_INFINITY);
  });

  test('no nodes, no candidates', () => {
    assert.deepEqual(placementOrder([], none, { random: Math.random }), []);
  });

  test('PlacementView counts placements until the next refresh', () => {
    const view = new PlacementView();
    view.refresh([node('a', 0, 1), node('b', 0, 1)]);
    view.placed('a');
    assert.equal(view.recentOf('a'), 1);
    assert.deepEqual(view.order({ k: 2, candidates: 2, random: seededRandom(3) }), ['b', 'a']);
    assert.deepEqual(view.order({ random: seededRandom(3) }, new Set(['b'])), ['a']);
    view.refresh([node('a', 1, 1), node('b', 0, 1)]);
    assert.equal(view.recentOf('a'), 0);
  });
});

const views = fc
  .uniqueArray(
    fc.record({
      id: fc.string({ minLength: 1, maxLength: 6 }),
      slots: fc.integer({ min: 0, max: 64 }),
      active: fc.integer({ min: 0, max: 80 }),
    }),
    { selector: (n) => n.id, minLength: 0, maxLength: 40 },
  )
  .map((nodes) => nodes as NodeLoad[]);

describe('placementOrder properties', () => {
  test('every strategy names distinct nodes of the view, as many as asked or there are', () => {
    fc.assert(
      fc.property(
        views,
        fc.constantFrom(...STRATEGIES),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer(),
        (view, strategy, k, candidates, seed) => {
          const order = placementOrder(view, none, {
            strategy,
            k,
            candidates,
            random: seededRandom(seed),
          });
          assert.equal(order.length, Math.min(candidates, view.length));
          assert.equal(new Set(order).size, order.length);
          const ids = new Set(view.map((n) => n.id));
          assert.ok(order.every((id) => ids.has(id)));
        },
      ),
    );
  });

  test('power-of-k never puts first one of the k-1 most loaded nodes (it beats k-1 others)', () => {
    fc.assert(
      fc.property(views, fc.integer({ min: 1, max: 6 }), fc.integer(), (view, k, seed) => {
        fc.pre(view.length >= k);
        const [first] = placementOrder(view, none, {
          k,
          candidates: 1,
          random: seededRandom(seed),
        });
        const loads = view.map((n) => loadOf(n, none)).sort((a, b) => b - a);
        const firstLoad = loadOf(view.find((n) => n.id === first)!, none);
        // At most (view - k) nodes are strictly better than the chosen one.
        const better = loads.filter((l) => l < firstLoad).length;
        assert.ok(
          better <= view.length - k,
          `${better} nodes beat the choice among ${view.length}`,
        );
      }),
    );
  });

  test('least-loaded is sorted by load', () => {
    fc.assert(
      fc.property(views, (view) => {
        const order = placementOrder(view, none, {
          strategy: 'least-loaded',
          candidates: view.length,
          random: Math.random,
        });
        const byId = new Map(view.map((n) => [n.id, loadOf(n, none)]));
        for (let i = 1; i < order.length; i++)
          assert.ok(byId.get(order[i - 1]!)! <= byId.get(order[i]!)!);
      }),
    );
  });

  test('the same seed gives the same order', () => {
    fc.assert(
      fc.property(views, fc.integer(), (view, seed) => {
        const a = placementOrder(view, none, { random: seededRandom(seed) });
        const b = placementOrder(view, none, { random: seededRandom(seed) });
        assert.deepEqual(a, b);
      }),
    );
  });

  test('with k = 2 and one empty node among full ones, the empty one is first more often than at random', () => {
    const view = Array.from({ length: 10 }, (_, i) => node(`n${i}`, i === 0 ? 0 : 10));
    const random = seededRandom(42);
    let hits = 0;
    for (let i = 0; i < 2_000; i++)
      if (placementOrder(view, none, { k: 2, candidates: 1, random })[0] === 'n0') hits++;
    // P(n0 sampled among 2 of 10) = 0.2, against 0.1 for random: the count is far from 200.
    assert.ok(hits > 300, `n0 first ${hits} times of 2000`);
  });
});
