// The front-door bench's HTTP client, in a process of its own so its CPU is its own: `npx node
// bench/frontdoor/client.ts '<json config>'` runs the closed loop (bench/frontdoor/loop.ts) against
// a system's HTTP front door and prints one JSON line with the result. Keel: POST /v1/runs, then
// read that run's SSE stream (GET /v1/runs/:id/events) to its terminal event. Restate: a
// synchronous call through its HTTP ingress (the answer is the workflow's result). One keep-alive
// connection pool per process, as a long-lived client would hold.
import { Pool } from 'undici';
import { closedLoop, type LoopResult } from './loop.ts';

export interface ClientConfig {
  target: 'keel' | 'restate';
  url: string;
  /** Keel: the tenant's API key and the agent to run. */
  apiKey?: string;
  agent?: string;
  /** Restate: the ingress path of the workflow's handler, e.g. /FrontdoorBench/run. */
  path?: string;
  lanes: number;
  warmupRuns: number;
  runs: number;
  trees: Record<string, number>;
}

const TERMINAL = /\nevent: run\.(succeeded|failed|cancelled)\n/;

function keelRunner(pool: Pool, config: ClientConfig): () => Promise<void> {
  const headers = {
    authorization: `Bearer ${config.apiKey}`,
    'content-type': 'application/json',
  };
  const streamHeaders = { authorization: `Bearer ${config.apiKey}`, accept: 'text/event-stream' };
  const body = JSON.stringify({ agent: config.agent, input: null });
  return async () => {
    const created = await pool.request({ method: 'POST', path: '/v1/runs', headers, body });
    const run = (await created.body.json()) as { id?: string };
    if (created.statusCode !== 201 || run.id === undefined)
      throw new Error(`POST /v1/runs answered ${created.statusCode}: ${JSON.stringify(run)}`);
    const stream = await pool.request({
      method: 'GET',
      path: `/v1/runs/${run.id}/events`,
      headers: streamHeaders,
    });
    if (stream.statusCode !== 200)
      throw new Error(`GET events answered ${stream.statusCode}: ${await stream.body.text()}`);
    // The server closes the stream after the terminal event; keep only a tail to match across chunks.
    let tail = '';
    let outcome: string | undefined;
    for await (const chunk of stream.body) {
      tail = (tail + (chunk as Buffer).toString('utf8')).slice(-4096);
      outcome ??= TERMINAL.exec(tail)?.[1];
    }
    if (outcome !== 'succeeded')
      throw new Error(`run ${run.id} ended ${outcome ?? 'without a terminal event'}`);
  };
}

function restateRunner(pool: Pool, config: ClientConfig): () => Promise<void> {
  const headers = { 'content-type': 'application/json' };
  return async () => {
    const res = await pool.request({ method: 'POST', path: config.path!, headers, body: 'null' });
    const text = await res.body.text();
    if (res.statusCode !== 200)
      throw new Error(`Restate ingress answered ${res.statusCode}: ${text}`);
  };
}

export async function runClient(config: ClientConfig): Promise<LoopResult> {
  const pool = new Pool(config.url, { connections: config.lanes * 2, pipelining: 1 });
  try {
    const runOne =
      config.target === 'keel' ? keelRunner(pool, config) : restateRunner(pool, config);
    return await closedLoop({ runOne, ...config });
  } finally {
    await pool.close();
  }
}

if (import.meta.main) {
  const result = await runClient(JSON.parse(process.argv[2]!) as ClientConfig);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
