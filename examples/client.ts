// An application using keel/client against `keel dev --agents examples/agents.ts` (after `npm run
// build`): it submits an `approval` run (idempotent by key), follows its events, answers the
// question the agent asks, and waits for the result. Run it with the address and key `keel dev`
// printed:
//   KEEL_URL=http://127.0.0.1:7070 KEEL_API_KEY=… npx node examples/client.ts
import { createKeelClient, KeelApiError } from 'keel/client';

const keel = createKeelClient({
  baseUrl: process.env.KEEL_URL ?? 'http://127.0.0.1:7070',
  apiKey: process.env.KEEL_API_KEY ?? '',
});

const run = await keel.runs.create({
  agent: 'approval',
  input: { name: 'ada' },
  idempotencyKey: `example-${new Date().toISOString().slice(0, 13)}`, // one run per hour, however often this runs
});
console.log(`run ${run.id}: ${run.status}`);

// Follow the run in the background: the iterator resumes by itself if the connection drops.
const following = (async () => {
  for await (const event of keel.runs.events(run.id)) {
    console.log(`  #${event.seq} ${event.type}`);
    // The run parks on ctx.waitForInput('approve') (and later on a short sleep: answering twice is refused).
    if (event.type === 'run.waiting')
      await keel.runs.sendInput(run.id, 'approve', true).catch(ignoreAnswered);
  }
})();

const done = await keel.runs.wait(run.id, { timeoutMs: 60_000 });
await following;
console.log(`run ${done.id} ${done.status}:`, JSON.stringify(done.result ?? done.error));

/** A second run of this example finds the question answered already: that is fine. */
function ignoreAnswered(error: unknown): void {
  if (
    error instanceof KeelApiError &&
    ['input_already_provided', 'run_terminal'].includes(error.code)
  )
    return;
  throw error;
}
