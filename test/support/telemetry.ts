// Test support for the telemetry tests: reads a running Keel's /metrics as samples, checks the text
// with Prometheus's own `promtool check metrics`, and a small JSON client with a polling helper.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { Sample } from '../../src/telemetry/exposition.ts';

export { metric, parseSamples, type Sample } from '../../src/telemetry/exposition.ts';

export function has(samples: Sample[], name: string, where: Record<string, string> = {}): boolean {
  return samples.some(
    (s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v),
  );
}

/**
 * Runs `promtool check metrics` on the exposition text; fails the test with promtool's findings.
 */
export function assertPromtoolAccepts(text: string): void {
  const result = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  assert.equal(
    result.error,
    undefined,
    `promtool could not run (apt-get install -y prometheus): ${String(result.error)}`,
  );
  assert.equal(
    result.status,
    0,
    `promtool check metrics failed:\n${result.stdout}${result.stderr}`,
  );
}

export function client(url: string, key: string) {
  return async (
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: any; text: string }> => {
    const res = await fetch(url + path, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body: parsed, text };
  };
}

/** Polls `fn` until it returns something other than undefined, or fails naming `what`. */
export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
