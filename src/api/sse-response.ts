// A Server-Sent Events response written by hand on the raw socket (the run stream and the tenant
// stream): Fastify lets go of the reply, the headers that keep proxies from buffering go out with
// a first comment, a keepalive comment follows every SSE_KEEPALIVE_MS, and one signal says the
// stream is over (the client left or the server is closing).
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';

export const SSE_KEEPALIVE_MS = 15_000;

export interface SseResponse {
  readonly res: ServerResponse;
  /** Aborts when the client disconnects or `closing` aborts. */
  readonly signal: AbortSignal;
  /** Stops the keepalive and ends the response; call once, in a `finally`. */
  end(): void;
}

/** Takes `reply` over as an SSE stream and writes `greeting` (SSE lines ending in a blank line). */
export function openSseResponse(
  reply: FastifyReply,
  closing: AbortSignal,
  greeting: string,
): SseResponse {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.write(greeting);
  const closed = new AbortController();
  const close = (): void => closed.abort();
  res.once('close', close);
  const keepalive = setInterval(() => res.write(': keepalive\n\n'), SSE_KEEPALIVE_MS);
  return {
    res,
    signal: AbortSignal.any([closed.signal, closing]),
    end() {
      clearInterval(keepalive);
      res.off('close', close);
      res.end();
    },
  };
}
