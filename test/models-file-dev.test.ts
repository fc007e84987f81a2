// `keel dev` as a real process with KEEL_MODELS_FILE: the models file names an OpenAI-compatible
// model at a fake server and the *name* of the key's environment variable; the key reaches the
// provider and never Keel's output.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startFakeOpenAi } from './support/fake-openai-server.ts';
import { startKeelProcess } from './support/keel-process.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/model-agents.ts', import.meta.url));
const SECRET = 'sk-from-the-environment-0123456789';

test('keel dev loads the models file and calls the provider with the key from the named variable', async (t) => {
  const fake = await startFakeOpenAi((body) => {
    const tool = body.messages.find((m: any) => m.role === 'tool');
    return tool === undefined
      ? { kind: 'reply', toolCalls: [{ name: 'add', args: { a: 20, b: 22 } }] }
      : { kind: 'reply', text: `sum ${JSON.parse(tool.content).sum}` };
  });
  t.after(() => fake.close());
  const dir = mkdtempSync(join(tmpdir(), 'keel-models-dev-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
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
  const apiKey = 'dev-key-0123456789';
  const keel = await startKeelProcess({
    agents: AGENTS,
    dataDir: join(dir, 'data'),
    apiKey,
    env: { KEEL_MODELS_FILE: modelsFile, TEST_PROVIDER_KEY: SECRET, KEEL_LOG_LEVEL: 'debug' },
  });
  t.after(() => keel.kill('SIGKILL'));
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const created = (await (
    await fetch(`${keel.url}/v1/runs`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ agent: 'adder', input: 'add 20 and 22' }),
    })
  ).json()) as { id: string };
  let run: any;
  const deadline = Date.now() + 15_000;
  do {
    await new Promise((r) => setTimeout(r, 50));
    run = await (await fetch(`${keel.url}/v1/runs/${created.id}`, { headers })).json();
  } while (!['succeeded', 'failed', 'cancelled'].includes(run.status) && Date.now() < deadline);
  assert.equal(run.status, 'succeeded', JSON.stringify(run));
  assert.deepEqual(run.result, { text: 'sum 42', steps: 2 });
  assert.equal(fake.requests[0]!.headers.authorization, `Bearer ${SECRET}`);
  assert.equal(fake.requests[0]!.body.model, 'gpt-test');
  assert.ok(!keel.output().includes(SECRET), 'the key never appears in Keel’s output');
});
