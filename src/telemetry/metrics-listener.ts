// An optional second HTTP listener (KEEL_METRICS_PORT) that serves GET /metrics without auth, and
// the process's health: GET /healthz (alive) and GET /readyz (its store answers). It exists for
// processes without an API (keel worker: what a Kubernetes probe or a load balancer checks) and for
// operators who keep scraping on a private interface; it serves nothing else, so no run data or key
// is reachable through it.
import { createServer, type Server } from 'node:http';
import { telemetry } from './telemetry.ts';

export interface MetricsListener {
  address: string;
  close(): Promise<void>;
}

/** Whether the process can do its work now (its store answers); its answer is /readyz's body. */
export type ReadinessCheck = () => Promise<{ ready: boolean } & Record<string, unknown>>;

export async function startMetricsListener(
  host: string,
  port: number,
  readiness?: ReadinessCheck,
): Promise<MetricsListener> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (request.method === 'GET' && path === '/healthz') {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      return;
    }
    if (request.method === 'GET' && path === '/readyz') {
      (readiness ?? (async () => ({ ready: true })))().then(
        (body) =>
          response
            .writeHead(body.ready ? 200 : 503, { 'content-type': 'application/json' })
            .end(JSON.stringify(body)),
        (error: unknown) =>
          response
            .writeHead(503, { 'content-type': 'application/json' })
            .end(JSON.stringify({ ready: false, error: String(error) })),
      );
      return;
    }
    if (request.method !== 'GET' || path !== '/metrics') {
      response
        .writeHead(404, { 'content-type': 'text/plain' })
        .end('only GET /metrics, /healthz and /readyz are served here\n');
      return;
    }
    telemetry.render().then(
      ({ contentType, body }) => response.writeHead(200, { 'content-type': contentType }).end(body),
      (error: unknown) =>
        response
          .writeHead(500, { 'content-type': 'text/plain' })
          .end(`metrics failed: ${String(error)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = server.address();
  const address =
    typeof bound === 'object' && bound !== null
      ? `http://${host}:${bound.port}`
      : `http://${host}:${port}`;
  return {
    address,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
