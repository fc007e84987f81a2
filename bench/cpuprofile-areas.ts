// Sums a V8 .cpuprofile (node --cpu-prof) by area of Keel: each sample inside a time window is
// charged to the area of its innermost frame that says something (a native JSON or postMessage
// call by itself, else the nearest frame from Keel's source or a named package), and the areas are
// printed in microseconds per durable step, with the top functions by self and inclusive time.
// Timestamps are CLOCK_MONOTONIC microseconds, the same clock as process.hrtime() of any process
// on the machine, so a client can say which window to count.

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const TOP_FUNCTIONS = 20;

/** First match wins: [area, test on the frame]. */
const AREAS: Array<[string, (f: CallFrame) => boolean]> = [
  ['idle', (f) => f.functionName === '(idle)'],
  ['gc', (f) => f.functionName === '(garbage collector)'],
  ['json (native)', (f) => f.url === '' && /^(stringify|parse)$/.test(f.functionName)],
  [
    'thread messaging (native)',
    (f) =>
      f.url === '' &&
      /postMessage|MessagePort|receiveMessage|drainMessagePort/.test(f.functionName),
  ],
  [
    'sqlite (native)',
    (f) => f.url === '' && /^(run|get|all|exec|prepare|iterate)$/.test(f.functionName),
  ],
  [
    'isolate-side sdk',
    (f) =>
      /src\/engine\/isolation\/(isolate-main|isolate-context)/.test(f.url) ||
      /src\/sdk\//.test(f.url),
  ],
  ['isolate host (main side)', (f) => /src\/engine\/isolation\//.test(f.url)],
  ['agent code', (f) => /bench\/frontdoor-profile-agents/.test(f.url)],
  [
    'sse / events route',
    (f) => /src\/api\/(routes\/events|run-operations|redaction|views)\.ts/.test(f.url),
  ],
  ['event hub', (f) => /src\/api\/event-hub\.ts/.test(f.url)],
  ['api (keel routes, auth)', (f) => /src\/api\//.test(f.url)],
  ['validation (zod)', (f) => /node_modules\/(zod|fastify-type-provider-zod)\//.test(f.url)],
  [
    'fastify',
    (f) =>
      /node_modules\/(fastify|@fastify|find-my-way|avvio|light-my-request|fast-json-stringify|fast-querystring|secure-json-parse|abstract-logging|toad-cache)\b/.test(
        f.url,
      ),
  ],
  ['logging (pino)', (f) => /node_modules\/pino/.test(f.url)],
  ['engine', (f) => /src\/(engine|scheduling|domain)\//.test(f.url)],
  ['store (sqlite)', (f) => /src\/store\//.test(f.url)],
  ['telemetry', (f) => /src\/telemetry\/|node_modules\/(prom-client|@opentelemetry)/.test(f.url)],
  ['keel other', (f) => /\/src\//.test(f.url)],
  [
    'node http/net/streams',
    (f) =>
      /node:(_http|http|net|stream|internal\/(http|streams|net|stream_base|js_stream))|internal\/deps\/undici|node:internal\/(http|streams)/.test(
        f.url,
      ),
  ],
  [
    'node worker messaging',
    (f) => /internal\/(worker|per_context\/messageport|event_target)/.test(f.url),
  ],
  [
    'node timers/promises/async',
    (f) =>
      /internal\/(timers|process\/task_queues|async_hooks|async_local_storage)|node:timers/.test(
        f.url,
      ),
  ],
];
const UNCLASSIFIED = 'other (runtime, node internals)';

function areaOf(stack: CallFrame[]): string {
  for (const frame of stack) for (const [area, test] of AREAS) if (test(frame)) return area;
  return UNCLASSIFIED;
}

/**
 * A text table: areas in µs per step (and % of the window's non-idle CPU), then the top functions.
 */
export function summarizeProfile(
  profile: CpuProfile,
  window: { fromUs: number; toUs: number },
  steps: number,
): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stackOf = (id: number): ProfileNode[] => {
    const stack: ProfileNode[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at))
      stack.push(byId.get(at)!);
    return stack;
  };
  const areas = new Map<string, number>();
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const key = (f: CallFrame) =>
    `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(src|node_modules|bench)\//, '$1/')}:${f.lineNumber + 1}`;
  let t = profile.startTime;
  let busyUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    if (t < window.fromUs || t > window.toUs) continue;
    const stack = stackOf(profile.samples[i]!);
    const frames = stack.map((n) => n.callFrame);
    const area = areaOf(frames);
    areas.set(area, (areas.get(area) ?? 0) + delta);
    if (area === 'idle') continue;
    busyUs += delta;
    const leaf = key(frames[0]!);
    self.set(leaf, (self.get(leaf) ?? 0) + delta);
    for (const k of new Set(frames.map(key))) inclusive.set(k, (inclusive.get(k) ?? 0) + delta);
  }
  const lines = [
    `busy ${(busyUs / 1000).toFixed(0)} ms in the window = ${(busyUs / steps).toFixed(1)} µs/step`,
  ];
  lines.push('area                              µs/step   % busy');
  for (const [area, us] of [...areas].sort((a, b) => b[1] - a[1])) {
    if (area === 'idle') continue;
    lines.push(
      `  ${area.padEnd(32)} ${(us / steps).toFixed(1).padStart(7)}   ${((us / busyUs) * 100).toFixed(1).padStart(5)}`,
    );
  }
  const top = (m: Map<string, number>, title: string) => {
    lines.push(title);
    for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, TOP_FUNCTIONS))
      lines.push(`  ${(us / steps).toFixed(1).padStart(7)} µs/step  ${k}`);
  };
  top(self, 'top self time');
  top(inclusive, 'top inclusive time');
  return lines.join('\n');
}
