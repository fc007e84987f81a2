// The README's quickstart agent, kept here so type-checking and tests prove it works.
import { z } from 'zod';
import { defineAgent, defineTool } from 'keel';

export const charge = defineTool({
  name: 'charge',
  description: 'Charges a card',
  input: z.object({ customer: z.string(), cents: z.number().int() }),
  effect: 'side-effect', // never re-run blindly after a crash
  async run(_args, { executionId }) {
    return { receipt: `paid-${executionId}` }; // pass executionId downstream as the idempotency key
  },
});

export const checkout = defineAgent({
  name: 'checkout',
  version: '1',
  async run(ctx, input: { customer: string; cents: number }) {
    const quote = await ctx.step('quote', () => ({ total: input.cents }));
    const ok = await ctx.waitForInput<boolean>('approve', { timeoutMs: 24 * 3600_000 });
    if (!ok) return { status: 'declined' };
    const paid = await ctx.tool(charge, { customer: input.customer, cents: quote.total });
    await ctx.sleep(1000); // a durable timer: the run releases its worker
    return { status: 'paid', ...paid };
  },
});
