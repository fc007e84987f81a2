// Shared rate windows on Postgres: every process reserves model capacity in the same per-second
// counters, so a limit of N requests per minute allows N in total, not N per process. The decision
// (lock the keys, sum the last minute, count or refuse) is one call of keel_reserve_rate, defined
// by migration 0014; this module only calls it (statements reserve-rate.sql and settle-rate.sql).
import type { RateWindows, WindowKey, WindowVerdict } from '../rate-windows.ts';
import type { PostgresStore } from './postgres-store.ts';

export class PostgresRateWindows implements RateWindows {
  readonly #runs: PostgresStore;

  constructor(runs: PostgresStore) {
    this.#runs = runs;
  }

  async reserve(keys: readonly WindowKey[], tokens: number): Promise<WindowVerdict> {
    const [row] = await this.#runs.query('reserve-rate', {
      keys: keys.map((k) => k.key),
      rpm: keys.map((k) => k.rpm ?? null),
      tpm: keys.map((k) => k.tpm ?? null),
      tokens: Math.max(0, Math.round(tokens)),
    });
    return row!.granted === true
      ? { granted: true, second: Number(row!.at_second) }
      : {
          granted: false,
          waitMs: Math.max(1, Number(row!.wait_ms)),
          blocked: (row!.blocked as string | null) ?? '',
        };
  }

  async settle(keys: readonly string[], second: number, deltaTokens: number): Promise<void> {
    if (deltaTokens === 0) return;
    await this.#runs.query('settle-rate', { keys, second, delta_tokens: Math.round(deltaTokens) });
  }
}
