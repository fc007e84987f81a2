// The Restate side of the front-door bench: a Node endpoint (@restatedev/restate-sdk) serving the
// seed workflow as a Restate service, five sequential `ctx.run` steps each returning about 200
// bytes, journaled by the Restate server. `npx node bench/frontdoor/restate-endpoint.ts <port>`;
// bench/frontdoor/systems.ts starts it and registers it with the server.
import * as restate from '@restatedev/restate-sdk';
import { STEPS_PER_WORKFLOW, stepResult } from './workload.ts';

export const RESTATE_SERVICE = 'FrontdoorBench';

const bench = restate.service({
  name: RESTATE_SERVICE,
  handlers: {
    run: async (ctx: restate.Context): Promise<number> => {
      let last = stepResult(0);
      for (let i = 0; i < STEPS_PER_WORKFLOW; i++)
        last = await ctx.run(`step-${i}`, () => stepResult(i));
      return last.step;
    },
  },
});

if (import.meta.main) {
  const port = await restate.serve({ services: [bench], port: Number(process.argv[2]) });
  process.stdout.write(`restate endpoint listening on ${port}\n`);
}
