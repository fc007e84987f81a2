// A Fastify application that embeds Keel (keel/embedded, after `npm run build`): its own routes
// submit durable runs, read their results and answer their questions; there is no Keel server to
// run. The runs survive the application: kill it (kill -9 included) and start it again, and every
// run continues where its journal ends. Run it with:
//   PORT=3000 KEEL_DATA_DIR=.keel-app npx node examples/embedded-app.ts
//   curl -s localhost:3000/refunds -H 'content-type: application/json' -d '{"order":"o-1","cents":900}'
//   curl -s 'localhost:3000/refunds/o-1?waitMs=5000'
//   curl -s localhost:3000/refunds/o-1/approve -X POST      # refunds over 500 cents wait for this
import Fastify from 'fastify';
import { defineAgent } from 'keel';
import { KeelApiError, startKeel, type EmbeddedKeel } from 'keel/embedded';

/** Refunds an order in durable steps; a large one waits for a person's approval first. */
const refund = defineAgent({
  name: 'refund',
  version: '1',
  async run(ctx, input: { order: string; cents: number }) {
    const checked = await ctx.step('check-order', async () => ({ refundable: input.cents > 0 }));
    if (!checked.refundable) return { refunded: false, receipt: null };
    if (input.cents > 500) {
      const approved = await ctx.waitForInput<boolean>('approve');
      if (!approved) return { refunded: false, receipt: null };
    }
    // The call to the payment provider would go here: a step runs once, even across a crash.
    const receipt = await ctx.step('pay-back', async () => `rf-${input.order}`);
    return { refunded: true, receipt };
  },
});

/** The application's routes; runs are found by the order they refund (their idempotency key). */
export function buildApp(keel: EmbeddedKeel) {
  const app = Fastify();
  const runOf = async (order: string) => {
    const page = await keel.runs.list({ agent: 'refund', limit: 200 });
    return page.runs.find((run) => run.idempotencyKey === `refund-${order}`);
  };

  app.post<{ Body: { order: string; cents: number } }>('/refunds', async (request, reply) => {
    const { order, cents } = request.body;
    // Submitting twice (a retried request) gives back the first run.
    const run = await keel.runs.create({
      agent: 'refund',
      input: { order, cents },
      idempotencyKey: `refund-${order}`,
    });
    return reply.status(202).send({ order, run: run.id, status: run.status });
  });

  app.get<{ Params: { order: string }; Querystring: { waitMs?: string } }>(
    '/refunds/:order',
    async (request, reply) => {
      const run = await runOf(request.params.order);
      if (run === undefined) return reply.status(404).send({ error: 'no such refund' });
      const { done, run: latest } = await keel.runs.result(run.id, {
        waitMs: Number(request.query.waitMs ?? 0),
      });
      return { order: request.params.order, done, status: latest.status, result: latest.result };
    },
  );

  app.post<{ Params: { order: string } }>('/refunds/:order/approve', async (request, reply) => {
    const run = await runOf(request.params.order);
    if (run === undefined) return reply.status(404).send({ error: 'no such refund' });
    try {
      const answered = await keel.runs.sendInput(run.id, 'approve', true);
      return { order: request.params.order, status: answered.status };
    } catch (error) {
      // Keel's errors carry a stable code and the status the HTTP API would answer with.
      if (error instanceof KeelApiError)
        return reply.status(error.status).send({ error: error.code, message: error.message });
      throw error;
    }
  });
  return app;
}

if (import.meta.main) {
  const keel = await startKeel({
    agents: [refund],
    dataDir: process.env.KEEL_DATA_DIR ?? '.keel-app',
  });
  const app = buildApp(keel);
  const address = await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' });
  console.log(`refunds app listening on ${address}`);
  // Graceful stop: the routes first, then Keel (runs in flight are handed back, resumed at next start).
  process.once('SIGTERM', async () => {
    await app.close();
    await keel.close();
  });
}
