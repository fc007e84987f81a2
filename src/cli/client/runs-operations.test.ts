// `keel runs resolve|migrate|show` against a small real HTTP server that records what it is sent:
// the documented bodies, the usage errors refused before any request, and the resolve commands
// `show` prints under a run waiting on an unknown execution.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { runRunsCommand } from './runs-command.ts';

const RUN = {
  id: 'run_1',
  tenantId: 't',
  agent: 'a',
  agentVersion: '1',
  status: 'waiting',
  stateVersion: 3,
  priority: 'interactive',
  input: {},
  waitingReason: 'unknown_side_effect',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

async function withServer(
  fn: (
    cli: (...argv: string[]) => Promise<{ code: number; out: string; err: string }>,
  ) => Promise<void>,
): Promise<Array<{ method: string; path: string; body: unknown }>> {
  const seen: Array<{ method: string; path: string; body: unknown }> = [];
  const server = http.createServer(async (req, res) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    seen.push({
      method: req.method!,
      path: req.url!,
      body: text === '' ? undefined : JSON.parse(text),
    });
    res.setHeader('content-type', 'application/json');
    if (req.url === '/v1/runs/run_1/steps')
      return res.end(
        JSON.stringify({
          steps: [
            { seq: 1, kind: 'step', name: 's', status: 'succeeded', attempts: 1 },
            {
              seq: 2,
              kind: 'tool',
              name: 'charge',
              status: 'unknown',
              attempts: 1,
              executionId: 'run_1.2',
            },
          ],
        }),
      );
    if (req.url === '/v1/runs/migrate-version')
      return res.end(
        JSON.stringify({
          agent: 'a',
          from: '1',
          to: '2',
          moved: 2,
          movedRunIds: ['r1', 'r2'],
          started: 1,
          startedRunIds: ['r3'],
        }),
      );
    res.end(JSON.stringify(RUN));
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    await fn(async (...argv) => {
      let out = '';
      let err = '';
      const sink = (append: (s: string) => void) =>
        new Writable({
          write(chunk, _encoding, done) {
            append(chunk.toString());
            done();
          },
        });
      const code = await runRunsCommand(argv, {
        stdout: sink((s) => (out += s)),
        stderr: sink((s) => (err += s)),
        env: { KEEL_URL: url, KEEL_API_KEY: 'k' },
      });
      return { code, out, err };
    });
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
  return seen;
}

test('resolve sends the documented body; a flag that does not fit --as is a usage error sent nowhere', async () => {
  const seen = await withServer(async (cli) => {
    assert.equal(
      (await cli('resolve', 'run_1', 'run_1.2', '--as', 'succeeded', '--result', '{"ok":1}')).code,
      0,
    );
    assert.equal(
      (await cli('resolve', 'run_1', 'run_1.2', '--as', 'failed', '--error', 'no')).code,
      0,
    );
    assert.equal((await cli('resolve', 'run_1', 'run_1.2', '--as', 'retry')).code, 0);
    for (const argv of [
      ['resolve', 'run_1', 'run_1.2'],
      ['resolve', 'run_1', 'run_1.2', '--as', 'retry', '--result', '1'],
      ['resolve', 'run_1', 'run_1.2', '--as', 'succeeded', '--error', 'x'],
      ['resolve', 'run_1', 'run_1.2', '--as', 'succeeded', '--result', '{bad'],
      ['migrate', '--agent', 'a', '--from', '1'],
    ]) {
      const refused = await cli(...argv);
      assert.equal(refused.code, 2, `${argv.join(' ')}: ${refused.err}`);
    }
  });
  assert.deepEqual(seen, [
    {
      method: 'POST',
      path: '/v1/runs/run_1/executions/run_1.2/resolve',
      body: { action: 'succeeded', result: { ok: 1 } },
    },
    {
      method: 'POST',
      path: '/v1/runs/run_1/executions/run_1.2/resolve',
      body: { action: 'failed', error: { message: 'no' } },
    },
    {
      method: 'POST',
      path: '/v1/runs/run_1/executions/run_1.2/resolve',
      body: { action: 'retry' },
    },
  ]);
});

test('show prints the resolve commands of unknown executions; migrate reports moved and started runs', async () => {
  await withServer(async (cli) => {
    const shown = await cli('show', 'run_1');
    assert.equal(shown.code, 0, shown.err);
    assert.match(shown.out, /#2 charge\s+execution run_1\.2/);
    assert.match(shown.out, /keel runs resolve run_1 run_1\.2 --as retry/);
    assert.match(shown.out, /keel runs resolve run_1 run_1\.2 --as succeeded --result '<json>'/);
    assert.doesNotMatch(shown.out, /#1 s/, 'settled steps are not listed');
    const migrated = await cli('migrate', '--agent', 'a', '--from', '1', '--to', '2');
    assert.equal(migrated.code, 0, migrated.err);
    assert.match(migrated.out, /moved 2 queued runs of a@1 to a@2/);
    assert.match(migrated.out, /left 1 on a@1: they had started .*\n {2}r3\n/);
  });
});
