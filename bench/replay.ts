// `npm run bench:replay [-- --sizes 100,1000,10000 --rounds 5 --backends sqlite,postgres]`: what a
// resume costs (issue 22, bounded replay). For each store and journal size it builds one run of N
// step effects through the real engine — without checkpoints, and with `ctx.checkpoint` every 100
// steps — that then parks on an input. Each round answers the input and resumes the run on a fresh
// Orchestrator over a fresh store on the same SQLite file / Postgres database (a restarted worker:
// nothing cached), and measures from the claim (claimRuns returning the run) to the start of the
// next effect's code: loading the journal, re-entering the agent, replaying. It also reads the
// process CPU over that window. It prints a Markdown table and writes nothing else.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Orchestrator } from '../src/engine/orchestrator.ts';
import { AgentRegistry } from '../src/engine/registry.ts';
import { ModelGateway } from '../src/models/gateway.ts';
import { defineAgent } from '../src/sdk/define.ts';
import type { AgentContext, Json } from '../src/sdk/types.ts';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../src/store/store.ts';
import {
  benchDatabaseUrl,
  createFreshDatabase,
  dropDatabase,
  postgresAvailability,
} from './postgres-support.ts';

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const SIZES = (flag('--sizes') ?? '100,1000,10000').split(',').map(Number);
const ROUNDS = Number(flag('--rounds') ?? 5);
const BACKENDS = (flag('--backends') ?? 'sqlite,postgres').split(',');
/** Steps between two checkpoints in the checkpointed runs. */
const CHECKPOINT_EVERY = 100;
const DATABASE = 'keel_bench_replay';
const POLL_MS = 5;

type State = { i: number; round: number };

/** Set by the measuring round: called when the first effect after the resume starts its code. */
let onNextEffect: (() => void) | undefined;

const agent = defineAgent({
  name: 'replay-bench',
  version: '1',
  async run(ctx: AgentContext, input: { n: number; every: number }) {
    let state = (ctx.resumedFrom?.state as State | undefined) ?? { i: 0, round: 0 };
    while (state.i < input.n) {
      const i = state.i;
      await ctx.step('s', () => i);
      state = { ...state, i: i + 1 };
      if (input.every > 0 && state.i % input.every === 0) await ctx.checkpoint(state);
    }
    for (;;) {
      await ctx.waitForInput(`go-${state.round}`);
      const round = state.round;
      await ctx.step('next', () => {
        onNextEffect?.();
        return round;
      });
      state = { ...state, round: round + 1 };
      // The resume of the next round starts from here: bounded by the effects since.
      if (input.every > 0) await ctx.checkpoint(state);
    }
  },
});

interface Backend {
  name: string;
  open(): Promise<Store>;
  cleanup(): Promise<void>;
}

async function sqliteBackend(): Promise<Backend> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-bench-replay-'));
  return {
    name: 'SQLite',
    open: async () => {
      const store = new SqliteStore({ path: join(dir, 'keel.db') });
      await store.migrate();
      return store;
    },
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

async function postgresBackend(): Promise<Backend> {
  await createFreshDatabase(DATABASE);
  return {
    name: 'Postgres',
    open: async () => {
      const store = new PostgresStore({ connectionString: benchDatabaseUrl(DATABASE) });
      await store.migrate();
      return store;
    },
    cleanup: () => dropDatabase(DATABASE),
  };
}

function orchestrator(store: Store): Orchestrator {
  const registry = new AgentRegistry();
  registry.register(agent);
  return new Orchestrator({
    store,
    registry,
    gateway: new ModelGateway(),
    pollIntervalMs: POLL_MS,
  });
}

async function until(store: Store, id: string, ok: (status: string) => boolean): Promise<void> {
  for (;;) {
    const run = await store.getRun(id);
    if (run !== null && ok(run.status)) return;
    if (run?.status === 'failed') throw new Error(`run failed: ${JSON.stringify(run.error)}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** Builds the run: N steps through the engine, then parked on its first input. */
async function build(backend: Backend, n: number, every: number): Promise<string> {
  const store = await backend.open();
  const o = orchestrator(store);
  try {
    const tenant = await store.ensureTenant('bench', 'bench-key-hash');
    const { run } = await store.createRun({
      id: `run_${randomUUID()}`,
      tenantId: tenant.id,
      agent: 'replay-bench',
      agentVersion: '1',
      input: { n, every } as Json,
      priority: 'interactive',
      budget: { maxSteps: 1_000_000 },
      metadata: null,
      parentRunId: null,
      idempotencyKey: null,
      requestHash: null,
    });
    o.start();
    await until(store, run.id, (s) => s === 'waiting');
    return run.id;
  } finally {
    await o.stop();
    await store.close();
  }
}

/** One resume on a fresh orchestrator and store: ms and CPU ms from claim to the next effect. */
async function resume(
  backend: Backend,
  id: string,
  round: number,
): Promise<{ wallMs: number; cpuMs: number; positions: number }> {
  const store = await backend.open();
  await store.provideInput(id, `go-${round}`, null);
  let claimedAt: number | undefined;
  let cpuAtClaim: NodeJS.CpuUsage | undefined;
  const claimRuns = store.claimRuns.bind(store);
  store.claimRuns = async (request) => {
    const runs = await claimRuns(request);
    if (claimedAt === undefined && runs.some((r) => r.id === id)) {
      claimedAt = performance.now();
      cpuAtClaim = process.cpuUsage();
    }
    return runs;
  };
  const started = new Promise<{ wallMs: number; cpuMs: number }>((resolve) => {
    onNextEffect = () => {
      const cpu = process.cpuUsage(cpuAtClaim);
      resolve({ wallMs: performance.now() - claimedAt!, cpuMs: (cpu.user + cpu.system) / 1000 });
    };
  });
  const o = orchestrator(store);
  try {
    o.start();
    const measured = await started;
    onNextEffect = undefined;
    await until(store, id, (s) => s === 'waiting');
    const positions = (await store.loadJournal(id)).length;
    return { ...measured, positions };
  } finally {
    await o.stop();
    await store.close();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const rows: string[] = [];
for (const name of BACKENDS) {
  if (name === 'postgres') {
    const pg = await postgresAvailability();
    if (!pg.ok) {
      process.stderr.write(`skipping Postgres: ${pg.reason}\n`);
      continue;
    }
  }
  const backend = name === 'postgres' ? await postgresBackend() : await sqliteBackend();
  try {
    for (const n of SIZES) {
      for (const every of [0, CHECKPOINT_EVERY]) {
        const buildStart = performance.now();
        const id = await build(backend, n, every);
        const buildMs = performance.now() - buildStart;
        const wall: number[] = [];
        const cpu: number[] = [];
        let positions = 0;
        for (let round = 0; round < ROUNDS; round++) {
          const r = await resume(backend, id, round);
          wall.push(r.wallMs);
          cpu.push(r.cpuMs);
          positions = r.positions;
        }
        const row = `| ${backend.name} | ${n} | ${every === 0 ? 'none' : `every ${every}`} | ${positions} | ${median(wall).toFixed(1)} | ${Math.max(...wall).toFixed(1)} | ${median(cpu).toFixed(1)} | ${(buildMs / 1000).toFixed(1)} |`;
        rows.push(row);
        process.stderr.write(`${row}\n`);
      }
    }
  } finally {
    await backend.cleanup();
  }
}
process.stdout.write(
  `| store | effects | checkpoints | journal rows | claim → next effect p50 (ms) | max (ms) | process CPU p50 (ms) | build (s) |\n|---|---|---|---|---|---|---|---|\n${rows.join('\n')}\n`,
);
