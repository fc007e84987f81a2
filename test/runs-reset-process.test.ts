// Reset on a real `keel dev` process (agent code in isolates, SQLite file, real HTTP, the CLI over
// it): a run fails after three calls to a fake OpenAI-compatible provider and three side effects
// recorded in a ledger outside Keel; once the code is fixed (a file the agent reads), `keel runs
// reset` from its last position repeats no model call and no side effect. A reset run also replays
// its source's ctx.uuid() values.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runRunsCommand } from '../src/cli/client/runs-command.ts';
import { captureCli } from './support/cli-capture.ts';
import { startFakeOpenAi } from './support/fake-openai-server.ts';
import { startKeelProcess } from './support/keel-process.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/lineage-agents.ts', import.meta.url));
const API_KEY = 'lineage-dev-key-0123456789';
const TERMINAL = ['succeeded', 'failed', 'cancelled'];

test('keel dev: a failed run, fixed and reset from its last position, repeats no model call and no side effect', async (t) => {
  const fake = await startFakeOpenAi((body) => ({
    kind: 'reply',
    text: `answer to ${body.messages.at(-1).content}`,
  }));
  t.after(() => fake.close());
  const dir = mkdtempSync(join(tmpdir(), 'keel-reset-dev-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const ledgerFile = join(dir, 'ledger.txt');
  const fixFile = join(dir, 'fixed');
  const modelsFile = join(dir, 'keel.models.json');
  writeFileSync(
    modelsFile,
    JSON.stringify({
      models: [
        {
          name: 'gpt',
          provider: 'openai',
          providerModel: 'gpt-test',
          baseUrl: `${fake.url}/v1`,
          apiKeyEnv: 'TEST_PROVIDER_KEY',
        },
      ],
    }),
  );
  const keel = await startKeelProcess({
    agents: AGENTS,
    dataDir: join(dir, 'data'),
    apiKey: API_KEY,
    env: {
      KEEL_MODELS_FILE: modelsFile,
      TEST_PROVIDER_KEY: 'sk-test-0123456789',
      KEEL_TEST_LEDGER: ledgerFile,
      KEEL_TEST_FIX_FILE: fixFile,
    },
  });
  t.after(() => keel.kill('SIGKILL'));
  const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(keel.url + path, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const ended = async (id: string) => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const run = (await api('GET', `/v1/runs/${id}`)).body;
      if (TERMINAL.includes(run.status)) return run;
      if (Date.now() > deadline) throw new Error(`run ${id} did not end: ${JSON.stringify(run)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const ledger = () =>
    readFileSync(ledgerFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { part: string; executionId: string });
  const prompts = () => fake.requests.map((r) => r.body.messages.at(-1).content as string);
  const cli = (argv: string[]) =>
    captureCli(runRunsCommand, { KEEL_URL: keel.url, KEEL_API_KEY: API_KEY }, argv);

  const source = (await api('POST', '/v1/runs', { agent: 'writer', input: { topic: 't' } })).body;
  const failed = await ended(source.id);
  assert.equal(failed.status, 'failed');
  assert.equal(failed.error.code, 'agent_error');
  assert.deepEqual(prompts(), ['t: part 1', 't: part 2', 't: part 3']);
  const steps = (await api('GET', `/v1/runs/${source.id}/steps`)).body.steps;
  const last = steps.at(-1).seq as number;

  writeFileSync(fixFile, 'fixed'); // the fix
  const reset = await cli(['reset', source.id, '--position', String(last)]);
  assert.equal(reset.code, 0, reset.err);
  const resetId = reset.out.split('\t')[0]!;
  assert.match(reset.out, new RegExp(`reset from ${source.id} at position ${last}`));
  const done = await ended(resetId);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.deepEqual(done.resetFrom, { runId: source.id, position: last });
  assert.deepEqual(prompts(), ['t: part 1', 't: part 2', 't: part 3', 't: final']);
  assert.deepEqual(
    ledger().map((e) => [e.part, e.executionId]),
    [
      ['1', `${source.id}.2`],
      ['2', `${source.id}.4`],
      ['3', `${source.id}.6`],
      ['final', `${resetId}.8`],
    ],
  );
  const shown = await cli(['get', resetId]);
  assert.match(shown.out, new RegExp(`lineage: +reset from ${source.id} at position ${last}`));

  // ctx.uuid() in the isolate: the reset run draws what its source drew before the position; a
  // rerun draws its own.
  rmSync(fixFile);
  const dice = (await api('POST', '/v1/runs', { agent: 'dice' })).body;
  assert.equal((await ended(dice.id)).status, 'failed');
  writeFileSync(fixFile, 'fixed');
  const diceReset = (await api('POST', `/v1/runs/${dice.id}/reset`, { position: 1 })).body;
  const diceRerun = (await api('POST', `/v1/runs/${dice.id}/rerun`)).body;
  const replayed = (await ended(diceReset.id)).result;
  assert.equal(replayed.drawn, replayed.journaled, 'same seed: the value the source journaled');
  const fresh = (await ended(diceRerun.id)).result;
  assert.notEqual(fresh.drawn, replayed.drawn, 'a rerun draws its own values');
});
