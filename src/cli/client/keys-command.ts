// `keel keys …`: API keys — create one (its secret is printed once), list them, revoke one. With a
// tenant key holding the admin scope (--key, else $KEEL_API_KEY) it manages the caller's tenant
// (/v1/keys); with --tenant <id> it is the platform admin's (--key, else $KEEL_ADMIN_KEY) over
// /v1/admin/tenants/:id/keys. Exit codes and output conventions are the CLI kit's (src/cli/kit/).
import { SCOPES, isScope } from '../../domain/access.ts';
import { onePositional as one } from '../kit/args.ts';
import { clientFlagsUsage, connect, parseClientFlags as parse } from '../kit/client.ts';
import { dispatch, type Subcommand } from '../kit/dispatch.ts';
import { show, UsageError, type CliIo } from '../kit/output.ts';
import { formatTable } from './format.ts';

export const KEYS_USAGE = `usage: keel keys <command> [options]

commands:
  create <name> --scopes <s,…> [--expires-at <iso>] [--rpm <n>]
                              create an API key; prints its secret once
  list                        the tenant's keys (revoked and expired ones too)
  revoke <key-id>             revoke a key at once
  help                        show this text

options:
  --scopes <s,…>      what the key may do: ${SCOPES.join(', ')} (admin: the tenant's keys and audit log)
  --expires-at <iso>  when the key stops working, e.g. 2027-01-01T00:00:00Z (default: never)
  --rpm <n>           requests a minute the key may make, all API processes together (default: the server's
                      KEEL_KEY_REQUESTS_PER_MINUTE, unlimited when unset); past it: 429 key_rate_limited
  --tenant <id>       act as the platform admin on this tenant (key: $KEEL_ADMIN_KEY)

${clientFlagsUsage('KEEL_API_KEY', 'API key with the admin scope (with --tenant: the admin key)')}

Rotation without downtime: create the new key, move every client to it (both keys work meanwhile), then revoke
the old one. A tenant key can grant only scopes it holds itself.

exit codes: 0 success, 1 request failed, 2 usage error`;

const FLAGS = {
  scopes: { type: 'string' },
  'expires-at': { type: 'string' },
  rpm: { type: 'string' },
  tenant: { type: 'string' },
} as const;

interface ApiKey {
  id: string;
  name: string;
  scopes: string[];
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
  requestsPerMinute: number | null;
}

function rpmOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const rpm = Number(value);
  if (!/^\d+$/.test(value) || rpm < 1)
    throw new UsageError(
      `--rpm takes a whole number of requests a minute, at least 1, got ${value}`,
    );
  return rpm;
}

/** The tenant's own key routes, or with --tenant the platform admin's for that tenant. */
function target(
  values: { tenant?: string | undefined; url?: string | undefined; key?: string | undefined },
  io: CliIo,
) {
  const tenant = values.tenant;
  const client = connect(values, io.env, tenant === undefined ? 'KEEL_API_KEY' : 'KEEL_ADMIN_KEY');
  const base =
    tenant === undefined ? '/v1/keys' : `/v1/admin/tenants/${encodeURIComponent(tenant)}/keys`;
  return { client, base };
}

function scopesOf(value: string | undefined): string[] {
  if (value === undefined)
    throw new UsageError(`create needs --scopes, a comma-separated list of ${SCOPES.join(', ')}`);
  const scopes = value.split(',').map((s) => s.trim());
  const bad = scopes.filter((s) => !isScope(s));
  if (bad.length > 0 || scopes.length === 0)
    throw new UsageError(`unknown scope ${bad.join(', ')}: use ${SCOPES.join(', ')}`);
  return scopes;
}

function state(k: ApiKey, now: number): string {
  if (k.revokedAt !== null) return 'revoked';
  if (k.expiresAt !== null && Date.parse(k.expiresAt) <= now) return 'expired';
  return 'active';
}

const SUBCOMMANDS: Record<string, Subcommand> = {
  async create(args, io) {
    const { values, positionals } = parse(args, FLAGS);
    const body = {
      name: one(positionals, 'name'),
      scopes: scopesOf(values.scopes),
      ...(values['expires-at'] === undefined ? {} : { expiresAt: values['expires-at'] }),
      ...(values.rpm === undefined ? {} : { requestsPerMinute: rpmOf(values.rpm) }),
    };
    const { client, base } = target(values, io);
    const created = await client.request<{ key: ApiKey; secret: string }>('POST', base, { body });
    return show(io, values.json, created, () =>
      [
        `id       ${created.key.id}`,
        `name     ${created.key.name}`,
        `scopes   ${created.key.scopes.join(',')}`,
        `expires  ${created.key.expiresAt ?? 'never'}`,
        `rpm      ${created.key.requestsPerMinute ?? 'server default'}`,
        `secret   ${created.secret}`,
        '(the secret is shown only now: store it)',
      ].join('\n'),
    );
  },
  async list(args, io) {
    const { values, positionals } = parse(args, FLAGS);
    if (positionals.length > 0)
      throw new UsageError(`list takes no positional arguments, got ${positionals.join(' ')}`);
    const { client, base } = target(values, io);
    const page = await client.request<{ keys: ApiKey[] }>('GET', base);
    const now = Date.now();
    return show(io, values.json, page, () =>
      page.keys.length === 0
        ? 'no keys'
        : formatTable(
            ['ID', 'NAME', 'SCOPES', 'STATE', 'CREATED', 'EXPIRES', 'LAST USED', 'RPM'],
            page.keys.map((k) => [
              k.id,
              k.name,
              k.scopes.join(','),
              state(k, now),
              k.createdAt,
              k.expiresAt ?? 'never',
              k.lastUsedAt ?? 'never',
              k.requestsPerMinute === null ? 'default' : String(k.requestsPerMinute),
            ]),
          ),
    );
  },
  async revoke(args, io) {
    const { values, positionals } = parse(args, FLAGS);
    const id = one(positionals, 'key-id');
    const { client, base } = target(values, io);
    const { key } = await client.request<{ key: ApiKey }>(
      'DELETE',
      `${base}/${encodeURIComponent(id)}`,
    );
    return show(
      io,
      values.json,
      { key },
      () => `revoked ${key.id} (${key.name}) at ${key.revokedAt}`,
    );
  },
};

/**
 * Runs `keel keys <argv…>` and returns the exit code.
 *
 * @example
 * process.exitCode = await runKeysCommand(['list'], { stdout: process.stdout, stderr: process.stderr, env: process.env });
 */
export async function runKeysCommand(argv: string[], io: CliIo): Promise<number> {
  return dispatch('keys', KEYS_USAGE, SUBCOMMANDS, argv, io);
}
