import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { isKeelError } from '../domain/keel-error.ts';
import { arrivals } from './arrivals.ts';
import { parseSimScenario } from './scenario.ts';

const EXAMPLES = fileURLToPath(new URL('../../examples/sim/', import.meta.url));

const minimal = {
  name: 'x',
  durationSeconds: 2,
  tenants: [{ name: 'a', arrival: { kind: 'steady', perSecond: 3 } }],
  agents: [{ name: 'r', rounds: 1 }],
  model: { latency: { kind: 'fixed', ms: 10 }, maxConcurrency: 2 },
};

describe('sim scenario', () => {
  it('parses every shipped example', () => {
    const files = readdirSync(EXAMPLES).filter((f) => f.endsWith('.json'));
    assert.ok(files.length >= 12);
    for (const f of files) parseSimScenario(JSON.parse(readFileSync(EXAMPLES + f, 'utf8')), f);
  });

  it('names each bad field and why', () => {
    assert.throws(
      () =>
        parseSimScenario({
          ...minimal,
          tenants: [{ name: 'a', arrival: { kind: 'steady', perSecond: -1 } }],
          agents: [{ name: 'r', rounds: 1, browserSteps: 1 }],
          extra: true,
        }),
      (error: unknown) => {
        assert.ok(isKeelError(error) && error.code === 'validation_failed');
        assert.match(error.message, /tenants\[0\]\.arrival\.perSecond/);
        assert.match(error.message, /unknown field\(s\) extra/);
        return true;
      },
    );
    assert.throws(
      () => parseSimScenario({ ...minimal, agents: [{ name: 'r', rounds: 1, browserSteps: 2 }] }),
      /browser: an agent takes browser steps/,
    );
  });

  it('plans the same arrivals for the same seed, steady spread over the duration', () => {
    const s = parseSimScenario({
      ...minimal,
      agents: [
        { name: 'r', rounds: 1, share: 1 },
        { name: 'w', rounds: 1, share: 3 },
      ],
    });
    const a = arrivals(s);
    assert.deepEqual(a, arrivals(s));
    assert.equal(a.length, 6);
    assert.deepEqual(
      a.map((x) => Math.round(x.atMs)),
      [0, 333, 667, 1000, 1333, 1667],
    );
  });
});
