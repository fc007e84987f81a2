// The agents module the front-door profiler serves with `keel dev`: five sequential steps whose
// bodies return ~200 bytes at once (the engine's cost per durable step, not the body's, is what is
// measured). Loaded by the isolates as any user's agents module is.
import { defineAgent } from '../src/sdk/define.ts';

const STEPS_PER_RUN = 5;
const PAYLOAD = 'x'.repeat(200);

export const fiveSteps = defineAgent({
  name: 'profile-five-steps',
  version: '1',
  async run(ctx) {
    for (let i = 0; i < STEPS_PER_RUN; i++) await ctx.step(`step-${i}`, () => `${i}:${PAYLOAD}`);
    return STEPS_PER_RUN;
  },
});
