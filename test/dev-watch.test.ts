// `keel dev --watch` on a temporary agents module, from the real process: a run, an edit of a file
// the module imports and of the module itself, a run again that shows the new behaviour without a
// restart (agent code runs in isolates, which load the new module); a run parked before the edit
// whose code changed shape stops with a non-determinism error that offers a reset; an edit that
// does not load leaves the previous code serving.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startKeelProcess } from './support/keel-process.ts';

const SDK = fileURLToPath(new URL('../src/index.ts', import.meta.url));
const KEY = 'watch-test-key-0123456789abcdef';
const DEADLINE_MS = 30_000;

const agentsModule = (askFirst: boolean) => `
import { defineAgent } from ${JSON.stringify(SDK)};
import { word } from './greeting.ts';
export const greeter = defineAgent({
  name: 'greeter',
  version: '1',
  async run(ctx, input: { name: string }) {
    return ctx.step('greet', () => \`\${word} \${input.name}\`);
  },
});
export const asker = defineAgent({
  name: 'asker',
  version: '1',
  async run(ctx) {
    ${askFirst ? "await ctx.step('first', () => 1);" : ''}
    const go = await ctx.waitForInput<string>('go');
    return ctx.step('answer', () => \`\${word} \${go}\`);
  },
});
`;

test('keel dev --watch reloads the agents module and what it imports; new runs use the new code', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-watch-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
  writeFileSync(join(dir, 'greeting.ts'), "export const word: string = 'hello';\n");
  writeFileSync(join(dir, 'agents.ts'), agentsModule(false));
  const keel = await startKeelProcess({
    agents: join(dir, 'agents.ts'),
    dataDir: join(dir, 'data'),
    apiKey: KEY,
    args: ['--watch'],
  });
  t.after(() => keel.kill('SIGKILL'));
  const api = async (method: string, path: string, body?: unknown) =>
    (await (
      await fetch(keel.url + path, {
        method,
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
    ).json()) as any;
  const until = async <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => {
    const deadline = Date.now() + DEADLINE_MS;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`${what} never happened\n${keel.output()}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  const settled = (id: string, statuses = ['succeeded', 'failed']) =>
    until(`run ${id} settling`, async () => {
      const run = await api('GET', `/v1/runs/${id}`);
      return statuses.includes(run.status) ? run : undefined;
    });
  const greet = async () => {
    const { id } = await api('POST', '/v1/runs', { agent: 'greeter', input: { name: 'Ada' } });
    const run = await settled(id);
    assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
    return run.result;
  };
  const reloads = () => keel.output().split('keel dev: reloaded').length - 1;

  assert.equal(await greet(), 'hello Ada');
  const parked = (await api('POST', '/v1/runs', { agent: 'asker', input: {} })).id;
  await settled(parked, ['waiting']);

  // An imported file and the module change: one burst, one reload.
  writeFileSync(join(dir, 'greeting.ts'), "export const word: string = 'howdy';\n");
  writeFileSync(join(dir, 'agents.ts'), agentsModule(true));
  await until('the reload', async () => (reloads() >= 1 ? true : undefined));
  assert.equal(await greet(), 'howdy Ada', 'the new code runs, no restart');

  // The run parked on the old code resumes on the new one, whose first effect is now a step.
  await api('POST', `/v1/runs/${parked}/input`, { key: 'go', value: 'now' });
  const diverged = await settled(parked);
  assert.equal(diverged.status, 'failed');
  assert.equal(diverged.error.code, 'non_determinism');
  assert.match(diverged.error.message, new RegExp(`keel runs reset ${parked} --position 0`));

  // A new asker run follows the new code from the start.
  const fresh = (await api('POST', '/v1/runs', { agent: 'asker', input: {} })).id;
  await settled(fresh, ['waiting']);
  await api('POST', `/v1/runs/${fresh}/input`, { key: 'go', value: 'now' });
  assert.equal((await settled(fresh)).result, 'howdy now');

  // A broken edit changes nothing.
  writeFileSync(join(dir, 'greeting.ts'), "export const word: string = 'oops;\n");
  await until('the refused reload', async () =>
    keel.output().includes('still serving the previous code') ? true : undefined,
  );
  assert.equal(await greet(), 'howdy Ada');
});
