// Rate windows shared by every process of a deployment: the counters behind model RPM/TPM limits
// when several processes call the same providers (distributed mode). A store that only one process
// uses has no need of them (each process's own limiter is exact there). No I/O here: the contract
// both sides code against.

/** One limited key (`model:<name>`, `account:<name>`, `tenant:<id>`) and its per-minute limits. */
export interface WindowKey {
  key: string;
  rpm: number | undefined;
  tpm: number | undefined;
}

export type WindowVerdict =
  | {
      granted: true /** The epoch second the reservation was counted in (to settle it). */;
      second: number;
    }
  | {
      granted: false /** Until the tightest key would admit the call. */;
      waitMs: number;
      blocked: string;
    };

export interface RateWindows {
  /**
   * Counts one request and `tokens` tokens under every key at once, or none of them and says how
   * long to wait.
   */
  reserve(keys: readonly WindowKey[], tokens: number): Promise<WindowVerdict>;
  /**
   * Corrects a granted reservation's tokens by `deltaTokens` (actual − reserved) in the second it
   * was counted in.
   */
  settle(keys: readonly string[], second: number, deltaTokens: number): Promise<void>;
}
