// `keel admins …`: named platform admins over /v1/admin/principals — create one (its key is
// printed once), list them, revoke one. Authenticates with a platform admin's key (--key, else
// $KEEL_ADMIN_KEY: the root key or a named admin's). Exit codes and output conventions are the CLI
// kit's (src/cli/kit/).
import { onePositional as one } from '../kit/args.ts';
import { clientFlagsUsage, connect, parseClientFlags as parse } from '../kit/client.ts';
import { dispatch, type Subcommand } from '../kit/dispatch.ts';
import { show, UsageError, type CliIo } from '../kit/output.ts';
import { formatTable } from './format.ts';

export const ADMINS_USAGE = `usage: keel admins <command> [options]

commands:
  create <name>               create a named platform admin; prints its key once
  list                        the named platform admins (revoked ones too)
  revoke <admin-id>           revoke a platform admin at once
  help                        show this text

${clientFlagsUsage('KEEL_ADMIN_KEY', 'a platform admin’s key: KEEL_ADMIN_KEY itself or a named admin’s')}

Each named admin has its own key, so the audit log says which admin acted. Once every operator has one, the
shared KEEL_ADMIN_KEY can be unset: admin routes keep working with the named keys.

exit codes: 0 success, 1 request failed, 2 usage error`;

interface AdminPrincipal {
  id: string;
  name: string;
  createdAt: string;
  revokedAt: string | null;
}

const BASE = '/v1/admin/principals';

const SUBCOMMANDS: Record<string, Subcommand> = {
  async create(args, io) {
    const { values, positionals } = parse(args, {});
    const client = connect(values, io.env, 'KEEL_ADMIN_KEY');
    const created = await client.request<{ principal: AdminPrincipal; secret: string }>(
      'POST',
      BASE,
      { body: { name: one(positionals, 'name') } },
    );
    return show(io, values.json, created, () =>
      [
        `id       ${created.principal.id}`,
        `name     ${created.principal.name}`,
        `key      ${created.secret}`,
        '(the key is shown only now: give it to the admin)',
      ].join('\n'),
    );
  },
  async list(args, io) {
    const { values, positionals } = parse(args, {});
    if (positionals.length > 0)
      throw new UsageError(`list takes no positional arguments, got ${positionals.join(' ')}`);
    const client = connect(values, io.env, 'KEEL_ADMIN_KEY');
    const page = await client.request<{ principals: AdminPrincipal[] }>('GET', BASE);
    return show(io, values.json, page, () =>
      page.principals.length === 0
        ? 'no named platform admins'
        : formatTable(
            ['ID', 'NAME', 'STATE', 'CREATED'],
            page.principals.map((p) => [
              p.id,
              p.name,
              p.revokedAt === null ? 'active' : 'revoked',
              p.createdAt,
            ]),
          ),
    );
  },
  async revoke(args, io) {
    const { values, positionals } = parse(args, {});
    const id = one(positionals, 'admin-id');
    const client = connect(values, io.env, 'KEEL_ADMIN_KEY');
    const { principal } = await client.request<{ principal: AdminPrincipal }>(
      'DELETE',
      `${BASE}/${encodeURIComponent(id)}`,
    );
    return show(
      io,
      values.json,
      { principal },
      () => `revoked ${principal.id} (${principal.name}) at ${principal.revokedAt}`,
    );
  },
};

/** Runs `keel admins <argv…>` and returns the exit code. */
export async function runAdminsCommand(argv: string[], io: CliIo): Promise<number> {
  return dispatch('admins', ADMINS_USAGE, SUBCOMMANDS, argv, io);
}
