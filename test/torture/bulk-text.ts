// The torture agent's large payload, shared by the agent and the harness that checks its output.

/** A deterministic 2 KiB text of `n`: past the 1 KiB inline threshold the torture runs with. */
export function bulkText(n: number): string {
  return `${n}:`.padEnd(2048, String.fromCharCode(97 + (n % 26)));
}
