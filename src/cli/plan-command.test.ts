// `keel plan` on the example files and on bad ones: the report and --json on stdout with exit 0; an
// unreadable, non-JSON or invalid scenario names the file, the field and the reason on stderr with
// exit 1; misuse exits 2.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runPlanCommand, SCENARIO_MAX_BYTES } from './plan-command.ts';

const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));
const FULL = join(EXAMPLES, 'plan-agents.json');
const MINIMAL = join(EXAMPLES, 'plan-minimal.json');

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.text += String(chunk);
    done();
  }
}

async function run(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await runPlanCommand(argv, { stdout, stderr });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

describe('keel plan', () => {
  let dir = '';
  const file = async (name: string, content: string): Promise<string> => {
    const path = join(dir, name);
    await writeFile(path, content);
    return path;
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'keel-plan-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('prints the report for the full example', async () => {
    const r = await run(FULL);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, /^Keel capacity plan: .*plan-agents\.json$/m);
    assert.match(r.stdout, /^Bottleneck: memoryGiB/m);
    assert.equal(r.stdout.match(/^== /gm)?.length, 9);
  });

  it('prints the report for the minimal example', async () => {
    const r = await run(MINIMAL);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.match(/^== /gm)?.length, 1);
  });

  it('--json prints the same numbers as parseable JSON', async () => {
    const r = await run(FULL, '--json');
    assert.equal(r.code, 0, r.stderr);
    const parsed = JSON.parse(r.stdout);
    assert.equal(parsed.sections.capacity.bottleneck, 'memoryGiB');
    assert.equal(parsed.sections.capacity.demand.memoryGiB.value, 440); // 2/s × 110 s × 2 GiB
    assert.match(parsed.sections.capacity.demand.memoryGiB.formula, /= 220 × 2$/);
    assert.equal((await run('--json', MINIMAL)).code, 0);
  });

  it('a bad scenario: each field and reason on stderr, exit 1', async () => {
    const bad = await file(
      'bad.json',
      JSON.stringify({
        workload: {
          arrivalPerSec: -2,
          roundsPerTask: 1,
          modelSecondsPerRound: 1,
          toolSecondsPerRound: 1,
          env: {
            memoryGiB: 1,
            policy: 'resident',
            prepSeconds: 1,
            prepCpuSeconds: 0,
            pauseSecondsPerGiB: 0,
            resumeSecondsPerGiB: 0,
          },
        },
        prewarm: { prepSeconds: 1, leadSeconds: [1], hitRate: 1.5, memoryGiB: 1 },
        recoveryTree: {
          deadlineSeconds: 1,
          root: {
            name: 'a',
            cost: 0,
            seconds: 1,
            successProbability: 0.5,
            onFailure: [{ share: 0.5 }],
          },
        },
        burts: {},
      }),
    );
    const r = await run(bad);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /bad\.json is not a valid scenario:/);
    assert.match(r.stderr, /^ {2}workload\.arrivalPerSec: must be ≥ 0/m);
    assert.match(r.stderr, /^ {2}prewarm\.hitRate: is a probability: must be in \[0, 1\]$/m);
    assert.match(
      r.stderr,
      /^ {2}recoveryTree\.root\.onFailure: shares sum to 0\.5; they must sum to 1/m,
    );
    assert.match(r.stderr, /^ {2}burts: unknown field; known fields here: .*burst/m);
  });

  it('a file that is missing, not JSON or too large: exit 1 naming the file', async () => {
    const missing = await run(join(dir, 'nope.json'));
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot read .*nope\.json/);
    const garbled = await run(await file('garbled.json', '{ "workload": '));
    assert.equal(garbled.code, 1);
    assert.match(garbled.stderr, /garbled\.json is not valid JSON/);
    const huge = await run(await file('huge.json', ' '.repeat(SCENARIO_MAX_BYTES + 1)));
    assert.equal(huge.code, 1);
    assert.match(huge.stderr, /a scenario may be at most/);
  });

  it('usage errors exit 2; --help exits 0', async () => {
    for (const argv of [
      [],
      [FULL, MINIMAL],
      [FULL, '--yaml'],
      ['--live'],
      ['--live', '--url', 'http://localhost:7070'],
      [FULL, '--url', 'http://localhost:7070'],
      ['--live', FULL, '--key', 'k', '--window-seconds', '0'],
      ['--live', FULL, '--key', 'k', '--url', 'ftp://x'],
    ]) {
      const r = await run(...argv);
      assert.equal(r.code, 2, argv.join(' '));
      assert.match(r.stderr, /usage: keel plan <scenario\.json> \[--json\]/);
    }
    assert.match(
      (await run('--live')).stderr,
      /--live needs <scenario\.json>: environment memory cannot be measured yet/,
    );
    assert.match((await run(FULL, '--url', 'http://localhost:7070')).stderr, /only go with --live/);
    const help = await run('--help');
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^usage: keel plan/);
  });
});
