// `npx node --expose-gc bench/large-payload-probe.ts <sqlite|postgres> <MB> [databaseUrl]`: one
// process, one embedded Keel, one run whose tool returns a MB-megabyte result (issue 22). Prints one
// JSON line: the process's peak resident set (the kernel's maxRSS, a true high-water mark that no
// sampling can miss) after a warm-up run (baseline) and after the large run, the payload size, and
// where the result went (the journal row holds a reference, the value comes back whole). Used by
// test/large-payload-memory.test.ts (a generous bound) and bench/large-payload.ts (the figures).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { startKeel } from '../src/embedded/index.ts';
import { defineAgent, defineTool } from '../src/index.ts';

const [backend, mbText, databaseUrl] = process.argv.slice(2);
const payloadBytes = Number(mbText) * 1024 * 1024;

const big = defineTool({
  name: 'big',
  description: 'Returns a large result',
  input: z.object({ bytes: z.number().int() }),
  effect: 'read',
  run: ({ bytes }) => ({ body: 'x'.repeat(bytes) }),
});

const agent = defineAgent({
  name: 'large',
  version: '1',
  async run(ctx, input: { bytes: number }) {
    const result = (await ctx.tool(big, { bytes: input.bytes })) as { body: string };
    return { length: result.body.length };
  },
});

const maxRssBytes = () => process.resourceUsage().maxRSS * 1024;
const gc = () => (globalThis as { gc?: () => void }).gc?.();

const dir = mkdtempSync(join(tmpdir(), 'keel-large-payload-'));
const keel = await startKeel({
  agents: [agent],
  tools: [big],
  ...(backend === 'postgres' ? { databaseUrl: databaseUrl! } : { dataDir: dir }),
  config: { leaseTtlMs: 30_000 },
});
try {
  // Warm-up: the same path with a small result, so code and caches are in the baseline.
  const warm = await keel.runs.create({ agent: 'large', input: { bytes: 1024 } });
  await keel.runs.wait(warm.id);
  gc();
  const baseline = maxRssBytes();
  const run = await keel.runs.create({ agent: 'large', input: { bytes: payloadBytes } });
  const done = await keel.runs.wait(run.id, { timeoutMs: 300_000 });
  const peak = maxRssBytes();
  const steps = await keel.runs.steps(run.id, { io: false });
  process.stdout.write(
    `${JSON.stringify({
      backend,
      payloadBytes,
      status: done.status,
      result: done.result ?? null,
      baselineMaxRssBytes: baseline,
      peakMaxRssBytes: peak,
      steps: steps.length,
    })}\n`,
  );
} finally {
  await keel.close();
  rmSync(dir, { recursive: true, force: true });
}
