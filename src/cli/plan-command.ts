// `keel plan <scenario.json> [--json]`: reads a scenario file, runs the capacity planner on it, and prints the
// report (or the same numbers as JSON). Exit codes: 0 planned, 1 the file is unreadable, not JSON or not a valid
// scenario (each bad field and its reason on stderr), 2 usage. Writes only through `io`; never calls process.exit.
import { readFile, stat } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { formatPlanJson, formatReport, parseScenario, plan, ScenarioError } from '../planner/index.ts';

const EXIT_OK = 0;
const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;
/** A scenario is a few kilobytes; refusing anything larger keeps a wrong path (a log, a dump) from being read whole. */
export const SCENARIO_MAX_BYTES = 1024 * 1024;

export const PLAN_USAGE = `usage: keel plan <scenario.json> [--json]

  Computes what saturates first for the workload in <scenario.json>: one table per section with the formula
  behind every figure, the bottleneck marked, and a one-line recommendation. Fields: see the README.

options:
  --json   print the same numbers as JSON (infinite figures as "Infinity")
  --help   show this text

exit codes: 0 planned, 1 unreadable or invalid scenario, 2 usage error`;

export interface PlanCommandIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export async function runPlanCommand(argv: string[], io: PlanCommandIo): Promise<number> {
  if (argv.some((arg) => arg === '--live' || arg.startsWith('--live='))) {
    return usage(io, '--live is not available yet: it needs the metrics endpoint of a running Keel, which does not exist yet');
  }
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } }, allowPositionals: true, strict: true });
  } catch (error) {
    return usage(io, error instanceof Error ? error.message : String(error));
  }
  if (parsed.values.help) {
    io.stdout.write(`${PLAN_USAGE}\n`);
    return EXIT_OK;
  }
  const [file, ...extra] = parsed.positionals;
  if (file === undefined) return usage(io, 'expected <scenario.json>');
  if (extra.length > 0) return usage(io, `expected one scenario file, got ${parsed.positionals.length}: ${parsed.positionals.join(' ')}`);

  const input = await readScenarioFile(file);
  if ('problem' in input) return fail(io, input.problem);
  let result;
  try {
    result = plan(parseScenario(input.value));
  } catch (error) {
    if (!(error instanceof ScenarioError)) throw error;
    return fail(io, `${file} is not a valid scenario:\n${error.issues.map((i) => `  ${i.path}: ${i.reason}`).join('\n')}`);
  }
  io.stdout.write(parsed.values.json ? formatPlanJson(result) : formatReport(result, { title: file }));
  return EXIT_OK;
}

async function readScenarioFile(file: string): Promise<{ value: unknown } | { problem: string }> {
  let text: string;
  try {
    const { size } = await stat(file);
    if (size > SCENARIO_MAX_BYTES) return { problem: `${file} is ${size} bytes; a scenario may be at most ${SCENARIO_MAX_BYTES}` };
    text = await readFile(file, 'utf8');
  } catch (error) {
    return { problem: `cannot read ${file}: ${error instanceof Error ? error.message : String(error)}` };
  }
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (error) {
    return { problem: `${file} is not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}

function fail(io: PlanCommandIo, message: string): number {
  io.stderr.write(`keel plan: ${message}\n`);
  return EXIT_FAILURE;
}

function usage(io: PlanCommandIo, message: string): number {
  io.stderr.write(`keel plan: ${message}\n${PLAN_USAGE}\n`);
  return EXIT_USAGE;
}
