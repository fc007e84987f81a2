// A run whose tool returns 50 MB (issue 22), on SQLite and on Postgres, each in a child process of
// its own (bench/large-payload-probe.ts): the run succeeds, the agent reads the whole result, the
// journal row holds a reference (Postgres: checked in the database; SQLite: the store conformance
// checks the same wrapper), and the process's peak resident set grows by at most 6 x the payload
// over its warm baseline. Measured on a shared machine: about 3.2x (SQLite) and 4.3x (Postgres),
// bench/RESULTS.md; 6x is the generous bound that still fails if the result were held a few more
// times (a second JSON text, a whole-payload buffer per store write).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { asPayloadRef } from '../src/domain/payload-ref.ts';
import { createFreshDatabase } from './support/fresh-database.ts';
import { postgresAvailable } from './support/postgres.ts';

const PROBE = fileURLToPath(new URL('../bench/large-payload-probe.ts', import.meta.url));
const PAYLOAD_MB = 50;
const GROWTH_MAX_PAYLOADS = 6;

interface Probe {
  status: string;
  result: { length: number } | null;
  payloadBytes: number;
  baselineMaxRssBytes: number;
  peakMaxRssBytes: number;
}

function probe(args: string[]): Promise<Probe> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', PROBE, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d;
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{"backend"'));
      if (code !== 0 || line === undefined)
        reject(new Error(`probe exited ${code}: ${err.slice(-2000)}`));
      else resolve(JSON.parse(line) as Probe);
    });
  });
}

function assertBounded(figures: Probe): void {
  assert.equal(figures.status, 'succeeded');
  assert.equal(figures.result?.length, PAYLOAD_MB * 1024 * 1024, 'the agent read it whole');
  const growth = figures.peakMaxRssBytes - figures.baselineMaxRssBytes;
  assert.ok(
    growth <= GROWTH_MAX_PAYLOADS * figures.payloadBytes,
    `peak RSS grew ${(growth / figures.payloadBytes).toFixed(2)} x the payload`,
  );
}

test('a 50 MB tool result on SQLite: peak RSS - baseline <= 6 x payload', async () => {
  assertBounded(await probe(['sqlite', String(PAYLOAD_MB)]));
});

test('a 50 MB tool result on Postgres: peak RSS - baseline <= 6 x payload; the journal holds a reference', {
  skip: !(await postgresAvailable()) && process.env.CI !== 'true',
}, async () => {
  const db = await createFreshDatabase();
  try {
    assertBounded(await probe(['postgres', String(PAYLOAD_MB), db.url]));
    const rows = await db.query<{ result: string }>(
      `SELECT result::text AS result FROM journal WHERE kind = 'tool' AND name = 'big'`,
    );
    const refs = rows.map((r) => asPayloadRef(JSON.parse(r.result))).filter((r) => r !== undefined);
    assert.equal(refs.length, 1, 'the large result is a reference; the warm-up one is inline');
    assert.ok(refs[0]!.size > PAYLOAD_MB * 1024 * 1024);
    const [stored] = await db.query<{ size: string }>(
      'SELECT size FROM payloads WHERE sha256 = $1',
      [refs[0]!.sha256],
    );
    assert.equal(Number(stored?.size), refs[0]!.size);
  } finally {
    await db.drop();
  }
});
