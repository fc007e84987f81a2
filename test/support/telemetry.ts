// Test support for the telemetry tests: reads a running Keel's /metrics as samples, checks the text
// with Prometheus's own `promtool check metrics`, and a small JSON client with a polling helper.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * Parses the Prometheus text format's sample lines. Hand-written (20 lines) rather than a
 * dependency: the tests need only name, labels and value, and promtool, not this parser, is what
 * checks the format.
 */
export function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    assert.ok(match, `unparseable sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const m of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[m[1]!] = m[2]!.replace(/\\(.)/g, '$1');
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** Sum of the samples named `name` whose labels include `where` (0 when there is none). */
export function metric(
  samples: Sample[],
  name: string,
  where: Record<string, string> = {},
): number {
  return samples
    .filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v))
    .reduce((a, s) => a + s.value, 0);
}

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
