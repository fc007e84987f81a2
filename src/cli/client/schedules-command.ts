// `keel schedules …`: the CLI over Keel's /v1/schedules API. Flags, output and exit codes (0
// success, 1 failed request, 2 usage) are the CLI kit's (src/cli/kit/); settings come only from
// flags and `io.env`; Keel is reached only through KeelHttpClient; everything is written through
// `io`.
import type { ParseArgsOptionsConfig } from 'node:util';
import type { CreateScheduleRequest, Fire, Schedule } from '../../client/index.ts';
import { intFlag, onePositional as one } from '../kit/args.ts';
import { clientFlagsUsage, connect, parseClientFlags as parse } from '../kit/client.ts';
import { dispatch, type Subcommand } from '../kit/dispatch.ts';
import { show, UsageError, type CliIo } from '../kit/output.ts';
import { formatDateTime, formatTable } from './format.ts';

const int = (value: string | undefined, flag: string): number | undefined =>
  intFlag(value, flag, 0);

export const SCHEDULES_USAGE = `usage: keel schedules <command> [options]

commands:
  create --agent <agent> (--cron '<expr>' | --every-ms <n>) --tz <IANA zone>
         [--input <json>] [--name <n>] [--overlap allow|skip|buffer_one|buffer_all|cancel_other]
         [--catchup-ms <n>] [--start <iso>] [--end <iso>] [--webhook <url>] [--priority interactive|batch]
                              create a schedule and print it
  update <id> [the options of create]
                              edit a schedule (its version goes up; runs already created are untouched)
  get <id>                    show one schedule
  list [--limit <n>] [--cursor <c>]
  delete <id>
  pause <id> | resume <id>    stop / restart scheduled fires (missed ones are caught up within the window)
  trigger <id>                fire now (the overlap policy applies)
  backfill <id> --from <iso> --to <iso>
                              run the fires of a past range that did not run
  fires <id> [--status <s>] [--limit <n>]
                              the schedule's history: every fire and its outcome, newest first
  events <id> [--after <seq>] [--limit <n>]
                              what happened to the schedule's fires, in order
  help                        show this text

${clientFlagsUsage()}

exit codes: 0 success, 1 request failed, 2 usage error`;

const SCHEDULE_FLAGS = {
  agent: { type: 'string' },
  cron: { type: 'string' },
  'every-ms': { type: 'string' },
  tz: { type: 'string' },
  input: { type: 'string' },
  name: { type: 'string' },
  overlap: { type: 'string' },
  'catchup-ms': { type: 'string' },
  start: { type: 'string' },
  end: { type: 'string' },
  webhook: { type: 'string' },
  priority: { type: 'string' },
} as const satisfies ParseArgsOptionsConfig;

/** The fields that hold a value (a flag not given is left out of the request). */
function defined<T extends Record<string, unknown>>(
  fields: T,
): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as never;
}

/** The request body from the schedule flags given (only those: an update changes nothing else). */
function scheduleBody(v: Record<string, string | boolean | undefined>): Record<string, unknown> {
  const s = (k: string) => v[k] as string | undefined;
  const body: Record<string, unknown> = {};
  if (s('cron') !== undefined) body.cron = s('cron');
  if (s('every-ms') !== undefined) body.intervalMs = int(s('every-ms'), '--every-ms');
  if (s('tz') !== undefined) body.timeZone = s('tz');
  if (s('name') !== undefined) body.name = s('name');
  if (s('overlap') !== undefined) body.overlap = s('overlap');
  if (s('catchup-ms') !== undefined) body.catchupWindowMs = int(s('catchup-ms'), '--catchup-ms');
  if (s('start') !== undefined) body.startAt = s('start');
  if (s('end') !== undefined) body.endAt = s('end');
  if (s('webhook') !== undefined) body.webhookUrl = s('webhook');
  if (s('agent') !== undefined || s('input') !== undefined || s('priority') !== undefined) {
    if (s('agent') === undefined)
      throw new UsageError(
        '--input and --priority need --agent (the run template is replaced as a whole)',
      );
    let input: unknown = null;
    if (s('input') !== undefined) {
      try {
        input = JSON.parse(s('input')!);
      } catch (error) {
        throw new UsageError(`--input is not valid JSON (${(error as Error).message})`);
      }
    }
    body.template = {
      agent: s('agent'),
      input,
      ...(s('priority') !== undefined ? { priority: s('priority') } : {}),
    };
  }
  return body;
}

function formatSchedule(s: Schedule): string {
  const rows: Array<[string, unknown]> = [
    ['id', s.id],
    ['name', s.name ?? '-'],
    ['version', s.version],
    ['when', s.cron ?? `every ${String(s.intervalMs)} ms`],
    ['time zone', s.timeZone],
    ['paused', s.paused],
    ['overlap', s.overlap],
    ['catch-up', `${String(s.catchupWindowMs)} ms`],
    ['agent', (s.template as { agent?: string })?.agent],
    ['next fire', formatDateTime(s.nextFireAt)],
    ['last success', formatDateTime(s.lastSuccessAt)],
    ['webhook', s.webhookUrl ?? '-'],
  ];
  return rows.map(([k, v]) => `${k.padEnd(13)}${String(v)}`).join('\n');
}

function formatFires(fires: Fire[]): string {
  if (fires.length === 0) return 'no fires';
  return formatTable(
    ['LOGICAL TIME', 'KIND', 'OUTCOME', 'RUN', 'VERSION'],
    fires.map((f) => [
      String(f.logicalTime),
      String(f.kind),
      String(f.status),
      String(f.runId ?? '-'),
      String(f.scheduleVersion),
    ]),
  );
}

const SUBCOMMANDS: Record<string, Subcommand> = {
  async create(args, io) {
    const { values, positionals } = parse(args, SCHEDULE_FLAGS);
    if (positionals.length > 0)
      throw new UsageError(`create takes no positional arguments, got ${positionals.join(' ')}`);
    if (values.agent === undefined || values.tz === undefined)
      throw new UsageError('create needs --agent and --tz');
    const s = await connect(values, io.env).schedules.create(
      scheduleBody(values) as unknown as CreateScheduleRequest,
    );
    return show(io, values.json, s, () => formatSchedule(s));
  },
  async update(args, io) {
    const { values, positionals } = parse(args, SCHEDULE_FLAGS);
    const id = one(positionals, 'id');
    const body = scheduleBody(values);
    // The API refuses an edit that changes nothing; say so before asking it.
    if (Object.keys(body).length === 0)
      throw new UsageError('nothing to change: give at least one of the options of create');
    const s = await connect(values, io.env).schedules.update(id, body);
    return show(io, values.json, s, () => formatSchedule(s));
  },
  async get(args, io) {
    const { values, positionals } = parse(args, {});
    const s = await connect(values, io.env).schedules.get(one(positionals, 'id'));
    return show(io, values.json, s, () => formatSchedule(s));
  },
  async list(args, io) {
    const { values } = parse(args, { limit: { type: 'string' }, cursor: { type: 'string' } });
    const page = await connect(values, io.env).schedules.list({
      ...defined({ limit: int(values.limit, '--limit'), cursor: values.cursor }),
    });
    return show(io, values.json, page, () =>
      page.schedules.length === 0
        ? 'no schedules'
        : formatTable(
            ['ID', 'NAME', 'WHEN', 'ZONE', 'PAUSED', 'NEXT FIRE'],
            page.schedules.map((s) => [
              s.id,
              String(s.name ?? '-'),
              String(s.cron ?? `every ${String(s.intervalMs)} ms`),
              String(s.timeZone),
              String(s.paused),
              formatDateTime(s.nextFireAt),
            ]),
          ) + (page.nextCursor ? `\nmore: --cursor ${page.nextCursor}` : ''),
    );
  },
  async delete(args, io) {
    const { values, positionals } = parse(args, {});
    const id = one(positionals, 'id');
    await connect(values, io.env).schedules.delete(id);
    return show(io, values.json, { deleted: id }, () => `deleted ${id}`);
  },
  async pause(args, io) {
    const { values, positionals } = parse(args, {});
    const s = await connect(values, io.env).schedules.pause(one(positionals, 'id'));
    return show(io, values.json, s, () => `paused ${s.id}`);
  },
  async resume(args, io) {
    const { values, positionals } = parse(args, {});
    const s = await connect(values, io.env).schedules.resume(one(positionals, 'id'));
    return show(
      io,
      values.json,
      s,
      () => `resumed ${s.id}; next fire ${formatDateTime(s.nextFireAt)}`,
    );
  },
  async trigger(args, io) {
    const { values, positionals } = parse(args, {});
    const fire = await connect(values, io.env).schedules.trigger(one(positionals, 'id'));
    return show(io, values.json, fire, () => `requested a fire at ${String(fire.logicalTime)}`);
  },
  async backfill(args, io) {
    const { values, positionals } = parse(args, {
      from: { type: 'string' },
      to: { type: 'string' },
    });
    if (values.from === undefined || values.to === undefined)
      throw new UsageError('backfill needs --from <iso> and --to <iso>');
    const result = await connect(values, io.env).schedules.backfill(one(positionals, 'id'), {
      from: values.from,
      to: values.to,
    });
    return show(
      io,
      values.json,
      result,
      () =>
        `${result.requested.length} of ${result.fireTimes.length} fires requested (the others ran already)`,
    );
  },
  async fires(args, io) {
    const { values, positionals } = parse(args, {
      status: { type: 'string' },
      limit: { type: 'string' },
    });
    const page = await connect(values, io.env).schedules.fires(one(positionals, 'id'), {
      ...defined({ status: values.status, limit: int(values.limit, '--limit') }),
    });
    return show(io, values.json, page, () => formatFires(page.fires));
  },
  async events(args, io) {
    const { values, positionals } = parse(args, {
      after: { type: 'string' },
      limit: { type: 'string' },
    });
    const events = await connect(values, io.env).schedules.events(one(positionals, 'id'), {
      ...defined({ after: int(values.after, '--after'), limit: int(values.limit, '--limit') }),
    });
    const page = { events };
    return show(io, values.json, page, () =>
      page.events.length === 0
        ? 'no events'
        : formatTable(
            ['SEQ', 'AT', 'EVENT', 'LOGICAL TIME', 'RUN'],
            page.events.map((e) => [
              String(e.seq),
              formatDateTime(e.at),
              e.type,
              e.data.logicalTime ?? '-',
              e.data.runId ?? '-',
            ]),
          ),
    );
  },
};

/**
 * Runs `keel schedules <argv…>` and returns the exit code.
 *
 * @example
 * process.exitCode = await runSchedulesCommand(['list'], { stdout: process.stdout, stderr: process.stderr, env: process.env });
 */
export async function runSchedulesCommand(argv: string[], io: CliIo): Promise<number> {
  return dispatch('schedules', SCHEDULES_USAGE, SUBCOMMANDS, argv, io);
}
