// Reference scenario: the throughput shape run on DBOS Transact, the durable-execution library a
// user would pick instead of Keel, against the same Postgres. DBOS runs as shipped (its default
// pool, synchronous_commit as the server has it) in a database of its own, created fresh here and
// dropped after; it never touches another one. Registration is functional (DBOS.registerWorkflow +
// DBOS.runStep): decorators are not erasable TypeScript.
import { readFileSync } from 'node:fs';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { measureShape, ShapeCounters, type PostgresShapeResult } from '../postgres-shape.ts';
import {
  benchDatabaseUrl,
  createFreshDatabase,
  dropDatabase,
  PostgresMeter,
  postgresAvailability,
} from '../postgres-support.ts';
import { progress, STEPS_PER_RUN } from '../support.ts';

const DBOS_DATABASE = 'keel_bench_dbos';
const DBOS_APP_NAME = 'keel-bench';
/**
 * DBOS's own default (DEFAULT_POOL_SIZE in its system_database.ts), set explicitly so the report
 * can state it.
 */
const DBOS_POOL_SIZE = 10;

export type DbosReferenceResult = PostgresShapeResult;

export async function runDbosReference(options: { quick: boolean }): Promise<DbosReferenceResult> {
  const server = await postgresAvailability();
  if (!server.ok) throw new Error(server.reason);
  await createFreshDatabase(DBOS_DATABASE);
  const counters = new ShapeCounters();
  const workflow = registerFiveSteps(counters);
  DBOS.setConfig({
    name: DBOS_APP_NAME,
    systemDatabaseUrl: benchDatabaseUrl(DBOS_DATABASE),
    systemDatabasePoolSize: DBOS_POOL_SIZE,
    logLevel: 'warn',
  });
  await DBOS.launch();
  const meter = await PostgresMeter.open(DBOS_DATABASE);
  try {
    const label = `DBOS Transact ${dbosVersion()}`;
    const measured = await measureShape({
      quick: options.quick,
      label,
      counters,
      meter,
      runWorkflow: () => workflow(),
    });
    progress(
      `${label}: ${measured.stepsPerSec} durable steps/s, ${measured.workflowsPerSec} workflows/s, ` +
        `step gap p50 ${measured.stepGap.p50Ms} ms p99 ${measured.stepGap.p99Ms} ms, ` +
        `${measured.postgres.transactionsPerStep} Postgres transactions per step`,
    );
    return {
      system: label,
      serverVersion: server.serverVersion,
      synchronousCommit: server.synchronousCommit,
      poolSize: DBOS_POOL_SIZE,
      ...measured,
    };
  } finally {
    await meter.close();
    await DBOS.shutdown();
    await dropDatabase(DBOS_DATABASE);
  }
}

/**
 * Five sequential DBOS steps with trivial bodies; each reports its start (for the gap) and, once
 * checkpointed, itself.
 */
export function registerFiveSteps(counters: ShapeCounters): () => Promise<number> {
  async function benchFiveSteps(): Promise<number> {
    let previousEnded: number | undefined;
    for (let i = 0; i < STEPS_PER_RUN; i++) {
      await DBOS.runStep(
        async () => {
          counters.stepStarted(previousEnded);
          previousEnded = performance.now();
          return i;
        },
        { name: `step-${i}` },
      );
      counters.steps++;
    }
    return STEPS_PER_RUN;
  }
  return DBOS.registerWorkflow(benchFiveSteps, { name: 'bench-five-steps' });
}

/** The installed version, read from its package.json (which the package does not export). */
export function dbosVersion(): string {
  const entry = import.meta.resolve('@dbos-inc/dbos-sdk');
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', entry), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}
