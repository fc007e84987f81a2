// A real HTTP reverse proxy on loopback for browser tests of stream resumption: it forwards every
// request to a target (Keel), records the headers of each run-event stream request (to read the
// Last-Event-ID a client resumes with), and can cut the event streams open now, as a dropped
// connection would, while the target keeps running.
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

const EVENTS_PATH = /^\/v1\/(runs\/[^/]+\/)?events(\?|$)/;

export interface StreamCuttingProxy {
  url: string;
  /** Headers of every run-event stream request received, in order. */
  eventRequests: IncomingHttpHeaders[];
  /** Destroys the event streams open now (client and upstream sides); returns how many. */
  cutEventStreams(): number;
  close(): Promise<void>;
}

export async function startStreamCuttingProxy(target: string): Promise<StreamCuttingProxy> {
  const upstream = new URL(target);
  const eventRequests: IncomingHttpHeaders[] = [];
  const openStreams = new Set<{ res: ServerResponse; cut(): void }>();
  const server = createServer((req, res) => {
    const isEvents = EVENTS_PATH.test(req.url ?? '');
    if (isEvents) eventRequests.push({ ...req.headers });
    const out = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
    if (isEvents) {
      const entry = {
        res,
        cut: () => {
          out.destroy();
          res.destroy();
        },
      };
      openStreams.add(entry);
      res.once('close', () => openStreams.delete(entry));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    eventRequests,
    cutEventStreams() {
      const streams = [...openStreams];
      for (const stream of streams) stream.cut();
      return streams.length;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
