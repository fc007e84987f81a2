// `keel runs …`: the CLI over Keel's runs API — submit, inspect, follow, answer and cancel runs.
// Flags, output and exit codes are the CLI kit's (src/cli/kit/); Keel is reached only through
// KeelHttpClient. It never calls process.exit or touches process.stdout: everything goes through
// `io`, and the exit code is returned.
import { formatAttempts } from './attempts-format.ts';
import { readFile } from 'node:fs/promises';
import type { ParseArgsOptionsConfig } from 'node:util';
import { WHEN_LATE, type WhenLate } from '../../domain/admission.ts';
import { CANCEL_GRACE_MS_MAX } from '../../config/defaults.ts';
import { expectPositionals, intFlag, jsonArgument, positiveNumberFlag } from '../kit/args.ts';
import { clientFlagsUsage, connect, parseClientFlags as parse } from '../kit/client.ts';
import { dispatch, type Subcommand } from '../kit/dispatch.ts';
import {
  EXIT_FAILURE,
  EXIT_OK,
  isTty,
  out,
  printJson,
  UsageError,
  type CliIo,
} from '../kit/output.ts';
import {
  formatEventLine,
  formatToolOutput,
  formatOutcome,
  formatRun,
  formatRunTable,
  formatRunTree,
  formatStatusLine,
  formatStepIo,
  formatStepTable,
} from './format.ts';
import {
  type KeelHttpClient,
  ProtocolError,
  TERMINAL_RUN_STATUSES,
  type ListRunsQuery,
  type Run,
  type RunPage,
  type RunStatus,
  type SubmitRunBody,
} from './http-client.ts';
import type { ReconnectInfo } from '../../client/index.ts';
import { fork, LINEAGE_USAGE, rerun, reset } from './lineage-command.ts';
import { formatUnknownExecutions, migrate, resolve, unknownExecutions } from './runs-operations.ts';

/** `list --all` stops here rather than paging forever through a server that never says "done". */
const LIST_ALL_MAX_PAGES = 10_000;
const STATUS_TICK_MS = 100;
const PRIORITIES = ['interactive', 'batch'] as const;

export const RUNS_USAGE = `usage: keel runs <command> [options]

commands:
  submit <agent> [--input <json> | --input-file <path>] [--idempotency-key <k>]
         [--priority interactive|batch] [--max-steps <n>] [--max-tokens <n>]
         [--max-cost-usd <x>] [--deadline-ms <n>] [--when-late accept|refuse|batch] [--wait]
                              start a run and print its id; --wait follows it to the end
                              and exits 0 only if it succeeded; --when-late: what to do when
                              the run is expected to finish after its deadline
  get <id>                    show one run, with its attempts
  list [--status <s>] [--agent <a>] [--code <error code>] [--limit <n>] [--cursor <c>] [--all]
       [--rerun-of <id>]
                              list runs; --all follows every page; --rerun-of: a run's reruns
  cancel <id> [--grace <ms>]  ask a run to stop; --grace: how long its tool calls in flight
                              get to wrap up before they are aborted (0 to 3600000; default:
                              the agent's cancelGraceMs, else the server's KEEL_CANCEL_GRACE_MS)
  input <id> <key> <json>     answer a run waiting for input (a string needs JSON quotes: '"yes"')
  events <id> [--after <n>] [--no-follow]
                              print events live until the run ends; --no-follow prints what exists
  steps <id>                  show the run's steps as a timeline, each with a one-line
                              input → output summary (--json: the API's steps, previews included)
  show <id> [--io]            show one run and its steps; --io prints every step's whole
                              input and output (pretty JSON; exec as exit code, stdout, stderr);
                              each execution left unknown by a crash comes with the commands
                              that resolve it
  resolve <run> <execution> --as succeeded|failed|retry [--result <json>] [--error <message>]
                              decide the outcome of an unknown execution: retry runs it again,
                              succeeded takes --result as its result, failed fails the call
  migrate --agent <a> --from <version> --to <version>
                              move queued, never-started runs of a version to another one that a
                              process serves; prints how many moved and which had started
${LINEAGE_USAGE}
  tree <id> [--limit <n>]     show the run and its children, theirs and so on, indented: status,
                              agent and what each child does when its parent ends
  attempts <id>               show the run's attempts: each claim, its worker, times and how it
                              ended (a recovery after a crash is a new attempt, not a retry)
  help                        show this text

${clientFlagsUsage()}

exit codes: 0 success, 1 request failed or the run did not succeed, 2 usage error`;

/**
 * The in-place spinner line on a terminal: cleared before each event line is printed, redrawn
 * after.
 */
class StatusLine {
  readonly #stream: NodeJS.WritableStream;
  readonly #runId: string;
  readonly #startedAt = Date.now();
  readonly #timer: NodeJS.Timeout;
  #tick = 0;
  #events = 0;
  #last = 'connecting…';

  constructor(stream: NodeJS.WritableStream, runId: string) {
    this.#stream = stream;
    this.#runId = runId;
    this.#timer = setInterval(() => {
      this.#tick += 1;
      this.#draw();
    }, STATUS_TICK_MS);
    this.#draw();
  }

  print(target: NodeJS.WritableStream, line: string, last?: string): void {
    this.#stream.write('\r\x1b[2K');
    target.write(`${line}\n`);
    if (last !== undefined) {
      this.#events += 1;
      this.#last = last;
    }
    this.#draw();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#stream.write('\r\x1b[2K');
  }

  #draw(): void {
    const columns = (this.#stream as { columns?: number }).columns ?? 80;
    const state = {
      runId: this.#runId,
      tick: this.#tick,
      elapsedMs: Date.now() - this.#startedAt,
      events: this.#events,
      last: this.#last,
    };
    this.#stream.write(`\r\x1b[2K${formatStatusLine(state, columns)}`);
  }
}

interface FollowOptions {
  after: number | undefined;
  /**
   * human: event lines (+ status line on a TTY); ndjson: one JSON event per line; quiet: nothing.
   */
  mode: 'human' | 'ndjson' | 'quiet';
  io: CliIo;
}

function reconnectNote(info: ReconnectInfo): string {
  const reason =
    info.error instanceof Error ? info.error.message : 'the stream ended before the run did';
  return `connection lost (${reason}); resuming after event ${info.lastSeq} (attempt ${info.attempt}/${info.maxAttempts})`;
}

/**
 * Prints a run's events as they arrive until its terminal event; keel/client resumes the stream
 * after a dropped connection (each event once, in order), and the CLI says so on stderr.
 */
async function followEvents(
  client: KeelHttpClient,
  runId: string,
  options: FollowOptions,
): Promise<void> {
  const { io, mode } = options;
  const status =
    mode === 'human' && isTty(io.stderr) ? new StatusLine(io.stderr, runId) : undefined;
  try {
    const events = client.runs.events(runId, {
      ...(options.after === undefined ? {} : { after: options.after }),
      onReconnect: (info) =>
        status
          ? status.print(io.stderr, reconnectNote(info))
          : io.stderr.write(`${reconnectNote(info)}\n`),
      // A running tool's live output (exec's stdout and stderr) between the events.
      onToolOutput: (output) => {
        if (mode === 'ndjson') out(io, JSON.stringify({ type: 'tool.output', data: output }));
        else if (mode === 'human' && status) status.print(io.stdout, formatToolOutput(output));
        else if (mode === 'human') out(io, formatToolOutput(output));
      },
    });
    for await (const event of events) {
      if (mode === 'ndjson') out(io, JSON.stringify(event));
      else if (mode === 'human' && status)
        status.print(io.stdout, formatEventLine(event), event.type);
      else if (mode === 'human') out(io, formatEventLine(event));
    }
  } finally {
    status?.stop();
  }
}

async function readSubmitInput(values: {
  input?: string | undefined;
  'input-file'?: string | undefined;
}): Promise<unknown> {
  const file = values['input-file'];
  if (values.input !== undefined && file !== undefined)
    throw new UsageError('pass --input or --input-file, not both');
  if (values.input !== undefined) return jsonArgument(values.input, '--input');
  if (file === undefined) return {};
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(
      `cannot read --input-file ${file}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return jsonArgument(text, `--input-file ${file}`);
}

const SUBMIT_OPTIONS = {
  input: { type: 'string' },
  'input-file': { type: 'string' },
  'idempotency-key': { type: 'string' },
  priority: { type: 'string' },
  'max-steps': { type: 'string' },
  'max-tokens': { type: 'string' },
  'max-cost-usd': { type: 'string' },
  'deadline-ms': { type: 'string' },
  'when-late': { type: 'string' },
  wait: { type: 'boolean', default: false },
} as const satisfies ParseArgsOptionsConfig;

type SubmitValues = ReturnType<typeof parse<typeof SUBMIT_OPTIONS>>['values'];

async function submitBody(agent: string, values: SubmitValues): Promise<SubmitRunBody> {
  const body: SubmitRunBody = { agent, input: await readSubmitInput(values) };
  if (values['idempotency-key'] !== undefined) body.idempotencyKey = values['idempotency-key'];
  const priority = values.priority;
  if (priority !== undefined) {
    if (!PRIORITIES.some((p) => p === priority))
      throw new UsageError(`--priority must be one of ${PRIORITIES.join(', ')}, got '${priority}'`);
    body.priority = priority as SubmitRunBody['priority'];
  }
  const budget = {
    maxSteps: intFlag(values['max-steps'], '--max-steps', 1),
    maxTokens: intFlag(values['max-tokens'], '--max-tokens', 1),
    maxCostUsd: positiveNumberFlag(values['max-cost-usd'], '--max-cost-usd'),
    deadlineMs: intFlag(values['deadline-ms'], '--deadline-ms', 1),
  };
  const given = Object.entries(budget).filter(([, value]) => value !== undefined);
  if (given.length > 0) body.budget = Object.fromEntries(given);
  const whenLate = values['when-late'];
  if (whenLate !== undefined) {
    if (!WHEN_LATE.some((w) => w === whenLate))
      throw new UsageError(`--when-late must be one of ${WHEN_LATE.join(', ')}, got '${whenLate}'`);
    body.whenLate = whenLate as WhenLate;
  }
  return body;
}

async function submit(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, SUBMIT_OPTIONS);
  const [agent = ''] = expectPositionals(positionals, ['agent']);
  const body = await submitBody(agent, values);
  const client = connect(values, io.env);
  const run = await client.runs.create(body);
  if (!values.wait) {
    if (values.json) printJson(io, run);
    else out(io, run.id);
    return EXIT_OK;
  }
  if (!values.json) out(io, run.id);
  if (!TERMINAL_RUN_STATUSES.has(run.status))
    await followEvents(client, run.id, {
      after: undefined,
      mode: values.json ? 'quiet' : 'human',
      io,
    });
  const final = await client.runs.get(run.id);
  if (values.json) printJson(io, final);
  else out(io, formatOutcome(final));
  return final.status === 'succeeded' ? EXIT_OK : EXIT_FAILURE;
}

async function get(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {});
  const [id = ''] = expectPositionals(positionals, ['id']);
  const client = connect(values, io.env);
  const run: Run = await client.runs.get(id);
  if (values.json) printJson(io, run);
  else {
    out(io, formatRun(run));
    out(io, `attempts:\n${formatAttempts(await client.runs.attempts(id))}`);
  }
  return EXIT_OK;
}

async function listAllPages(client: KeelHttpClient, query: ListRunsQuery): Promise<RunPage> {
  const runs: Run[] = [];
  const seen = new Set<string>();
  let cursor = query.cursor;
  for (let page = 0; page < LIST_ALL_MAX_PAGES; page += 1) {
    const result = await client.runs.list(cursor === undefined ? query : { ...query, cursor });
    for (const run of result.runs) runs.push(run);
    if (result.nextCursor === null || result.nextCursor === undefined)
      return { runs, nextCursor: null };
    if (seen.has(result.nextCursor))
      throw new ProtocolError(
        `the server handed out cursor '${result.nextCursor}' twice; stopping to avoid a loop`,
      );
    seen.add(result.nextCursor);
    cursor = result.nextCursor;
  }
  throw new ProtocolError(
    `more than ${LIST_ALL_MAX_PAGES} pages of runs; narrow the list with --status or --agent`,
  );
}

async function list(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {
    status: { type: 'string' },
    agent: { type: 'string' },
    code: { type: 'string' },
    limit: { type: 'string' },
    cursor: { type: 'string' },
    all: { type: 'boolean', default: false },
    'rerun-of': { type: 'string' },
  });
  expectPositionals(positionals, []);
  const query: ListRunsQuery = {};
  if (values['rerun-of'] !== undefined) query.rerunOf = values['rerun-of'];
  if (values.status !== undefined) query.status = values.status as RunStatus; // the API refuses a bad one (400)
  if (values.agent !== undefined) query.agent = values.agent;
  if (values.code !== undefined) query.code = values.code;
  if (values.cursor !== undefined) query.cursor = values.cursor;
  const limit = intFlag(values.limit, '--limit', 1);
  if (limit !== undefined) query.limit = limit;
  const client = connect(values, io.env);
  const page = values.all ? await listAllPages(client, query) : await client.runs.list(query);
  if (values.json) {
    printJson(io, page);
  } else {
    out(io, formatRunTable(page.runs));
    if (page.nextCursor) io.stderr.write(`more runs: --cursor ${page.nextCursor} (or --all)\n`);
  }
  return EXIT_OK;
}

function statusOf(body: unknown): string | undefined {
  const status =
    typeof body === 'object' && body !== null ? (body as { status?: unknown }).status : undefined;
  return typeof status === 'string' ? status : undefined;
}

async function cancel(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, { grace: { type: 'string' } });
  const [id = ''] = expectPositionals(positionals, ['id']);
  const graceMs = intFlag(values.grace, '--grace', 0, CANCEL_GRACE_MS_MAX);
  const body = await connect(values, io.env).runs.cancel(
    id,
    graceMs === undefined ? {} : { graceMs },
  );
  const status = statusOf(body);
  if (values.json) printJson(io, body);
  else out(io, `cancel requested for ${id}${status === undefined ? '' : ` (status: ${status})`}`);
  return EXIT_OK;
}

async function input(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {});
  const [id = '', key = '', raw = ''] = expectPositionals(positionals, ['id', 'key', 'json-value']);
  const value = jsonArgument(raw, `the value for '${key}'`);
  const body = await connect(values, io.env).runs.sendInput(id, key, value);
  if (values.json) printJson(io, body);
  else out(io, `input '${key}' delivered to ${id}`);
  return EXIT_OK;
}

async function events(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {
    after: { type: 'string' },
    follow: { type: 'boolean', default: true },
  });
  const [id = ''] = expectPositionals(positionals, ['id']);
  const after = intFlag(values.after, '--after', 0);
  const client = connect(values, io.env);
  if (values.follow) {
    await followEvents(client, id, { after, mode: values.json ? 'ndjson' : 'human', io });
    return EXIT_OK;
  }
  const list = await client.runs.listEvents(id, { after: after ?? 0 });
  if (values.json) printJson(io, list);
  else for (const event of list) out(io, formatEventLine(event));
  return EXIT_OK;
}

async function steps(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {});
  const [id = ''] = expectPositionals(positionals, ['id']);
  const steps = await connect(values, io.env).runs.steps(id);
  if (values.json) printJson(io, { steps });
  else out(io, formatStepTable(steps));
  return EXIT_OK;
}

async function attempts(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {});
  const [id = ''] = expectPositionals(positionals, ['id']);
  const list = await connect(values, io.env).runs.attempts(id);
  if (values.json) printJson(io, { attempts: list });
  else out(io, formatAttempts(list));
  return EXIT_OK;
}

async function tree(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, { limit: { type: 'string' } });
  const [id = ''] = expectPositionals(positionals, ['id']);
  const limit = intFlag(values.limit, '--limit', 1);
  const body = await connect(values, io.env).runs.tree(id, limit === undefined ? {} : { limit });
  if (values.json) printJson(io, body);
  else out(io, formatRunTree(body));
  return EXIT_OK;
}

/**
 * `show <id> [--io]`: the run, then its steps table, or with --io each step in full (a preview in
 * the list is fetched whole from /steps/:seq); then every unknown execution of the run with the
 * commands that resolve it.
 */
async function show(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, { io: { type: 'boolean', default: false } });
  const [id = ''] = expectPositionals(positionals, ['id']);
  const client = connect(values, io.env);
  const run: Run = await client.runs.get(id);
  const steps = await client.runs.steps(id);
  if (values.io) {
    // One request at a time: a long run may hold many large steps.
    for (const [i, step] of steps.entries())
      if (step.inputTruncated === true || step.outputTruncated === true)
        steps[i] = await client.runs.step(id, step.seq);
  }
  if (values.json) {
    printJson(io, { run, steps, unknownExecutions: unknownExecutions(steps) });
    return EXIT_OK;
  }
  out(io, formatRun(run));
  out(io, '');
  if (!values.io) out(io, formatStepTable(steps));
  else if (steps.length === 0) out(io, 'no steps');
  else out(io, steps.map(formatStepIo).join('\n\n'));
  const hint = formatUnknownExecutions(id, steps);
  if (hint !== '') out(io, hint);
  return EXIT_OK;
}

const SUBCOMMANDS: Record<string, Subcommand> = {
  submit,
  get,
  list,
  cancel,
  input,
  events,
  steps,
  show,
  // Runs made from runs (lineage-command.ts).
  rerun,
  reset,
  fork,
  resolve,
  migrate,
  attempts,
  tree,
};

/**
 * Runs `keel runs <argv…>` (argv excludes `keel runs` itself) and returns the exit code.
 *
 * @example
 * process.exitCode = await runRunsCommand(process.argv.slice(3), { stdout: process.stdout, stderr: process.stderr, env: process.env });
 */
export async function runRunsCommand(argv: string[], io: CliIo): Promise<number> {
  return dispatch('runs', RUNS_USAGE, SUBCOMMANDS, argv, io);
}
