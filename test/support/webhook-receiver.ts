// A real HTTP server on loopback that receives webhooks for tests: records each request (headers
// and raw body) and answers with the status `respond` picks for it (a number) or holds the request
// unanswered (`'hold'`, to let a test kill the sender mid-delivery).
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  /** The status it was answered with; null while held (or never answered). */
  answered: number | null;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  received: ReceivedWebhook[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(
  respond: (index: number) => number | 'hold',
): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const held: ServerResponse[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const entry: ReceivedWebhook = { headers: request.headers, body, answered: null };
      const answer = respond(received.length);
      received.push(entry);
      if (answer === 'hold') {
        held.push(response);
        return;
      }
      entry.answered = answer;
      response.writeHead(answer, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of held) response.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
