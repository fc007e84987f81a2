// `keel policy …`: a tenant's tool policy — show it, or replace it with a JSON document (a file, or
// `-` for stdin). With a tenant key (--key, else $KEEL_API_KEY; admin scope to set) it is the
// caller's tenant's; with --tenant <id> the platform admin's (--key, else $KEEL_ADMIN_KEY).
import { readFileSync } from 'node:fs';
import { onePositional as one } from '../kit/args.ts';
import { clientFlagsUsage, connect, parseClientFlags as parse } from '../kit/client.ts';
import { dispatch, type Subcommand } from '../kit/dispatch.ts';
import { show, UsageError, type CliIo } from '../kit/output.ts';

export const POLICY_USAGE = `usage: keel policy <command> [options]

commands:
  get                         the tenant's tool policy (null: none)
  set <file.json | ->         replace it with this JSON document (- reads stdin)
  help                        show this text

options:
  --tenant <id>       act as the platform admin on this tenant (key: $KEEL_ADMIN_KEY)

A policy: { "allow": [...], "deny": [...], "maxRisk": "high", "maxCost": 1,
            "constraints": [{ "tool": "pay", "path": "amount", "maximum": 100, "approval": "required" }],
            "approval": { "tools": ["send_*"], "risk": "high", "costAbove": 0.5, "expiresAfterMs": 3600000 } }
(docs/guides/security.md). An agent's own policy (defineAgent({ policy })) applies too: the stricter wins.

${clientFlagsUsage('KEEL_API_KEY', 'API key (admin scope to set; with --tenant: the admin key)')}

exit codes: 0 success, 1 request failed, 2 usage error`;

const FLAGS = { tenant: { type: 'string' } } as const;

function target(
  values: { tenant?: string | undefined; url?: string | undefined; key?: string | undefined },
  io: CliIo,
) {
  const tenant = values.tenant;
  const client = connect(values, io.env, tenant === undefined ? 'KEEL_API_KEY' : 'KEEL_ADMIN_KEY');
  const path =
    tenant === undefined ? '/v1/policy' : `/v1/admin/tenants/${encodeURIComponent(tenant)}/policy`;
  return { client, path };
}

function readDocument(source: string): unknown {
  const text = source === '-' ? readFileSync(0, 'utf8') : readFileSync(source, 'utf8');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${source} is not JSON: ${(error as Error).message}`);
  }
}

const SUBCOMMANDS: Record<string, Subcommand> = {
  async get(args, io) {
    const { values, positionals } = parse(args, FLAGS);
    if (positionals.length > 0)
      throw new UsageError(`get takes no positional arguments, got ${positionals.join(' ')}`);
    const { client, path } = target(values, io);
    const answer = await client.request<{ policy: unknown }>('GET', path);
    return show(io, values.json, answer, () => JSON.stringify(answer.policy, null, 2));
  },
  async set(args, io) {
    const { values, positionals } = parse(args, FLAGS);
    const body = readDocument(one(positionals, 'file.json'));
    const { client, path } = target(values, io);
    const answer = await client.request<{ policy: unknown }>('PUT', path, { body });
    return show(
      io,
      values.json,
      answer,
      () => `policy set:\n${JSON.stringify(answer.policy, null, 2)}`,
    );
  },
};

/**
 * Runs `keel policy <argv…>` and returns the exit code.
 *
 * @example
 * process.exitCode = await runPolicyCommand(['get'], { stdout: process.stdout, stderr: process.stderr, env: process.env });
 */
export async function runPolicyCommand(argv: string[], io: CliIo): Promise<number> {
  return dispatch('policy', POLICY_USAGE, SUBCOMMANDS, argv, io);
}
