// The HTTP load generator for the throughput scenario, in a worker thread so client-side fetch work
// runs on its own event loop (as a separate client would) instead of competing with the server's.
// It keeps `lanes` runs in flight through POST /v1/runs; the main thread, which hears the store's
// 'ended' signals, tells it which runs finished. It never touches the store: it only speaks HTTP.
import { parentPort, workerData } from 'node:worker_threads';

export interface HttpLoadConfig {
  url: string;
  apiKey: string;
  agent: string;
  lanes: number;
}

/** Main thread → worker. */
export type ToWorker = { type: 'ended'; runIds: string[] } | { type: 'stop' };
/** Worker → main thread. */
export type FromWorker = { type: 'stopped'; submitted: number; failures: string[] };

const ENDED_EARLY_MAX_RUNS = 10_000;

if (parentPort !== null) {
  const port = parentPort;
  const config = workerData as HttpLoadConfig;
  const waiters = new Map<string, () => void>();
  const endedEarly = new Set<string>();
  let accepting = true;
  let submitted = 0;
  const failures: string[] = [];

  const ended = (runId: string): Promise<void> =>
    endedEarly.delete(runId)
      ? Promise.resolve()
      : new Promise((resolve) => waiters.set(runId, resolve));

  const body = JSON.stringify({ agent: config.agent });
  const headers = { authorization: `Bearer ${config.apiKey}`, 'content-type': 'application/json' };
  const lane = async (): Promise<void> => {
    while (accepting) {
      const res = await fetch(`${config.url}/v1/runs`, { method: 'POST', headers, body });
      const run = (await res.json()) as { id?: string };
      if (res.status !== 201 || run.id === undefined)
        throw new Error(`POST /v1/runs answered ${res.status}: ${JSON.stringify(run)}`);
      submitted++;
      await ended(run.id);
    }
  };
  const lanes = Array.from({ length: config.lanes }, () =>
    lane().catch((error: unknown) => void failures.push(String(error))),
  );

  port.on('message', (message: ToWorker) => {
    if (message.type === 'stop') {
      accepting = false;
      void Promise.all(lanes).then(() => {
        port.postMessage({ type: 'stopped', submitted, failures } satisfies FromWorker);
        port.close();
      });
      return;
    }
    for (const runId of message.runIds) {
      const resolve = waiters.get(runId);
      if (resolve !== undefined) {
        waiters.delete(runId);
        resolve();
      } else {
        endedEarly.add(runId);
        if (endedEarly.size > ENDED_EARLY_MAX_RUNS)
          endedEarly.delete(endedEarly.values().next().value!);
      }
    }
  });
}
