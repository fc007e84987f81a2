// ctx.send across a real crash (issue 21), on SQLite (`keel dev`) and Postgres (`keel server`),
// agent code in isolates: the sending process is SIGKILLed after the message was delivered and
// before the send was journaled (`execute.before-commit`), then restarted on the same data. The
// replayed send carries the same id, so the receiver gets the message exactly once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { keelScene } from './support/keel-scene.ts';
import { postgresAvailable } from './support/postgres.ts';

const AGENTS = fileURLToPath(new URL('./fixtures/message-agents.ts', import.meta.url));
const KEY = 'messages-crash-key';
/** Short, so the dead process's lease on the sender expires within seconds of the restart. */
const LEASE_TTL_MS = 2_000;
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

for (const backend of ['sqlite', 'postgres'] as const) {
  test(`messages crash (${backend}): kill -9 after the delivery, before the send is journaled; delivered once`, {
    timeout: 180_000,
  }, async (t) => {
    if (backend === 'postgres' && !(await postgresAvailable())) return t.skip('no Postgres');
    const s = await keelScene(t, {
      agents: AGENTS,
      apiKey: KEY,
      prefix: 'keel-msg-',
      store: backend,
      env: () => ({ KEEL_LEASE_TTL_MS: String(LEASE_TTL_MS) }),
      untilMs: 60_000,
    });
    const first = await s.start({ KEEL_TEST_CRASH_AT: 'execute.before-commit:1' });
    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    const to = (await s.api('POST', '/v1/runs', { agent: 'msg-receiver', input: { count: 1 } }))
      .body.id as string;
    await s.until(to, (r) => r.status === 'waiting');
    const from = (await s.api('POST', '/v1/runs', { agent: 'msg-sender', input: { to, times: 1 } }))
      .body.id as string;
    await exited;
    assert.equal(first.child.signalCode, 'SIGKILL', 'the process died at execute.before-commit');

    await s.start();
    const sent = await s.until(from, (r) => TERMINAL.has(r.status));
    assert.equal(sent.status, 'succeeded');
    // The replayed send found its own delivery: nothing was delivered twice.
    assert.deepEqual(sent.result, { sent: [{ index: 1, duplicate: true }] });
    const got = await s.until(to, (r) => TERMINAL.has(r.status));
    assert.deepEqual(got.result, {
      got: [{ id: `${from}.1`, from, correlationId: 'conv-1', index: 1, payload: { n: 0 } }],
    });
    const events = (await s.api('GET', `/v1/runs/${to}/events?format=json`)).body as any[];
    assert.equal(events.filter((e) => e.type === 'message.delivered').length, 1);
    assert.equal(events.filter((e) => e.type === 'message.received').length, 1);
  });
}
