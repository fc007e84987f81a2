// Shared rate windows on Postgres: every process reserves model capacity in the same per-second counters, so a
// limit of N requests per minute allows N in total, not N per process. The decision (lock the keys, sum the last
// minute, count or refuse) is one call of keel_reserve_rate, defined by migration 0014; this module only calls it.
import type { RateWindows, WindowKey, WindowVerdict } from '../rate-windows.ts';
import type { PostgresStore } from './postgres-store.ts';

export class PostgresRateWindows implements RateWindows {
  readonly #runs: PostgresStore;

  constructor(runs: PostgresStore) {
    this.#runs = runs;
  }

  async reserve(keys: readonly WindowKey[], tokens: number): Promise<WindowVerdict> {
    const { rows } = await this.#runs.pool.query<{ granted: boolean; at_second: string | null; wait_ms: string; blocked: string | null }>({
      name: 'keel-reserve-rate',
      text: 'SELECT granted, at_second, wait_ms, blocked FROM keel_reserve_rate($1::text[], $2::integer[], $3::bigint[], $4::bigint)',
      values: [keys.map((k) => k.key), keys.map((k) => k.rpm ?? null), keys.map((k) => k.tpm ?? null), Math.max(0, Math.round(tokens))],
    });
    const row = rows[0]!;
    return row.granted ? { granted: true, second: Number(row.at_second) } : { granted: false, waitMs: Math.max(1, Number(row.wait_ms)), blocked: row.blocked ?? '' };
  }

  async settle(keys: readonly string[], second: number, deltaTokens: number): Promise<void> {
    if (deltaTokens === 0) return;
    await this.#runs.pool.query({
      name: 'keel-settle-rate',
      text: 'UPDATE rate_windows SET tokens = greatest(0, tokens + $3::bigint) WHERE key = ANY($1::text[]) AND second = $2::bigint',
      values: [keys, second, Math.round(deltaTokens)],
    });
  }
}
