// A fake OpenAI-compatible Chat Completions server for tests: POST /v1/chat/completions answering
// in the real wire format, as JSON or as SSE chunks (`data: {chunk}` … `data: [DONE]`, usage in a
// final chunk when asked), with tool calls streamed as argument fragments, plus error statuses with
// headers (429 + Retry-After), hangs, broken bodies and streams held half-way.
import {
  estimate,
  pieces,
  startFakeProvider,
  type FakeBehaviour,
  type FakeProviderServer,
  type FakeServerOptions,
  type FakeReply,
  type Protocol,
} from './fake-provider-core.ts';

export type { FakeBehaviour, FakeProviderServer } from './fake-provider-core.ts';

const openAiProtocol: Protocol = {
  path: '/v1/chat/completions',
  inputTokens: (body) =>
    estimate(JSON.stringify(body.messages ?? []).length + JSON.stringify(body.tools ?? []).length),
  error(res, behaviour) {
    res.writeHead(behaviour.status, { 'content-type': 'application/json', ...behaviour.headers });
    res.end(
      JSON.stringify({
        error: {
          message: behaviour.message ?? `fake error ${behaviour.status}`,
          type: behaviour.errorType ?? 'server_error',
          code: behaviour.errorCode ?? null,
          param: null,
        },
      }),
    );
  },
  async reply(res, body, reply, id) {
    const model = `${body.model}-fake-2026-01-01`;
    const text = reply.text ?? '';
    const toolCalls = (reply.toolCalls ?? []).map((call, index) => ({
      id: `call_${id}_${index}`,
      type: 'function',
      function: { name: call.name, arguments: JSON.stringify(call.args) },
    }));
    const usage = usageOf(body, reply, text, toolCalls);
    const finish = toolCalls.length > 0 ? 'tool_calls' : 'stop';
    const base = { id: `chatcmpl-${id}`, created: Math.floor(Date.now() / 1000), model };
    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          ...base,
          object: 'chat.completion',
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: text === '' && toolCalls.length > 0 ? null : text,
                ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
                refusal: null,
              },
              finish_reason: finish,
              logprobs: null,
            },
          ],
          usage,
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (chunk: object) =>
      res.write(
        `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', ...chunk })}\n\n`,
      );
    send({
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
    });
    for (const [n, piece] of pieces(text, reply.chunkChars ?? 4).entries()) {
      if (n === reply.dropAfterPieces) return void res.destroy();
      if (n === reply.hold?.afterPieces) await reply.hold.until;
      send({ choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
      await new Promise((resolve) => setImmediate(resolve));
    }
    toolCalls.forEach((call, index) => {
      send({
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                {
                  index,
                  id: call.id,
                  type: 'function',
                  function: { name: call.function.name, arguments: '' },
                },
              ],
            },
            finish_reason: null,
          },
        ],
      });
      for (const part of pieces(call.function.arguments, 7)) {
        send({
          choices: [
            {
              index: 0,
              delta: { tool_calls: [{ index, function: { arguments: part } }] },
              finish_reason: null,
            },
          ],
        });
      }
    });
    send({ choices: [{ index: 0, delta: {}, finish_reason: finish }] });
    if (body.stream_options?.include_usage === true) send({ choices: [], usage });
    res.end('data: [DONE]\n\n');
  },
};

function usageOf(body: any, reply: FakeReply, text: string, toolCalls: object[]) {
  const prompt = reply.inputTokens ?? openAiProtocol.inputTokens(body);
  const completion = reply.outputTokens ?? estimate(text.length + JSON.stringify(toolCalls).length);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: reply.cachedTokens ?? 0 },
  };
}

/**
 * Starts the fake on an ephemeral loopback port; `respond` decides each request's behaviour
 * (default: echo the last user message).
 * @example
 * const fake = await startFakeOpenAi();
 * fake.enqueue({ kind: 'status', status: 429, headers: { 'retry-after': '1' } });
 * // base URL for the SDK: `${fake.url}/v1`
 */
export function startFakeOpenAi(
  respond?: (body: any, index: number) => FakeBehaviour,
  options: FakeServerOptions = {},
): Promise<FakeProviderServer> {
  return startFakeProvider(openAiProtocol, respond ?? echo, options);
}

function echo(body: any): FakeBehaviour {
  const last = [...(body.messages ?? [])].reverse().find((m: any) => m.role === 'user');
  return { kind: 'reply', text: typeof last?.content === 'string' ? last.content : '' };
}
