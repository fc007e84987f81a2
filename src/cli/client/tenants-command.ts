// `keel tenants …`: the operator's CLI over /v1/admin/tenants — create a tenant (its API key is printed once), change
// its weight and limits, list tenants. Authenticates with the admin key (--key, else $KEEL_ADMIN_KEY); exit codes and
// output conventions are those of subcommands.ts.
import { formatTable } from './format.ts';
import { DEFAULT_KEEL_URL, type RunsCommandIo } from './runs-command.ts';
import { connect, dispatch, one, parse, show, UsageError, type Subcommand } from './subcommands.ts';

export const TENANTS_USAGE = `usage: keel tenants <command> [options]

commands:
  create <name> [--weight <n>] [--max-concurrent-runs <n|none>] [--max-queued-runs <n|none>]
                              create a tenant; prints its API key once
  update <id> [--weight <n>] [--max-concurrent-runs <n|none>] [--max-queued-runs <n|none>]
                              change a tenant's weight and limits ('none' lifts a limit)
  list                        every tenant with its weight and limits
  help                        show this text

options for every command:
  --url <url>   Keel's API (default: $KEEL_URL, else ${DEFAULT_KEEL_URL})
  --key <key>   admin key (default: $KEEL_ADMIN_KEY)
  --json        print raw JSON instead of formatted text

A tenant's weight is its share of workers while it has work queued (default 1); max concurrent runs caps the runs
workers hold for it at once; over max queued runs, POST /v1/runs answers 429 tenant_queue_full.

exit codes: 0 success, 1 request failed, 2 usage error`;

const QUOTA_FLAGS = {
  weight: { type: 'string' }, 'max-concurrent-runs': { type: 'string' }, 'max-queued-runs': { type: 'string' },
} as const;

interface Tenant {
  id: string;
  name: string;
  createdAt: string;
  weight: number;
  maxConcurrentRuns: number | null;
  maxQueuedRuns: number | null;
}

/** A positive whole number, or null for 'none' when the limit may be lifted. */
function quota(value: string, flag: string, liftable: boolean): number | null {
  if (liftable && value === 'none') return null;
  const n = Number(value);
  if (value.trim() === '' || !Number.isSafeInteger(n) || n < 1) throw new UsageError(`${flag} must be a whole number from 1${liftable ? " or 'none'" : ''}, got '${value}'`);
  return n;
}

/** The request body from the quota flags given (only those: an update changes nothing else). */
function quotaBody(values: { weight?: string | undefined; 'max-concurrent-runs'?: string | undefined; 'max-queued-runs'?: string | undefined }): Record<string, number | null> {
  const body: Record<string, number | null> = {};
  if (values.weight !== undefined) body.weight = quota(values.weight, '--weight', false);
  if (values['max-concurrent-runs'] !== undefined) body.maxConcurrentRuns = quota(values['max-concurrent-runs'], '--max-concurrent-runs', true);
  if (values['max-queued-runs'] !== undefined) body.maxQueuedRuns = quota(values['max-queued-runs'], '--max-queued-runs', true);
  return body;
}

const limit = (n: number | null): string => (n === null ? 'unlimited' : String(n));

function formatTenant(t: Tenant): string {
  return [`id              ${t.id}`, `name            ${t.name}`, `weight          ${t.weight}`,
    `max concurrent  ${limit(t.maxConcurrentRuns)}`, `max queued      ${limit(t.maxQueuedRuns)}`].join('\n');
}

const SUBCOMMANDS: Record<string, Subcommand> = {
  async create(args, io) {
    const { values, positionals } = parse(args, QUOTA_FLAGS);
    const body = { name: one(positionals, 'name'), ...quotaBody(values) };
    const created = await connect(values, io.env, 'KEEL_ADMIN_KEY').request<{ tenant: Tenant; apiKey: string }>('POST', '/v1/admin/tenants', { body });
    return show(io, values.json, created, () => `${formatTenant(created.tenant)}\napi key         ${created.apiKey}\n(the API key is shown only now: store it)`);
  },
  async update(args, io) {
    const { values, positionals } = parse(args, QUOTA_FLAGS);
    const id = one(positionals, 'id');
    const body = quotaBody(values);
    if (Object.keys(body).length === 0) throw new UsageError('update needs at least one of --weight, --max-concurrent-runs, --max-queued-runs');
    const { tenant } = await connect(values, io.env, 'KEEL_ADMIN_KEY').request<{ tenant: Tenant }>('PATCH', `/v1/admin/tenants/${encodeURIComponent(id)}`, { body });
    return show(io, values.json, { tenant }, () => formatTenant(tenant));
  },
  async list(args, io) {
    const { values, positionals } = parse(args, {});
    if (positionals.length > 0) throw new UsageError(`list takes no positional arguments, got ${positionals.join(' ')}`);
    const page = await connect(values, io.env, 'KEEL_ADMIN_KEY').request<{ tenants: Tenant[] }>('GET', '/v1/admin/tenants');
    return show(io, values.json, page, () => (page.tenants.length === 0 ? 'no tenants' : formatTable(['ID', 'NAME', 'WEIGHT', 'MAX CONCURRENT', 'MAX QUEUED'],
      page.tenants.map((t) => [t.id, t.name, String(t.weight), limit(t.maxConcurrentRuns), limit(t.maxQueuedRuns)]))));
  },
};

/**
 * Runs `keel tenants <argv…>` and returns the exit code.
 *
 * @example
 * process.exitCode = await runTenantsCommand(['list'], { stdout: process.stdout, stderr: process.stderr, env: process.env });
 */
export async function runTenantsCommand(argv: string[], io: RunsCommandIo): Promise<number> {
  return dispatch('tenants', TENANTS_USAGE, SUBCOMMANDS, argv, io);
}
