// The operator's verbs of `keel runs` that change a run from outside: `resolve` (decide the outcome
// of a tool execution left `unknown` by a crash) and `migrate` (move queued, never-started runs of an
// agent version to another served version), plus the hint `show` prints under a run that waits on
// an unknown execution. Keel is reached only through the HTTP client; nothing here exits or prints
// outside `io`.
import { expectPositionals, jsonArgument } from '../kit/args.ts';
import { parseClientFlags as parse, connect } from '../kit/client.ts';
import { EXIT_OK, out, printJson, UsageError, type CliIo } from '../kit/output.ts';
import type { Resolution as ClientResolution } from '../../client/index.ts';
import type { Step } from './http-client.ts';

const RESOLUTIONS = ['succeeded', 'failed', 'retry'] as const;

/** Quotes an argument for a POSIX shell when it needs it, so a printed command can be pasted. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9._:/@=-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** The steps of a run whose outcome is unknown: each needs an operator's decision. */
export function unknownExecutions(steps: Step[]): Step[] {
  return steps.filter((step) => step.status === 'unknown' && step.executionId !== undefined);
}

/**
 * Lines naming each unknown execution and the commands that resolve it, for `keel runs show`.
 * Empty when there is none.
 */
export function formatUnknownExecutions(runId: string, steps: Step[]): string {
  const unknown = unknownExecutions(steps);
  if (unknown.length === 0) return '';
  const lines = [
    `unknown executions (a crash hid their outcome; Keel will not re-run a side effect blindly):`,
  ];
  for (const step of unknown) {
    const id = shellWord(step.executionId!);
    const run = shellWord(runId);
    lines.push(
      `  #${step.seq} ${step.name}  execution ${step.executionId}`,
      `    it did not happen, run it again:  keel runs resolve ${run} ${id} --as retry`,
      `    it happened:                      keel runs resolve ${run} ${id} --as succeeded --result '<json>'`,
      `    it failed:                        keel runs resolve ${run} ${id} --as failed --error '<message>'`,
    );
  }
  return lines.join('\n');
}

function resolutionBody(values: {
  as?: string | undefined;
  result?: string | undefined;
  error?: string | undefined;
}): ClientResolution {
  const action = values.as;
  if (action === undefined)
    throw new UsageError(`--as is required: one of ${RESOLUTIONS.join(', ')}`);
  if (!RESOLUTIONS.some((r) => r === action))
    throw new UsageError(`--as must be one of ${RESOLUTIONS.join(', ')}, got '${action}'`);
  if (values.result !== undefined && action !== 'succeeded')
    throw new UsageError('--result goes with --as succeeded');
  if (values.error !== undefined && action !== 'failed')
    throw new UsageError('--error goes with --as failed');
  if (action === 'succeeded')
    return {
      action,
      result: values.result === undefined ? null : jsonArgument(values.result, '--result'),
    };
  if (action === 'failed')
    return values.error === undefined ? { action } : { action, error: { message: values.error } };
  return { action: 'retry' };
}

/** `keel runs resolve <run> <execution> --as succeeded|failed|retry [--result JSON] [--error MSG]` */
export async function resolve(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {
    as: { type: 'string' },
    result: { type: 'string' },
    error: { type: 'string' },
  });
  const [runId = '', executionId = ''] = expectPositionals(positionals, ['run', 'execution']);
  const body = resolutionBody(values);
  const run = await connect(values, io.env).runs.resolve(runId, executionId, body);
  if (values.json) printJson(io, run);
  else out(io, `execution ${executionId} resolved as ${body.action}; ${runId} is ${run.status}`);
  return EXIT_OK;
}

/** What POST /v1/runs/migrate-version answers. */
export interface MigrateVersionReport {
  agent: string;
  from: string;
  to: string;
  moved: number;
  movedRunIds: string[];
  /** Queued runs of the old version left where they were because their journal is not empty. */
  started: number;
  startedRunIds: string[];
}

/** `keel runs migrate --agent A --from 1 --to 2` */
export async function migrate(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {
    agent: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
  });
  expectPositionals(positionals, []);
  for (const flag of ['agent', 'from', 'to'] as const)
    if (values[flag] === undefined || values[flag] === '')
      throw new UsageError(`--${flag} is required`);
  const report = await connect(values, io.env).request<MigrateVersionReport>(
    'POST',
    '/v1/runs/migrate-version',
    { body: { agent: values.agent, from: values.from, to: values.to } },
  );
  if (values.json) {
    printJson(io, report);
    return EXIT_OK;
  }
  out(
    io,
    `moved ${report.moved} queued run${report.moved === 1 ? '' : 's'} of ${report.agent}@${report.from} to ${report.agent}@${report.to}`,
  );
  if (report.started > 0) {
    out(
      io,
      `left ${report.started} on ${report.agent}@${report.from}: they had started (their journal is not empty) and may only continue on the code that started them:`,
    );
    for (const id of report.startedRunIds) out(io, `  ${id}`);
    if (report.startedRunIds.length < report.started)
      out(io, `  … and ${report.started - report.startedRunIds.length} more`);
  }
  return EXIT_OK;
}
