// The seed workload of the front-door bench, shared by every system it runs: a workflow of five
// sequential durable steps, each returning about 200 bytes. Also the Keel agents module `keel dev`
// loads for the bench (that workflow, and a run that parks at once on input).
import { defineAgent } from '../../src/index.ts';

export const STEPS_PER_WORKFLOW = 5;
const STEP_RESULT_BYTES = 200;
const FILLER = 'x'.repeat(STEP_RESULT_BYTES - 40);

/** What step `i` returns: about 200 bytes of JSON. */
export function stepResult(i: number): { step: number; at: number; filler: string } {
  return { step: i, at: Date.now(), filler: FILLER };
}

export const FIVE_STEPS_AGENT = 'frontdoor-five-steps';
export const WAITS_AGENT = 'frontdoor-waits-for-input';

export const frontdoorFiveSteps = defineAgent({
  name: FIVE_STEPS_AGENT,
  version: '1',
  async run(ctx) {
    let last = stepResult(0);
    for (let i = 0; i < STEPS_PER_WORKFLOW; i++)
      last = await ctx.step(`step-${i}`, () => stepResult(i));
    return last.step;
  },
});

export const frontdoorWaitsForInput = defineAgent({
  name: WAITS_AGENT,
  version: '1',
  async run(ctx) {
    return ctx.waitForInput('go');
  },
});
