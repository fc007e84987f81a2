// `keel tenants …`: the operator's CLI over /v1/admin/tenants — create a tenant (its API key is
// printed once), change its weight and limits, list tenants. Authenticates with the admin key
// (--key, else $KEEL_ADMIN_KEY); exit codes and output conventions are the CLI kit's
// (src/cli/kit/).
import type { TenantQuotas } from '../../domain/records.ts';
import { jsonArgument, onePositional as one } from '../kit/args.ts';
import { clientFlagsUsage, connect, parseClientFlags as parse } from '../kit/client.ts';
import { dispatch, type Subcommand } from '../kit/dispatch.ts';
import { show, UsageError, type CliIo } from '../kit/output.ts';
import { formatTable } from './format.ts';

export const TENANTS_USAGE = `usage: keel tenants <command> [options]

commands:
  create <name> [limits]      create a tenant; prints its API key once
  update <id> [limits]        change a tenant's weight and limits ('none' lifts a limit)
  list                        every tenant with its weight and limits
  help                        show this text

limits (create and update):
  --weight <n>                         share of workers while backlogged (default 1)
  --max-concurrent-runs <n|none>       runs workers hold for the tenant at once
  --max-queued-runs <n|none>           queued runs before POST /v1/runs answers 429 tenant_queue_full
  --rpm <n|none>, --tpm <n|none>       model requests / tokens per minute (per process)
  --daily-token-budget <n|none>        model tokens (input + output) per UTC day
  --daily-cost-budget-usd <usd|none>   model spend in USD per UTC day
  --pool-caps <pool=n,…|none>          max concurrent effects per pool, e.g. sandbox:default=2,browser=1
                                       (replaces the whole set; 'none' clears it)
  --redact <json|none>                 what the API and CLI show as "[redacted]" in the tenant's runs and
                                       steps, e.g. '{"fields":["password"],"tools":{"send_email":["input.body"]}}'
                                       (replaces the whole policy; 'none' clears it; the journal keeps the values)
  --egress-allow <host:port,…|empty|none>
                                       destinations the tenant's sandboxes may reach, narrowing every sandbox
                                       profile's network.allow (never widening it), e.g. pypi.example.org:443;
                                       'empty': no network at all; 'none': no narrowing (replaces the whole list)

${clientFlagsUsage('KEEL_ADMIN_KEY', 'admin key')}

A tenant's weight is its share of workers while it has work queued (default 1); max concurrent runs caps the runs
workers hold for it at once; over max queued runs, POST /v1/runs answers 429 tenant_queue_full. Once a daily budget
is spent, the tenant's model calls wait (waitingReason tenant_budget_exhausted) until midnight UTC or a raise.

exit codes: 0 success, 1 request failed, 2 usage error`;

const QUOTA_FLAGS = {
  weight: { type: 'string' },
  'max-concurrent-runs': { type: 'string' },
  'max-queued-runs': { type: 'string' },
  rpm: { type: 'string' },
  tpm: { type: 'string' },
  'daily-token-budget': { type: 'string' },
  'daily-cost-budget-usd': { type: 'string' },
  'pool-caps': { type: 'string' },
  redact: { type: 'string' },
  'egress-allow': { type: 'string' },
} as const;
type QuotaFlag = keyof typeof QUOTA_FLAGS;

/** A tenant as the admin API answers it. */
interface Tenant extends TenantQuotas {
  id: string;
  name: string;
  createdAt: string;
}

/** A whole number from `min`, or null for 'none' when the limit may be lifted. */
function quota(value: string, flag: string, liftable: boolean, min = 1): number | null {
  if (liftable && value === 'none') return null;
  const n = Number(value);
  if (value.trim() === '' || !Number.isSafeInteger(n) || n < min)
    throw new UsageError(
      `${flag} must be a whole number from ${min}${liftable ? " or 'none'" : ''}, got '${value}'`,
    );
  return n;
}

/** An amount in USD (0 or more), or null for 'none'. */
function usd(value: string, flag: string): number | null {
  if (value === 'none') return null;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0)
    throw new UsageError(`${flag} must be an amount in USD from 0 or 'none', got '${value}'`);
  return n;
}

/** `pool=n,pool=n` as an object ({} for 'none'). */
function poolCaps(value: string): Record<string, number> {
  if (value === 'none') return {};
  const caps: Record<string, number> = {};
  for (const pair of value.split(',')) {
    const at = pair.lastIndexOf('=');
    if (at <= 0)
      throw new UsageError(
        `--pool-caps takes pool=n pairs separated by commas, or 'none'; got '${pair}'`,
      );
    caps[pair.slice(0, at).trim()] = quota(
      pair.slice(at + 1),
      `--pool-caps ${pair.slice(0, at)}`,
      false,
    )!;
  }
  return caps;
}

/** `--redact`: a policy as JSON (the API checks its shape), or the empty policy for 'none'. */
function redactPolicy(value: string): unknown {
  if (value === 'none') return { fields: [], tools: {} };
  return jsonArgument(value, '--redact');
}

/** `--egress-allow`: `host:port` pairs (the API checks the hosts), [] for 'empty', null for 'none'. */
function egressAllow(value: string): Array<{ host: string; port: number }> | null {
  if (value === 'none') return null;
  if (value === 'empty') return [];
  return value.split(',').map((pair) => {
    const at = pair.lastIndexOf(':');
    if (at <= 0)
      throw new UsageError(
        `--egress-allow takes host:port pairs separated by commas, 'empty' or 'none'; got '${pair}'`,
      );
    const port = quota(pair.slice(at + 1), `--egress-allow ${pair.slice(0, at)}`, false)!;
    return { host: pair.slice(0, at).trim(), port };
  });
}

/** The request body from the quota flags given (only those: an update changes nothing else). */
function quotaBody(
  values: Partial<Record<QuotaFlag, string | undefined>>,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const integer = (flag: QuotaFlag, field: string, liftable: boolean, min = 1) => {
    const value = values[flag];
    if (value !== undefined) body[field] = quota(value, `--${flag}`, liftable, min);
  };
  integer('weight', 'weight', false);
  integer('max-concurrent-runs', 'maxConcurrentRuns', true);
  integer('max-queued-runs', 'maxQueuedRuns', true);
  integer('rpm', 'rpm', true);
  integer('tpm', 'tpm', true);
  integer('daily-token-budget', 'dailyTokenBudget', true, 0);
  if (values['daily-cost-budget-usd'] !== undefined)
    body.dailyCostBudgetUsd = usd(values['daily-cost-budget-usd'], '--daily-cost-budget-usd');
  if (values['pool-caps'] !== undefined) body.poolCaps = poolCaps(values['pool-caps']);
  if (values.redact !== undefined) body.redact = redactPolicy(values.redact);
  if (values['egress-allow'] !== undefined) body.egressAllow = egressAllow(values['egress-allow']);
  return body;
}

const limit = (n: number | null | undefined): string =>
  n === null || n === undefined ? 'unlimited' : String(n);
const caps = (c: Record<string, number> | undefined): string =>
  c === undefined || Object.keys(c).length === 0
    ? 'none'
    : Object.entries(c)
        .map(([p, n]) => `${p}=${n}`)
        .join(',');

/** `fields=password,apiKey; send_email=input.body`, or 'none'. */
function redactText(policy: Tenant['redact'] | undefined): string {
  const parts: string[] = [];
  if (policy !== undefined && policy.fields.length > 0)
    parts.push(`fields=${policy.fields.join(',')}`);
  for (const [tool, paths] of Object.entries(policy?.tools ?? {}))
    parts.push(`${tool}=${paths.join(',')}`);
  return parts.length === 0 ? 'none' : parts.join('; ');
}

/** `host:port,…`; 'any the profile allows' without a list; 'nothing' for an empty one. */
function egressText(list: Tenant['egressAllow'] | undefined): string {
  if (list === null || list === undefined) return 'any the profile allows';
  return list.length === 0 ? 'nothing' : list.map((d) => `${d.host}:${d.port}`).join(',');
}

function formatTenant(t: Tenant): string {
  return [
    `id              ${t.id}`,
    `name            ${t.name}`,
    `weight          ${t.weight}`,
    `max concurrent  ${limit(t.maxConcurrentRuns)}`,
    `max queued      ${limit(t.maxQueuedRuns)}`,
    `rpm             ${limit(t.rpm)}`,
    `tpm             ${limit(t.tpm)}`,
    `daily tokens    ${limit(t.dailyTokenBudget)}`,
    `daily cost usd  ${limit(t.dailyCostBudgetUsd)}`,
    `pool caps       ${caps(t.poolCaps)}`,
    `redact          ${redactText(t.redact)}`,
    `egress allow    ${egressText(t.egressAllow)}`,
  ].join('\n');
}

const SUBCOMMANDS: Record<string, Subcommand> = {
  async create(args, io) {
    const { values, positionals } = parse(args, QUOTA_FLAGS);
    const body = { name: one(positionals, 'name'), ...quotaBody(values) };
    const created = await connect(values, io.env, 'KEEL_ADMIN_KEY').request<{
      tenant: Tenant;
      apiKey: string;
    }>('POST', '/v1/admin/tenants', { body });
    return show(
      io,
      values.json,
      created,
      () =>
        `${formatTenant(created.tenant)}\napi key         ${created.apiKey}\n(the API key is shown only now: store it)`,
    );
  },
  async update(args, io) {
    const { values, positionals } = parse(args, QUOTA_FLAGS);
    const id = one(positionals, 'id');
    const body = quotaBody(values);
    if (Object.keys(body).length === 0)
      throw new UsageError(
        `update needs at least one of ${Object.keys(QUOTA_FLAGS)
          .map((f) => `--${f}`)
          .join(', ')}`,
      );
    const { tenant } = await connect(values, io.env, 'KEEL_ADMIN_KEY').request<{ tenant: Tenant }>(
      'PATCH',
      `/v1/admin/tenants/${encodeURIComponent(id)}`,
      { body },
    );
    return show(io, values.json, { tenant }, () => formatTenant(tenant));
  },
  async list(args, io) {
    const { values, positionals } = parse(args, {});
    if (positionals.length > 0)
      throw new UsageError(`list takes no positional arguments, got ${positionals.join(' ')}`);
    const page = await connect(values, io.env, 'KEEL_ADMIN_KEY').request<{ tenants: Tenant[] }>(
      'GET',
      '/v1/admin/tenants',
    );
    return show(io, values.json, page, () =>
      page.tenants.length === 0
        ? 'no tenants'
        : formatTable(
            [
              'ID',
              'NAME',
              'WEIGHT',
              'MAX CONCURRENT',
              'MAX QUEUED',
              'RPM',
              'TPM',
              'DAILY TOKENS',
              'DAILY USD',
              'POOL CAPS',
            ],
            page.tenants.map((t) => [
              t.id,
              t.name,
              String(t.weight),
              limit(t.maxConcurrentRuns),
              limit(t.maxQueuedRuns),
              limit(t.rpm),
              limit(t.tpm),
              limit(t.dailyTokenBudget),
              limit(t.dailyCostBudgetUsd),
              caps(t.poolCaps),
            ]),
          ),
    );
  },
};

/**
 * Runs `keel tenants <argv…>` and returns the exit code.
 *
 * @example
 * process.exitCode = await runTenantsCommand(['list'], { stdout: process.stdout, stderr: process.stderr, env: process.env });
 */
export async function runTenantsCommand(argv: string[], io: CliIo): Promise<number> {
  return dispatch('tenants', TENANTS_USAGE, SUBCOMMANDS, argv, io);
}
