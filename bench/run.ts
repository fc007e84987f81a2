// `npm run bench [-- --quick]`: runs each scenario in its own child process (with --expose-gc, so
// memory figures start clean and one scenario's heap never skews another's), collects their JSON
// and writes bench/RESULTS.md with the machine it ran on and a targets table. `--quick` is a ~30 s
// smoke run: it prints the report and never overwrites RESULTS.md. In a child (`--scenario <name>
// --out <file>`), it runs that one scenario. Scenarios that need Postgres run only when it answers;
// otherwise they are recorded as skipped, with the reason, and the rest run.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { postgresAvailability } from './postgres-support.ts';
import { runDbosReference } from './scenarios/dbos-reference.ts';
import { runFsyncCeiling } from './scenarios/fsync-ceiling.ts';
import { runKeelPostgres } from './scenarios/keel-postgres.ts';
import { runLatencyAlone } from './scenarios/latency-alone.ts';
import { runThroughput } from './scenarios/throughput.ts';
import { runWaitingRss } from './scenarios/waiting-rss.ts';
import { runSandboxBench, spliceSandboxSection } from './scenarios/sandbox.ts';
import { runModelGateway } from './scenarios/model-gateway.ts';
import { renderReport, type BenchResults, type SkippedScenario } from './report.ts';
import { gitDescription, machineInfo, makeTempDir, progress, removeDir } from './support.ts';

const SCENARIOS = {
  'fsync-ceiling': (quick: boolean) => runFsyncCeiling({ quick }),
  'throughput-store': (quick: boolean) => runThroughput({ quick, submission: 'store' }),
  'throughput-http': (quick: boolean) => runThroughput({ quick, submission: 'http' }),
  'latency-alone': (quick: boolean) => runLatencyAlone({ quick }),
  'waiting-rss': (quick: boolean) => runWaitingRss({ quick }),
  'dbos-reference': (quick: boolean) => runDbosReference({ quick }),
  'keel-postgres': (quick: boolean) => runKeelPostgres({ quick }),
  sandbox: (quick: boolean) => runSandboxBench({ quick }),
  'model-gateway': (quick: boolean) => runModelGateway({ quick }),
} as const;
type ScenarioName = keyof typeof SCENARIOS;

/**
 * The order they run in: the fsync ceiling is measured again at the end, since the disk's fsync
 * time drifts.
 */
const PLAN: Array<{
  key: keyof BenchResults['scenarios'];
  scenario: ScenarioName;
  needsPostgres?: true;
}> = [
  { key: 'fsyncBefore', scenario: 'fsync-ceiling' },
  { key: 'throughputStore', scenario: 'throughput-store' },
  { key: 'throughputHttp', scenario: 'throughput-http' },
  { key: 'latencyAlone', scenario: 'latency-alone' },
  { key: 'waitingRss', scenario: 'waiting-rss' },
  { key: 'dbosReference', scenario: 'dbos-reference', needsPostgres: true },
  { key: 'keelPostgres', scenario: 'keel-postgres', needsPostgres: true },
  { key: 'modelGateway', scenario: 'model-gateway' },
  { key: 'fsyncAfter', scenario: 'fsync-ceiling' },
];

/**
 * A scenario that takes longer than this is stuck: the whole bench must stay under five minutes.
 */
const SCENARIO_TIMEOUT_MS = 120_000;
const RESULTS_PATH = join(fileURLToPath(new URL('.', import.meta.url)), 'RESULTS.md');

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const childScenario = flagValue('--scenario');

if (childScenario !== undefined) await runChild(childScenario as ScenarioName, flagValue('--out'));
else if (flagValue('--only') === 'sandbox') await runSandboxOnly();
else await runAll();

// Its own RESULTS.md section, refreshed alone with `npm run bench -- --only sandbox`.
async function sandboxSection(dir: string): Promise<string> {
  const out = join(dir, 'sandbox.json');
  await runInChild('sandbox', out);
  return spliceSandboxSection('', JSON.parse(readFileSync(out, 'utf8')));
}

async function runSandboxOnly(): Promise<void> {
  const dir = makeTempDir();
  try {
    const section = await sandboxSection(dir);
    if (quick) process.stdout.write(`\n${section}\n`);
    else
      writeFileSync(
        RESULTS_PATH,
        spliceSandboxSection(
          readFileSync(RESULTS_PATH, 'utf8'),
          JSON.parse(readFileSync(join(dir, 'sandbox.json'), 'utf8')),
        ),
      );
  } finally {
    removeDir(dir);
  }
}

async function runChild(name: ScenarioName, out: string | undefined): Promise<void> {
  const scenario = SCENARIOS[name];
  if (scenario === undefined || out === undefined)
    throw new Error(`unknown scenario ${name} or missing --out`);
  const result = await scenario(quick);
  writeFileSync(out, JSON.stringify(result));
}

async function runAll(): Promise<void> {
  const started = Date.now();
  const machine = machineInfo();
  progress(
    `Keel bench${quick ? ' (quick smoke run: figures are not recorded)' : ''}; each scenario runs in a child process`,
  );
  const dir = makeTempDir();
  const scenarios: Partial<BenchResults['scenarios']> = {};
  const postgresSkip = await postgresSkipReason();
  let sandbox = '';
  try {
    for (const { key, scenario, needsPostgres } of PLAN) {
      if (needsPostgres === true && postgresSkip !== undefined) {
        progress(`skipping ${scenario}: ${postgresSkip.reason}`);
        (scenarios as Record<string, unknown>)[key] = postgresSkip;
        continue;
      }
      const out = join(dir, `${key}.json`);
      await runInChild(scenario, out);
      (scenarios as Record<string, unknown>)[key] = JSON.parse(readFileSync(out, 'utf8'));
    }
    sandbox = await sandboxSection(dir);
  } finally {
    removeDir(dir);
  }
  const results: BenchResults = {
    date: new Date().toISOString(),
    quick,
    durationSeconds: Math.round((Date.now() - started) / 1000),
    machine,
    git: gitDescription(),
    scenarios: scenarios as BenchResults['scenarios'],
  };
  const report = `${renderReport(results)}\n${sandbox}`;
  if (quick) {
    process.stdout.write(`\n${report}\n`);
    progress('quick run: RESULTS.md left as it was');
  } else {
    writeFileSync(
      RESULTS_PATH,
      `${report}${keptSections(readFileSync(RESULTS_PATH, 'utf8'), report)}`,
    );
    progress(`wrote ${RESULTS_PATH} in ${results.durationSeconds} s`);
  }
}

/**
 * The marked sections of the previous RESULTS.md that this run does not write (`<!-- name section
 * ... -->` up to `<!-- end of name section -->`: the isolation and scheduler benches, before/after
 * records), so a full bench run refreshes its own figures without erasing theirs.
 */
function keptSections(previous: string, report: string): string {
  const kept: string[] = [];
  for (const match of previous.matchAll(
    /^<!-- ([a-z0-9 -]+?) section\b[^\n]*-->\n[\s\S]*?^<!-- end of \1 section -->\n?/gm,
  )) {
    if (!report.includes(`<!-- end of ${match[1]} section -->`))
      kept.push(match[0].endsWith('\n') ? match[0] : `${match[0]}\n`);
  }
  return kept.length === 0 ? '' : `\n${kept.join('\n')}`;
}

/**
 * Undefined when the bench's Postgres answers; otherwise why the scenarios that need it are
 * skipped.
 */
async function postgresSkipReason(): Promise<SkippedScenario | undefined> {
  if (!PLAN.some((step) => step.needsPostgres === true)) return undefined;
  const server = await postgresAvailability();
  if (server.ok) {
    progress(
      `Postgres ${server.serverVersion} answers (synchronous_commit=${server.synchronousCommit}): its scenarios will run`,
    );
    return undefined;
  }
  return { skipped: true, reason: server.reason };
}

function runInChild(scenario: ScenarioName, out: string): Promise<void> {
  const script = fileURLToPath(import.meta.url);
  const childArgs = [
    '--expose-gc',
    script,
    '--scenario',
    scenario,
    '--out',
    out,
    ...(quick ? ['--quick'] : []),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, childArgs, { stdio: 'inherit' });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`scenario ${scenario} took longer than ${SCENARIO_TIMEOUT_MS} ms`));
    }, SCENARIO_TIMEOUT_MS);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`scenario ${scenario} exited with ${signal ?? code}`));
    });
  });
}

function flagValue(flag: string): string | undefined {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
}
