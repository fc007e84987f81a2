// A fake Anthropic Messages server for tests: POST /v1/messages answering in the real wire format,
// as JSON or as SSE events (message_start, content_block_start/delta/stop with text_delta and
// input_json_delta, message_delta, message_stop), with tool_use blocks, cache-read usage, error
// statuses with headers, hangs and broken bodies.
import {
  estimate,
  pieces,
  startFakeProvider,
  type FakeBehaviour,
  type FakeProviderServer,
  type FakeServerOptions,
  type Protocol,
} from './fake-provider-core.ts';

export type { FakeBehaviour, FakeProviderServer } from './fake-provider-core.ts';

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

const anthropicProtocol: Protocol = {
  path: '/v1/messages',
  inputTokens: (body) =>
    estimate(
      JSON.stringify(body.messages ?? []).length +
        JSON.stringify(body.system ?? '').length +
        JSON.stringify(body.tools ?? []).length,
    ),
  error(res, behaviour) {
    res.writeHead(behaviour.status, { 'content-type': 'application/json', ...behaviour.headers });
    res.end(
      JSON.stringify({
        type: 'error',
        error: {
          type: behaviour.errorType ?? ERROR_TYPES[behaviour.status] ?? 'api_error',
          message: behaviour.message ?? `fake error ${behaviour.status}`,
        },
      }),
    );
  },
  async reply(res, body, reply, id) {
    const model = `${body.model}-fake-20260101`;
    const text = reply.text ?? '';
    const toolUses = (reply.toolCalls ?? []).map((call, index) => ({
      type: 'tool_use' as const,
      id: `toolu_${id}_${index}`,
      name: call.name,
      input: call.args,
    }));
    const cached = reply.cachedTokens ?? 0;
    const input = (reply.inputTokens ?? anthropicProtocol.inputTokens(body)) - cached;
    const output = reply.outputTokens ?? estimate(text.length + JSON.stringify(toolUses).length);
    const stop = toolUses.length > 0 ? 'tool_use' : 'end_turn';
    const message = {
      id: `msg_${id}`,
      type: 'message',
      role: 'assistant',
      model,
      stop_sequence: null,
    };
    const usage = {
      input_tokens: input,
      output_tokens: output,
      cache_read_input_tokens: cached,
      cache_creation_input_tokens: 0,
    };
    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          ...message,
          content: [...(text === '' ? [] : [{ type: 'text', text }]), ...toolUses],
          stop_reason: stop,
          usage,
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (event: { type: string } & Record<string, unknown>) =>
      res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    send({
      type: 'message_start',
      message: {
        ...message,
        content: [],
        stop_reason: null,
        usage: { ...usage, output_tokens: 1 },
      },
    });
    let index = 0;
    if (text !== '') {
      send({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const [n, piece] of pieces(text, reply.chunkChars ?? 4).entries()) {
        if (n === reply.dropAfterPieces) return void res.destroy();
        send({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
        await new Promise((resolve) => setImmediate(resolve));
      }
      send({ type: 'content_block_stop', index });
      index += 1;
    }
    for (const use of toolUses) {
      send({
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: use.id, name: use.name, input: {} },
      });
      for (const part of pieces(JSON.stringify(use.input), 7))
        send({
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: part },
        });
      send({ type: 'content_block_stop', index });
      index += 1;
    }
    send({
      type: 'message_delta',
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: output },
    });
    send({ type: 'message_stop' });
    res.end();
  },
};

/**
 * Starts the fake on an ephemeral loopback port; `respond` decides each request's behaviour
 * (default: echo the last user text).
 * @example
 * const fake = await startFakeAnthropic();
 * // base URL for the SDK: fake.url (the SDK appends /v1/messages)
 */
export function startFakeAnthropic(
  respond?: (body: any, index: number) => FakeBehaviour,
  options: FakeServerOptions = {},
): Promise<FakeProviderServer> {
  return startFakeProvider(anthropicProtocol, respond ?? echo, options);
}

function echo(body: any): FakeBehaviour {
  const last = [...(body.messages ?? [])]
    .reverse()
    .find((m: any) => m.role === 'user' && typeof m.content === 'string');
  return { kind: 'reply', text: last?.content ?? '' };
}
