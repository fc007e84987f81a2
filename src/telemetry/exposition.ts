// Reads Prometheus's text exposition format back into samples: what `keel sim` scrapes from the
// Keel processes it measures, and what the telemetry tests read. Hand-written (20 lines) rather
// than a dependency: only name, labels and value are needed, and promtool (in the tests) is what
// checks the format itself.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The sample lines of an exposition (comments and blank lines skipped; an unparseable line throws). */
export function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (match === null) throw new Error(`unparseable sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const m of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[m[1]!] = m[2]!.replace(/\\(.)/g, '$1');
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** Sum of the samples named `name` whose labels include `where` (0 when there is none). */
export function metric(
  samples: readonly Sample[],
  name: string,
  where: Record<string, string> = {},
): number {
  return samples
    .filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v))
    .reduce((a, s) => a + s.value, 0);
}
