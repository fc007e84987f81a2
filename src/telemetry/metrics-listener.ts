// An optional second HTTP listener that serves only GET /metrics, without auth (KEEL_METRICS_PORT).
// It exists for processes without an API (keel worker) and for operators who keep scraping on a
// private interface; it serves nothing else, so no run data or key is reachable through it.
import { createServer, type Server } from 'node:http';
import { telemetry } from './telemetry.ts';

export interface MetricsListener {
  address: string;
  close(): Promise<void>;
}

export async function startMetricsListener(host: string, port: number): Promise<MetricsListener> {
  const server: Server = createServer((request, response) => {
    if (request.method !== 'GET' || (request.url ?? '').split('?')[0] !== '/metrics') {
      response
        .writeHead(404, { 'content-type': 'text/plain' })
        .end('only GET /metrics is served here\n');
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
