// Agents and tools for the crash-torture test. Every tool body appends to a ledger file outside
// Keel (KEEL_TEST_LEDGER) before it returns, so the test can prove from outside what really ran,
// however Keel died. The mix covers each effect class, parallel tool calls, a durable timer, tool
// retries, a settle-once fan-in and a saga.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { defineAgent, defineTool } from '../../src/index.ts';
import { bulkText } from './bulk-text.ts';

const LEDGER = process.env.KEEL_TEST_LEDGER ?? '/tmp/keel-torture-ledger.txt';
const mark = (line: string) => appendFileSync(LEDGER, `${line}\n`);
const ledgerHas = (line: string) =>
  existsSync(LEDGER) && readFileSync(LEDGER, 'utf8').includes(`${line}\n`);

const N = z.object({ n: z.number() });

export const lookup = defineTool({
  name: 'lookup',
  description: 'A read: safe to run again',
  input: N,
  effect: 'read',
  run(args, t) {
    mark(`read ${t.executionId}`);
    return { doubled: args.n * 2 };
  },
});

export const upsert = defineTool({
  name: 'upsert',
  description: 'An idempotent write keyed by the execution id',
  input: N,
  effect: 'idempotent',
  run(args, t) {
    mark(`idem ${t.executionId}`);
    return { key: t.executionId, n: args.n };
  },
});

/** A flaky idempotent call: its first attempt in each process fails, the retry succeeds. */
export const flaky = defineTool({
  name: 'flaky',
  description: 'Fails its first attempt',
  input: N,
  effect: 'idempotent',
  retry: { maxAttempts: 3, initialDelayMs: 1, maxDelayMs: 5 },
  run(args, t) {
    mark(`flaky ${t.executionId} ${t.attempt}`);
    if (t.attempt === 1) throw new Error('transient');
    return { n: args.n };
  },
});

/** A side effect with a query hook: the "downstream system" is the ledger. */
export const charge = defineTool({
  name: 'charge',
  description: 'Charges once; can say whether an execution happened',
  input: N,
  effect: 'side-effect',
  run(_args, t) {
    mark(`se ${t.executionId}`);
    return { charged: true };
  },
  query(executionId) {
    return Promise.resolve(
      ledgerHas(`se ${executionId}`)
        ? { found: true as const, result: { charged: true } }
        : { found: false as const },
    );
  },
});

/** A side effect without a query hook: an interrupted one is parked for an operator. */
export const email = defineTool({
  name: 'email',
  description: 'Sends once; cannot be asked',
  input: N,
  effect: 'side-effect',
  run(_args, t) {
    mark(`se ${t.executionId}`);
    return { charged: true };
  },
});

/** A side effect that can be undone: its compensation is idempotent by execution id. */
export const reserve = defineTool({
  name: 'reserve',
  description: 'Reserves a seat; compensated by releasing it',
  input: N,
  effect: 'side-effect',
  run(_args, t) {
    mark(`se ${t.executionId}`);
    return { reserved: true };
  },
  query(executionId) {
    return Promise.resolve(
      ledgerHas(`se ${executionId}`)
        ? { found: true as const, result: { reserved: true } }
        : { found: false as const },
    );
  },
  compensate(executionId) {
    if (!ledgerHas(`undo ${executionId}`)) mark(`undo ${executionId}`);
  },
});

export const torture = defineAgent({
  name: 'torture',
  version: '1',
  async run(ctx, input: { n: number; sleep: boolean }) {
    const n = await ctx.step('prep', () => {
      mark(`step ${ctx.runId} prep`);
      return input.n;
    });
    // Past the harness's 1 KiB inline threshold: stored as a payload, read back on replay and in
    // the run's output.
    const bulk = await ctx.step('bulk', () => bulkText(n));
    const read = await ctx.tool(lookup, { n });
    await ctx.tool(upsert, { n });
    const [a, b] = await Promise.all([ctx.tool(charge, { n: 1 }), ctx.tool(email, { n: 2 })]);
    if (input.sleep) await ctx.sleep(20);
    const f = await ctx.tool(flaky, { n });
    const c = await ctx.tool(charge, { n: 3 });
    // A settle-once fan-in (its decision is journaled): only the read passes verify, so the
    // outcome is known whichever branch settles first.
    const picked = await ctx.any(
      [ctx.tool(upsert, { n: n + 20 }), ctx.tool(lookup, { n: n + 10 })],
      {
        verify: (r) => typeof r === 'object' && r !== null && 'doubled' in r,
      },
    );
    return {
      n,
      doubled: read.doubled,
      flaky: f.n,
      charged: [a.charged, b.charged, c.charged],
      picked,
      bulk,
    };
  },
});

/** Reserves two seats, then fails: the saga releases both, in reverse order. */
export const saga = defineAgent({
  name: 'torture-saga',
  version: '1',
  async run(ctx, input: { n: number }) {
    await ctx.tool(reserve, { n: input.n });
    await ctx.tool(reserve, { n: input.n + 1 });
    await ctx.step('fail', () => {
      throw new Error('payment declined');
    });
    return null;
  },
});
