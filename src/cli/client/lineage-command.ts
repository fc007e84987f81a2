// `keel runs rerun|reset|fork`: new runs made from a run, over POST /v1/runs/:id/rerun|reset|fork.
// Each prints the new run's id and where it came from (or the run as JSON with --json); flag and
// exit-code rules are the CLI kit's. The server decides what may be copied; nothing here guesses.
import type { ParseArgsOptionsConfig } from 'node:util';
import { expectPositionals, intFlag, jsonArgument } from '../kit/args.ts';
import { connect, parseClientFlags as parse } from '../kit/client.ts';
import { EXIT_OK, out, printJson, UsageError, type CliIo } from '../kit/output.ts';
import { formatLineage } from './format.ts';
import type { CopyRunBody, Run } from './http-client.ts';

export const LINEAGE_USAGE = `  rerun <id> [--idempotency-key <k>]
                              a new run of the same agent and input (the run's version if
                              served, else the newest)
  reset <id> --position <n> [--idempotency-key <k>]
                              a new run reusing the ended run's journal through position n
                              (its effects are not executed again) and running on from there
  fork <id> [--position <n>] [--input <json>] [--agent-version <v>] [--idempotency-key <k>]
                              a reset (or, without --position, a rerun) with another input
                              and/or agent version`;

const KEY = { 'idempotency-key': { type: 'string' } } as const satisfies ParseArgsOptionsConfig;
const POSITION = { position: { type: 'string' } } as const satisfies ParseArgsOptionsConfig;

function printNewRun(io: CliIo, run: Run, json: boolean | undefined): number {
  if (json) printJson(io, run);
  else out(io, `${run.id}\t${run.agent}@${run.agentVersion}\t${formatLineage(run) ?? ''}`);
  return EXIT_OK;
}

function withKey(body: CopyRunBody, key: string | undefined): CopyRunBody {
  return key === undefined ? body : { ...body, idempotencyKey: key };
}

export async function rerun(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, KEY);
  const [id = ''] = expectPositionals(positionals, ['id']);
  const run = await connect(values, io.env).runs.rerun(id, withKey({}, values['idempotency-key']));
  return printNewRun(io, run, values.json);
}

export async function reset(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, { ...KEY, ...POSITION });
  const [id = ''] = expectPositionals(positionals, ['id']);
  const position = intFlag(values.position, '--position', 0);
  if (position === undefined)
    throw new UsageError('reset needs --position <n> (a journal position: see keel runs steps)');
  const run = await connect(values, io.env).runs.reset(
    id,
    withKey({ position }, values['idempotency-key']) as { position: number },
  );
  return printNewRun(io, run, values.json);
}

export async function fork(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {
    ...KEY,
    ...POSITION,
    input: { type: 'string' },
    'agent-version': { type: 'string' },
  });
  const [id = ''] = expectPositionals(positionals, ['id']);
  const body: CopyRunBody = {};
  const position = intFlag(values.position, '--position', 0);
  if (position !== undefined) body.position = position;
  if (values.input !== undefined) body.input = jsonArgument(values.input, '--input');
  if (values['agent-version'] !== undefined) body.agentVersion = values['agent-version'];
  const run = await connect(values, io.env).runs.fork(id, withKey(body, values['idempotency-key']));
  return printNewRun(io, run, values.json);
}
