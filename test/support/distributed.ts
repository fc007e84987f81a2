// Shared pieces of the distributed failure tests: polling with a deadline, a JSON client for a
// `keel server`, bulk submission, the execution ledger written by
// test/fixtures/distributed-agents.ts, and the cluster's Postgres state.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { createFreshDatabase, type FreshDatabase } from './fresh-database.ts';
import type { KeelRoleProcess } from './keel-process.ts';

export const TERMINAL_STATUSES: readonly string[] = ['succeeded', 'failed', 'cancelled'];

/**
 * Polls `fn` until it returns a value other than undefined; throws after `timeoutMs` with `what`
 * (and `detail()`).
 */
export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs: number,
  detail?: () => string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${detail === undefined ? '' : `\n${detail()}`}`,
      );
    await new Promise((r) => setTimeout(r, 25));
  }
}

export interface ApiClient {
  request(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Submits a run; `fields` adds body fields (e.g. `{ priority: 'batch' }`). */
  submit(agent: string, input: unknown, fields?: Record<string, unknown>): Promise<string>;
}

export function apiClient(url: string, key: string): ApiClient {
  const request = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(url + path, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: await res.json() };
  };
  return {
    request,
    async submit(agent, input, fields = {}) {
      const r = await request('POST', '/v1/runs', { agent, input, ...fields });
      if (r.status !== 201)
        throw new Error(`submitting ${agent} answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body.id as string;
    },
  };
}

/**
 * Creates a tenant (weight 1) through the admin API of the Keel at `url`; returns a client with its
 * API key.
 */
export async function createTenant(
  url: string,
  adminKey: string,
  name: string,
): Promise<ApiClient> {
  const res = await fetch(`${url}/v1/admin/tenants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, weight: 1 }),
  });
  const body = (await res.json()) as { apiKey: string };
  if (res.status !== 201)
    throw new Error(`creating tenant ${name} answered ${res.status}: ${JSON.stringify(body)}`);
  return apiClient(url, body.apiKey);
}

/**
 * Submits `inputs` as runs of `agent`, `parallel` requests at a time; returns the run ids in input
 * order.
 */
export async function submitAll(
  api: ApiClient,
  agent: string,
  inputs: unknown[],
  parallel = 20,
  fields: Record<string, unknown> = {},
): Promise<string[]> {
  const ids: string[] = new Array(inputs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < inputs.length) {
        const i = next++;
        ids[i] = await api.submit(agent, inputs[i], fields);
      }
    }),
  );
  return ids;
}

export interface LedgerLine {
  what: 'step' | 'end';
  key: string;
  step: number;
  pid: number;
}

export function readLedger(path: string): LedgerLine[] {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [what, key, step, pid] = line.split(' ');
      return { what: what as LedgerLine['what'], key: key!, step: Number(step), pid: Number(pid) };
    });
}

/** How many times each step body started, by `<key> <step>`. */
export function stepStarts(lines: LedgerLine[]): Map<string, LedgerLine[]> {
  const starts = new Map<string, LedgerLine[]>();
  for (const line of lines) {
    if (line.what !== 'step') continue;
    const k = `${line.key} ${line.step}`;
    starts.set(k, [...(starts.get(k) ?? []), line]);
  }
  return starts;
}

/** Committed (succeeded) steps as `<run id> <step name>`, read from the journal in Postgres. */
export async function committedSteps(db: FreshDatabase): Promise<Set<string>> {
  const rows = await db.query<{ run_id: string; name: string }>(
    "SELECT run_id, name FROM journal WHERE kind = 'step' AND status = 'succeeded'",
  );
  return new Set(rows.map((r) => `${r.run_id} ${r.name}`));
}

/**
 * Waits until no session of the process named `name` (its PGAPPNAME) is connected: nothing it sent
 * can still commit.
 */
export async function untilSessionsGone(
  db: FreshDatabase,
  name: string,
  timeoutMs = 10_000,
): Promise<void> {
  await until(
    `the Postgres sessions of ${name} to end`,
    async () => {
      const [row] = await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = $2',
        [db.name, name],
      );
      return row!.n === 0 ? true : undefined;
    },
    timeoutMs,
  );
}

export async function runStatuses(
  db: FreshDatabase,
  ids: string[],
): Promise<Map<string, { status: string; result: any; leaseOwner: string | null }>> {
  const rows = await db.query<{
    id: string;
    status: string;
    result: string | null;
    lease_owner: string | null;
  }>('SELECT id, status, result, lease_owner FROM runs WHERE id = ANY($1)', [ids]);
  return new Map(
    rows.map((r) => [
      r.id,
      {
        status: r.status,
        result: r.result === null ? null : JSON.parse(r.result),
        leaseOwner: r.lease_owner,
      },
    ]),
  );
}

export interface DistributedScene {
  /** A fresh temporary directory (ledgers, logs). */
  dir: string;
  db: FreshDatabase;
  /** Processes started for the test: all are killed when it ends. */
  processes: KeelRoleProcess[];
}

/**
 * A fresh database and directory for one distributed test, torn down (processes killed first) when
 * it ends.
 */
export async function distributedScene(t: TestContext, name: string): Promise<DistributedScene> {
  const dir = mkdtempSync(join(tmpdir(), `keel-${name}-`));
  const db = await createFreshDatabase();
  const processes: KeelRoleProcess[] = [];
  t.after(async () => {
    await Promise.all(processes.map((p) => p.kill('SIGKILL')));
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, db, processes };
}
