// `keel secrets …`: the tenant's secrets — create one, rotate it, list names and versions, delete
// one — with a tenant key holding the admin scope (--key, else $KEEL_API_KEY). A value is read from
// a file (--from-file, `-` for stdin), never taken as an argument: a command line is readable by
// every user of the host. No command ever prints a value (the API never returns one).
import { readFileSync } from 'node:fs';
import { onePositional as one } from '../kit/args.ts';
import { clientFlagsUsage, connect, parseClientFlags as parse } from '../kit/client.ts';
import { dispatch, type Subcommand } from '../kit/dispatch.ts';
import { show, UsageError, type CliIo } from '../kit/output.ts';
import { formatTable } from './format.ts';

export const SECRETS_USAGE = `usage: keel secrets <command> [options]

commands:
  create <name> --from-file <path|->   store a secret (encrypted at rest); use it as secret:<name>
  rotate <name> --from-file <path|->   replace its value: a new version, used at once, no restart
  list                                 the tenant's secrets: names, versions, times (never values)
  delete <name>                        delete a secret
  help                                 show this text

options:
  --from-file <path>  read the value from this file (- : standard input); one trailing newline is dropped

${clientFlagsUsage('KEEL_API_KEY', 'API key with the admin scope')}

A value is never an argument (command lines are visible to every user of the host), and no command prints
one. The server needs KEEL_SECRETS_KEY (see docs/guides/security.md).

exit codes: 0 success, 1 request failed, 2 usage error`;

const FLAGS = { 'from-file': { type: 'string' } } as const;

interface Secret {
  name: string;
  version: number;
  createdAt: string;
  updatedAt: string;
}

function valueFrom(path: string | undefined): string {
  if (path === undefined)
    throw new UsageError(
      'give the value with --from-file <path> (or - for standard input), never as an argument',
    );
  const text = readFileSync(path === '-' ? 0 : path, 'utf8');
  const value = text.endsWith('\n') ? text.slice(0, -1) : text;
  if (value === '') throw new UsageError(`the value read from ${path} is empty`);
  return value;
}

const SUBCOMMANDS: Record<string, Subcommand> = {
  async create(args, io) {
    const { values, positionals } = parse(args, FLAGS);
    const name = one(positionals, 'name');
    const value = valueFrom(values['from-file']);
    const client = connect(values, io.env, 'KEEL_API_KEY');
    const created = await client.request<{ secret: Secret }>('POST', '/v1/secrets', {
      body: { name, value },
    });
    return show(
      io,
      values.json,
      created,
      () => `created secret:${created.secret.name} (version 1)`,
    );
  },
  async rotate(args, io) {
    const { values, positionals } = parse(args, FLAGS);
    const name = one(positionals, 'name');
    const value = valueFrom(values['from-file']);
    const client = connect(values, io.env, 'KEEL_API_KEY');
    const rotated = await client.request<{ secret: Secret }>(
      'POST',
      `/v1/secrets/${encodeURIComponent(name)}/rotate`,
      { body: { value } },
    );
    return show(
      io,
      values.json,
      rotated,
      () => `rotated secret:${rotated.secret.name} to version ${rotated.secret.version}`,
    );
  },
  async list(args, io) {
    const { values, positionals } = parse(args, FLAGS);
    if (positionals.length > 0)
      throw new UsageError(`list takes no positional arguments, got ${positionals.join(' ')}`);
    const client = connect(values, io.env, 'KEEL_API_KEY');
    const page = await client.request<{ secrets: Secret[] }>('GET', '/v1/secrets');
    return show(io, values.json, page, () =>
      page.secrets.length === 0
        ? 'no secrets'
        : formatTable(
            ['NAME', 'VERSION', 'CREATED', 'UPDATED'],
            page.secrets.map((s) => [s.name, String(s.version), s.createdAt, s.updatedAt]),
          ),
    );
  },
  async delete(args, io) {
    const { values, positionals } = parse(args, FLAGS);
    const name = one(positionals, 'name');
    const client = connect(values, io.env, 'KEEL_API_KEY');
    const deleted = await client.request<{ deleted: string }>(
      'DELETE',
      `/v1/secrets/${encodeURIComponent(name)}`,
    );
    return show(io, values.json, deleted, () => `deleted secret:${deleted.deleted}`);
  },
};

/**
 * Runs `keel secrets <argv…>` and returns the exit code.
 *
 * @example
 * process.exitCode = await runSecretsCommand(['list'], { stdout: process.stdout, stderr: process.stderr, env: process.env });
 */
export async function runSecretsCommand(argv: string[], io: CliIo): Promise<number> {
  return dispatch('secrets', SECRETS_USAGE, SUBCOMMANDS, argv, io);
}
