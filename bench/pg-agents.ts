// The agent of the Keel-on-Postgres scenario, loaded both in the bench process (one worker,
// in-process) and by `keel worker` child processes. Step bodies record the gap since the previous
// step's body ended; a worker process writes its gaps to BENCH_STEP_GAP_FILE when it exits, so the
// bench can merge them.
import { writeFileSync } from 'node:fs';
import { defineAgent } from '../src/index.ts';

/** Gap samples kept per process, bounded so a long run cannot grow memory without limit. */
const GAP_SAMPLES_MAX = 200_000;
export const stepGapsMs: number[] = [];
export const gapObservers: Array<(ms: number) => void> = [];

export const pgFiveSteps = defineAgent({
  name: 'pg-five-steps',
  version: '1',
  async run(ctx) {
    let previousEnded: number | undefined;
    for (let i = 0; i < 5; i++) {
      await ctx.step(`s${i}`, () => {
        if (previousEnded !== undefined) {
          const gap = performance.now() - previousEnded;
          if (stepGapsMs.length < GAP_SAMPLES_MAX) stepGapsMs.push(gap);
          for (const observe of gapObservers) observe(gap);
        }
        previousEnded = performance.now();
        return i;
      });
    }
    return 5;
  },
});

const gapFile = process.env.BENCH_STEP_GAP_FILE;
if (gapFile !== undefined)
  process.on('exit', () => writeFileSync(gapFile, JSON.stringify(stepGapsMs)));
