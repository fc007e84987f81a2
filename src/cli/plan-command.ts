// `keel plan <scenario.json> [--json]`: reads a scenario file, runs the capacity planner on it, and
// prints the report (or the same numbers as JSON). With `--live` the workload's rates and durations
// are measured from a running Keel's runs API instead (environment and capacity still come from the
// file) and printed next to the file's. Exit codes: 0 planned, 1 the file is unreadable, not JSON
// or not a valid scenario (each bad field and its reason on stderr) or Keel could not be measured,
// 2 usage (the message, then the usage text). Flags and the client come from the CLI kit
// (src/cli/kit/). Writes only through `io`; never calls process.exit.
import { readFile, stat } from 'node:fs/promises';
import { ApiError, ConnectionError, ProtocolError } from './client/http-client.ts';
import { HELP_FLAG, intFlag, parseFlags } from './kit/args.ts';
import { CLIENT_FLAGS, connect, DEFAULT_KEEL_URL } from './kit/client.ts';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError, type CliIo } from './kit/output.ts';
import { cell } from '../planner/display.ts';
import type { Unit } from '../planner/formula.ts';
import {
  formatPlanJson,
  formatReport,
  parseScenario,
  plan,
  ScenarioError,
  type Scenario,
} from '../planner/index.ts';
import {
  LIVE_WINDOW_SECONDS_DEFAULT,
  LIVE_WINDOW_SECONDS_MAX,
  measureWorkload,
  type MeasuredWorkload,
} from '../planner/live.ts';

/**
 * A scenario is a few kilobytes; refusing anything larger keeps a wrong path (a log, a dump) from
 * being read whole.
 */
export const SCENARIO_MAX_BYTES = 1024 * 1024;

const NO_ENV_MEASUREMENT =
  'environment memory cannot be measured yet (Keel has no sandbox plane), so a scenario file must provide workload.env and capacity';

export const PLAN_USAGE = `usage: keel plan <scenario.json> [--json]
       keel plan --live <scenario.json> [--url <url>] [--key <key>] [--window-seconds <n>] [--json]

  Computes what saturates first for the workload in <scenario.json>: one table per section with the formula
  behind every figure, the bottleneck marked, and a one-line recommendation. Fields: see docs/guides/planner.md.

  With --live, the workload's arrivalPerSec, roundsPerTask, modelSecondsPerRound and toolSecondsPerRound are
  measured from the runs a running Keel created in the last --window-seconds (only the API key's tenant is
  visible), shown next to the file's values, and planned; workload.env and capacity still come from the file.

options:
  --json                  print the same numbers as JSON (infinite figures as "Infinity")
  --live                  measure the workload from a running Keel
  --url <url>             with --live: Keel's API (default: $KEEL_URL, else ${DEFAULT_KEEL_URL})
  --key <key>             with --live: API key (default: $KEEL_API_KEY)
  --window-seconds <n>    with --live: how far back to look (default ${LIVE_WINDOW_SECONDS_DEFAULT}, at most ${LIVE_WINDOW_SECONDS_MAX})
  --help                  show this text

exit codes: 0 planned, 1 unreadable or invalid scenario, or Keel could not be measured, 2 usage error`;

/**
 * The kit's CliIo; `env` (where --live reads KEEL_URL and KEEL_API_KEY) is process.env when absent.
 */
export type PlanCommandIo = Omit<CliIo, 'env'> & { env?: NodeJS.ProcessEnv };

interface LiveOptions {
  url: string | undefined;
  key: string | undefined;
  windowSeconds: string | undefined;
  json: boolean;
}

export async function runPlanCommand(argv: string[], io: PlanCommandIo): Promise<number> {
  try {
    return await planCommand(argv, io);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`keel plan: ${error.message}\n${PLAN_USAGE}\n`);
    return EXIT_USAGE;
  }
}

const PLAN_FLAGS = {
  ...CLIENT_FLAGS,
  ...HELP_FLAG,
  live: { type: 'boolean', default: false },
  'window-seconds': { type: 'string' },
} as const;

async function planCommand(argv: string[], io: PlanCommandIo): Promise<number> {
  const parsed = parseFlags(argv, PLAN_FLAGS);
  const { values } = parsed;
  if (values.help) {
    io.stdout.write(`${PLAN_USAGE}\n`);
    return EXIT_OK;
  }
  if (
    !values.live &&
    (values.url !== undefined || values.key !== undefined || values['window-seconds'] !== undefined)
  ) {
    throw new UsageError('--url, --key and --window-seconds only go with --live');
  }
  const [file, ...extra] = parsed.positionals;
  if (extra.length > 0)
    throw new UsageError(
      `expected one scenario file, got ${parsed.positionals.length}: ${parsed.positionals.join(' ')}`,
    );
  if (values.live) {
    if (file === undefined)
      throw new UsageError(`--live needs <scenario.json>: ${NO_ENV_MEASUREMENT}`);
    return runLive(
      file,
      {
        url: values.url,
        key: values.key,
        windowSeconds: values['window-seconds'],
        json: values.json,
      },
      io,
    );
  }
  if (file === undefined) throw new UsageError('expected <scenario.json>');

  const scenario = await loadScenario(file);
  if ('problem' in scenario) return fail(io, scenario.problem);
  const result = plan(scenario.value);
  io.stdout.write(values.json ? formatPlanJson(result) : formatReport(result, { title: file }));
  return EXIT_OK;
}

async function runLive(file: string, options: LiveOptions, io: PlanCommandIo): Promise<number> {
  const windowSeconds =
    intFlag(options.windowSeconds, '--window-seconds', 1, LIVE_WINDOW_SECONDS_MAX) ??
    LIVE_WINDOW_SECONDS_DEFAULT;
  const client = connect(options, io.env ?? process.env);
  const baseUrl = client.baseUrl;

  const loaded = await loadScenario(file);
  if ('problem' in loaded) return fail(io, loaded.problem);
  const scenario = loaded.value;
  if (scenario.capacity === undefined)
    return fail(io, `${file} has no capacity section: ${NO_ENV_MEASUREMENT}`);

  let measured: MeasuredWorkload;
  try {
    measured = await measureWorkload(
      {
        listRuns: (query) => client.runs.list(query),
        listSteps: (runId) => client.runs.steps(runId),
      },
      windowSeconds,
      new Date(),
    );
  } catch (error) {
    if (
      !(
        error instanceof ApiError ||
        error instanceof ConnectionError ||
        error instanceof ProtocolError
      )
    )
      throw error;
    const hint =
      error instanceof ApiError && error.status === 401
        ? ' (check the API key: KEEL_API_KEY or --key)'
        : '';
    return fail(io, `cannot measure Keel at ${baseUrl}: ${error.message}${hint}`);
  }
  const { arrivalPerSec, roundsPerTask, modelSecondsPerRound, toolSecondsPerRound } = measured;
  const result = plan({
    ...scenario,
    workload: {
      arrivalPerSec,
      roundsPerTask,
      modelSecondsPerRound,
      toolSecondsPerRound,
      env: scenario.workload.env,
    },
  });
  if (options.json) {
    const planJson = JSON.parse(formatPlanJson(result)) as unknown;
    io.stdout.write(
      `${JSON.stringify({ measured, planned: scenario.workload, plan: planJson }, null, 2)}\n`,
    );
  } else {
    io.stdout.write(
      `${formatMeasured(measured, scenario, baseUrl)}\n${formatReport(result, { title: `${file}, workload measured at ${baseUrl}` })}`,
    );
  }
  return EXIT_OK;
}

const MEASURED_FIELDS = [
  ['arrivalPerSec', 'tasks/s'],
  ['roundsPerTask', 'calls'],
  ['modelSecondsPerRound', 's'],
  ['toolSecondsPerRound', 's'],
] as const satisfies readonly (readonly [keyof MeasuredWorkload['formulas'], Unit])[];

/**
 * The "measured vs planned" table: each measured field, the file's value, and the formula behind
 * the measurement.
 */
function formatMeasured(m: MeasuredWorkload, scenario: Scenario, baseUrl: string): string {
  const env = scenario.workload.env;
  const rows = [
    ['field', 'measured', 'planned', 'source'],
    ...MEASURED_FIELDS.map(([field, unit]) => [
      field,
      cell(m[field], unit),
      cell(scenario.workload[field], unit),
      m.formulas[field],
    ]),
    [
      'env',
      'not measured',
      `${env.policy}, ${cell(env.memoryGiB, 'GiB')}`,
      'scenario file (no sandbox plane yet)',
    ],
  ];
  const widths = [0, 1, 2].map((c) => Math.max(...rows.map((r) => r[c]!.length)));
  const lines = [
    `== Measured vs planned: ${baseUrl}, ${m.since} to ${m.until} (${m.windowSeconds} s) ==`,
    `  ${m.runsSampled} runs created, ${m.finishedRunsSampled} finished, ${m.modelCallsTimed} model calls timed`,
    ...rows.map(
      (r) =>
        `  ${r[0]!.padEnd(widths[0]!)}  ${r[1]!.padStart(widths[1]!)}  ${r[2]!.padStart(widths[2]!)}  ${r[3]}`,
    ),
    ...m.notes.map((n) => `  note: ${n}`),
  ];
  return `${lines.join('\n')}\n`;
}

/** Reads, parses and validates a scenario file, or says what is wrong with it. */
async function loadScenario(file: string): Promise<{ value: Scenario } | { problem: string }> {
  const input = await readScenarioFile(file);
  if ('problem' in input) return input;
  try {
    return { value: parseScenario(input.value) };
  } catch (error) {
    if (!(error instanceof ScenarioError)) throw error;
    return {
      problem: `${file} is not a valid scenario:\n${error.issues.map((i) => `  ${i.path}: ${i.reason}`).join('\n')}`,
    };
  }
}

async function readScenarioFile(file: string): Promise<{ value: unknown } | { problem: string }> {
  let text: string;
  try {
    const { size } = await stat(file);
    if (size > SCENARIO_MAX_BYTES)
      return {
        problem: `${file} is ${size} bytes; a scenario may be at most ${SCENARIO_MAX_BYTES}`,
      };
    text = await readFile(file, 'utf8');
  } catch (error) {
    return {
      problem: `cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (error) {
    return {
      problem: `${file} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

function fail(io: PlanCommandIo, message: string): number {
  io.stderr.write(`keel plan: ${message}\n`);
  return EXIT_FAILURE;
}
