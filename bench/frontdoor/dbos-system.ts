// DBOS Transact in the front-door bench: `npx node bench/frontdoor/dbos-system.ts '<json>'` launches
// DBOS (as shipped: its default pool, the server's synchronous_commit) on a fresh database of its
// own, registers the seed workflow (five DBOS.runStep steps, each returning about 200 bytes) and runs
// the closed loop in this same process: DBOS is a library, so its client is in-process and there is
// no client CPU to subtract. Prints one JSON line; drops its database at the end.
import { DBOS } from '@dbos-inc/dbos-sdk';
import { dbosVersion } from '../scenarios/dbos-reference.ts';
import { benchDatabaseUrl, createFreshDatabase, dropDatabase } from '../postgres-support.ts';
import { closedLoop, type LoopResult } from './loop.ts';
import { STEPS_PER_WORKFLOW, stepResult } from './workload.ts';

export const DBOS_DATABASE = 'keel_bench_frontdoor_dbos';

export interface DbosConfig {
  lanes: number;
  warmupRuns: number;
  runs: number;
  trees: Record<string, number>;
}

export type DbosResult = LoopResult & { version: string };

async function frontdoorFiveSteps(): Promise<number> {
  let last = stepResult(0);
  for (let i = 0; i < STEPS_PER_WORKFLOW; i++)
    last = await DBOS.runStep(async () => stepResult(i), { name: `step-${i}` });
  return last.step;
}

export async function runDbos(config: DbosConfig): Promise<DbosResult> {
  await createFreshDatabase(DBOS_DATABASE);
  const workflow = DBOS.registerWorkflow(frontdoorFiveSteps, { name: 'frontdoor-five-steps' });
  DBOS.setConfig({
    name: 'keel-frontdoor-bench',
    systemDatabaseUrl: benchDatabaseUrl(DBOS_DATABASE),
    logLevel: 'warn',
  });
  await DBOS.launch();
  try {
    const result = await closedLoop({
      ...config,
      runOne: async () => {
        await workflow();
      },
    });
    return { ...result, version: dbosVersion() };
  } finally {
    await DBOS.shutdown();
    await dropDatabase(DBOS_DATABASE);
  }
}

if (import.meta.main) {
  const result = await runDbos(JSON.parse(process.argv[2]!) as DbosConfig);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}
