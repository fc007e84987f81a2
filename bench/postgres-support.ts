// Postgres for the scenarios that run on it (the DBOS reference, and Keel on Postgres): the admin
// URL, whether the server answers, a fresh database per scenario, and a meter read around a
// measurement window (commits of that one database from pg_stat_database, WAL syncs, and the CPU of
// the server's processes from /proc when it is local). It creates and drops only databases named
// keel_bench_*, and it reports figures without judging them.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';

/**
 * The server the Postgres scenarios use; the admin connection only creates, drops and reads
 * statistics.
 */
export const BENCH_POSTGRES_ADMIN_URL =
  process.env.KEEL_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const BENCH_DATABASE_NAME = /^keel_bench_[a-z0-9_]+$/;
const CONNECT_TIMEOUT_MS = 2_000;
const DEFAULT_CLOCK_TICKS_PER_SEC = 100;

export type PostgresAvailability =
  | { ok: true; serverVersion: string; synchronousCommit: string }
  | { ok: false; reason: string };

/** Whether the bench server answers, and with which version and commit durability; never throws. */
export async function postgresAvailability(): Promise<PostgresAvailability> {
  const client = new pg.Client({
    connectionString: BENCH_POSTGRES_ADMIN_URL,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  try {
    await client.connect();
    const { rows } = await client.query<{ version: string; sync: string }>(
      `SELECT current_setting('server_version') AS version, current_setting('synchronous_commit') AS sync`,
    );
    return { ok: true, serverVersion: rows[0]!.version, synchronousCommit: rows[0]!.sync };
  } catch (error) {
    return {
      ok: false,
      reason: `Postgres at ${redacted(BENCH_POSTGRES_ADMIN_URL)} did not answer: ${(error as Error).message}`,
    };
  } finally {
    await client.end().catch(() => {});
  }
}

/** The URL of `database` on the bench server. */
export function benchDatabaseUrl(database: string): string {
  const url = new URL(BENCH_POSTGRES_ADMIN_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

/**
 * Drops `database` if it exists (closing its sessions), creates it empty, then forces a checkpoint:
 * every system measured starts with no dirty pages left by the one before (whose flush would
 * otherwise land in its window).
 */
export async function createFreshDatabase(database: string): Promise<void> {
  await withAdmin(async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${benchIdentifier(database)} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${benchIdentifier(database)}`);
    await client.query('CHECKPOINT');
  });
}

export async function dropDatabase(database: string): Promise<void> {
  await withAdmin((client) =>
    client.query(`DROP DATABASE IF EXISTS ${benchIdentifier(database)} WITH (FORCE)`),
  );
}

export interface PostgresSample {
  at: number;
  /**
   * pg_stat_database.xact_commit of the measured database, and the sum over every other one (this
   * meter's included).
   */
  commits: number;
  rollbacks: number;
  otherDatabasesCommits: number;
  /** pg_stat_wal.wal_sync: WAL fsyncs of the whole cluster. */
  walSyncs: number;
  /**
   * CPU clock ticks of the server's processes, or undefined when they cannot be read from this
   * machine's /proc.
   */
  clusterTicks: number | undefined;
  /** Ticks of each backend connected to the measured database. */
  backendTicks: Map<number, number>;
}

export interface PostgresFigures {
  /**
   * Committed transactions of the measured database (read-only ones included, as Postgres counts
   * them) per step.
   */
  transactionsPerStep: number;
  commitsPerSec: number;
  rollbacks: number;
  /** WAL fsyncs of the whole cluster per step: other databases' work would show up here too. */
  walSyncsPerStep: number;
  /**
   * Commits in the other databases during the window: anything but a handful means the server was
   * shared.
   */
  otherDatabasesCommits: number;
  /** Percent of one core, or undefined with the reason in cpuNote. */
  clusterCpuPct: number | undefined;
  /**
   * The part spent in the backends connected to the measured database (those alive at the end of
   * the window).
   */
  databaseBackendsCpuPct: number | undefined;
  cpuNote: string;
}

/** Reads statistics of one database and the CPU of the server's processes; one admin connection. */
export class PostgresMeter {
  readonly #client: pg.Client;
  readonly #database: string;
  readonly #ticksPerSec = clockTicksPerSec();
  #postmasterPid: number | undefined;

  private constructor(client: pg.Client, database: string) {
    this.#client = client;
    this.#database = database;
  }

  static async open(database: string): Promise<PostgresMeter> {
    const client = new pg.Client({
      connectionString: BENCH_POSTGRES_ADMIN_URL,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    });
    await client.connect();
    const meter = new PostgresMeter(client, database);
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    // Our own backend's parent is the postmaster, if the server runs on this machine and /proc
    // shows it.
    meter.#postmasterPid = postmasterOf(rows[0]!.pid);
    return meter;
  }

  /** One statement, so one transaction: the statistics it reads are a consistent snapshot. */
  async sample(): Promise<PostgresSample> {
    const { rows } = await this.#client.query<{
      commits: Array<[string, string, string]>;
      wal_sync: string;
      pids: number[] | null;
    }>(
      `SELECT (SELECT json_agg(json_build_array(datname, xact_commit::text, xact_rollback::text))
                 FROM pg_stat_database WHERE datname IS NOT NULL) AS commits,
              (SELECT wal_sync::text FROM pg_stat_wal) AS wal_sync,
              (SELECT json_agg(pid) FROM pg_stat_activity WHERE datname = $1) AS pids`,
      [this.#database],
    );
    const row = rows[0]!;
    let commits = 0,
      rollbacks = 0,
      otherDatabasesCommits = 0;
    for (const [datname, commit, rollback] of row.commits) {
      if (datname === this.#database) [commits, rollbacks] = [Number(commit), Number(rollback)];
      else otherDatabasesCommits += Number(commit);
    }
    const backendTicks = new Map<number, number>();
    for (const pid of row.pids ?? []) {
      const stat = readProcStat(pid);
      if (stat !== undefined) backendTicks.set(pid, stat.utime + stat.stime);
    }
    return {
      at: performance.now(),
      commits,
      rollbacks,
      otherDatabasesCommits,
      walSyncs: Number(row.wal_sync),
      clusterTicks:
        this.#postmasterPid === undefined ? undefined : clusterTicks(this.#postmasterPid),
      backendTicks,
    };
  }

  figures(start: PostgresSample, end: PostgresSample, steps: number): PostgresFigures {
    const seconds = (end.at - start.at) / 1000;
    const pct = (ticks: number) => Math.round((ticks / this.#ticksPerSec / seconds) * 100);
    let backendTicks = 0;
    for (const [pid, ticks] of end.backendTicks)
      backendTicks += ticks - (start.backendTicks.get(pid) ?? 0);
    const local = start.clusterTicks !== undefined && end.clusterTicks !== undefined;
    const commits = end.commits - start.commits;
    return {
      transactionsPerStep: round2(commits / Math.max(1, steps)),
      commitsPerSec: Math.round(commits / seconds),
      rollbacks: end.rollbacks - start.rollbacks,
      walSyncsPerStep: round2((end.walSyncs - start.walSyncs) / Math.max(1, steps)),
      otherDatabasesCommits: end.otherDatabasesCommits - start.otherDatabasesCommits,
      clusterCpuPct: local ? pct(end.clusterTicks! - start.clusterTicks!) : undefined,
      databaseBackendsCpuPct: local ? pct(backendTicks) : undefined,
      cpuNote: local
        ? `utime + stime from /proc of the postmaster (pid ${this.#postmasterPid}) and its children, exited ones included`
        : "not measured: the server's processes are not visible in this machine's /proc",
    };
  }

  async close(): Promise<void> {
    await this.#client.end();
  }
}

/**
 * Runs `window` (the measured part of a bench) between two meter samples and returns the line both
 * Postgres benches print: per unit (a step, a commit), the CPU of this process, of the database's
 * backends alive at the end of the window (from /proc, when the server is local), and the
 * database's transactions and the cluster's WAL syncs.
 */
export async function meteredWindow(
  database: string,
  units: number,
  unitName: string,
  window: () => Promise<void>,
): Promise<string> {
  const meter = await PostgresMeter.open(database);
  try {
    const before = await meter.sample();
    const cpuBefore = process.cpuUsage();
    await window();
    const cpu = process.cpuUsage(cpuBefore);
    const after = await meter.sample();
    const figures = meter.figures(before, after, units);
    let backendTicks = 0;
    for (const [pid, ticks] of after.backendTicks)
      backendTicks += ticks - (before.backendTicks.get(pid) ?? 0);
    const backendsMs =
      figures.databaseBackendsCpuPct === undefined
        ? 'n/a'
        : (((backendTicks / clockTicksPerSec()) * 1000) / units).toFixed(3);
    return (
      `  per ${unitName}: this process ${((cpu.user + cpu.system) / 1000 / units).toFixed(3)} ms CPU, ` +
      `Postgres backends of the database ${backendsMs} ms CPU, ` +
      `${figures.transactionsPerStep} transactions, ${figures.walSyncsPerStep} WAL syncs\n`
    );
  } finally {
    await meter.close();
  }
}

/** The value after `name` among this process's arguments (`--runs 200`), if given. */
export function flagValue(name: string): string | undefined {
  const args = process.argv.slice(2);
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

/** `sorted`'s value at quantile `q` (nearest rank below), with three decimals. */
export function quantileText(sorted: readonly number[], q: number): string {
  return sorted[Math.floor(q * (sorted.length - 1))]!.toFixed(3);
}

/** The postmaster's pid, from a backend's parent, if the server runs on this machine. */
function postmasterOf(backendPid: number): number | undefined {
  const own = readProcStat(backendPid);
  return own?.comm === 'postgres' ? own.ppid : undefined;
}

/**
 * The pid of the bench server's postmaster, or undefined when its processes are not in this
 * machine's /proc.
 */
export async function localPostmasterPid(): Promise<number | undefined> {
  return withAdmin(async (client) => {
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    return postmasterOf(rows[0]!.pid);
  });
}

export interface ProcStat {
  comm: string;
  ppid: number;
  utime: number;
  stime: number;
  /** Ticks of reaped children: a backend that exits is counted here by the postmaster. */
  cutime: number;
  cstime: number;
}

/** /proc/<pid>/stat, or undefined if the process is gone or not visible. */
export function readProcStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name is in parentheses and may hold spaces; the numeric fields follow the last ')'.
  const close = text.lastIndexOf(')');
  const fields = text
    .slice(close + 2)
    .split(' ')
    .map(Number);
  return {
    comm: text.slice(text.indexOf('(') + 1, close),
    ppid: fields[1]!,
    utime: fields[11]!,
    stime: fields[12]!,
    cutime: fields[13]!,
    cstime: fields[14]!,
  };
}

/**
 * The postmaster's own and reaped children's ticks plus those of its live children (backends, WAL
 * writer, ...).
 */
export function clusterTicks(postmasterPid: number): number | undefined {
  const postmaster = readProcStat(postmasterPid);
  if (postmaster === undefined) return undefined;
  let ticks = postmaster.utime + postmaster.stime + postmaster.cutime + postmaster.cstime;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProcStat(Number(entry));
    if (stat?.ppid === postmasterPid) ticks += stat.utime + stat.stime;
  }
  return ticks;
}

/** Clock ticks per second of /proc's CPU times. */
export function clockTicksPerSec(): number {
  try {
    return (
      Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) ||
      DEFAULT_CLOCK_TICKS_PER_SEC
    );
  } catch {
    return DEFAULT_CLOCK_TICKS_PER_SEC;
  }
}

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({
    connectionString: BENCH_POSTGRES_ADMIN_URL,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Only the bench's own databases may be created or dropped here; the name is then safe to quote as
 * is.
 */
function benchIdentifier(database: string): string {
  assert.match(
    database,
    BENCH_DATABASE_NAME,
    `refusing to touch database ${database}: bench databases are keel_bench_*`,
  );
  return `"${database}"`;
}

function redacted(url: string): string {
  const parsed = new URL(url);
  if (parsed.password !== '') parsed.password = '***';
  return parsed.toString();
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
