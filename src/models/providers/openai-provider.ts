// The OpenAI-compatible Chat Completions provider (OpenAI, vLLM, Ollama, llama.cpp server,
// OpenRouter, …) over the official `openai` SDK, with tool calls and streaming. One attempt per
// call: the SDK's own retries are off (the gateway owns retries). It must never log or echo the API
// key, and never keep a request running after `signal` aborts.
import OpenAI from 'openai';
import type {
  ChatCompletion,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { ChatMessage, ToolCall } from '../../sdk/types.ts';
import type {
  ModelProvider,
  ProviderEndpoint,
  ProviderHooks,
  ProviderRequest,
  ProviderResponse,
} from '../provider.ts';
import { classifyProviderError, invalidResponse, keySource } from './provider-errors.ts';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';
/**
 * The SDK's own timeout, a backstop only: the gateway aborts attempts on its per-attempt timeout
 * first.
 */
const SDK_TIMEOUT_MS = 10 * 60_000;

export class OpenAiProvider implements ModelProvider {
  readonly name = 'openai';
  readonly #clients = new Map<string, OpenAI>();

  /**
   * One Chat Completions request (streamed when `request.stream`), mapped back to text, tool calls
   * and usage.
   * @example
   * await new OpenAiProvider().complete({ model, messages, tools: [], endpoint, stream: true }, signal, { onDelta: console.log });
   */
  async complete(
    request: ProviderRequest,
    signal: AbortSignal,
    hooks: ProviderHooks = {},
  ): Promise<ProviderResponse> {
    const endpoint = requireEndpoint(request);
    const client = this.#client(endpoint);
    const body = {
      model: request.model.definition.providerModel ?? request.model.name,
      messages: request.messages.map(toOpenAiMessage),
      ...(request.tools.length > 0 ? { tools: request.tools.map(toOpenAiTool) } : {}),
      ...(request.maxOutputTokens === undefined ? {} : { max_tokens: request.maxOutputTokens }),
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    };
    const startedAt = performance.now();
    let firstTokenMs: number | undefined;
    try {
      let completion: ChatCompletion;
      if (request.stream === true) {
        const stream = client.chat.completions.stream(
          { ...body, stream_options: { include_usage: true } },
          { signal },
        );
        stream.on('chunk', () => {
          firstTokenMs ??= performance.now() - startedAt;
        });
        stream.on('content', (delta) => hooks.onDelta?.(delta));
        completion = await stream.finalChatCompletion();
      } else {
        completion = await client.chat.completions.create(body, { signal });
        firstTokenMs = performance.now() - startedAt;
      }
      return toResponse(completion, endpoint.id, firstTokenMs);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw isKeelLike(error)
        ? error
        : classifyProviderError(error, endpoint.id, keySource(endpoint));
    }
  }

  #client(endpoint: ProviderEndpoint): OpenAI {
    let client = this.#clients.get(endpoint.id);
    if (client === undefined) {
      // Explicit key and URL: the SDK must not fall back to reading OPENAI_* variables (config.ts
      // owns the environment).
      client = new OpenAI({
        apiKey: endpoint.apiKey ?? 'no-key',
        baseURL: endpoint.baseUrl ?? OPENAI_DEFAULT_BASE_URL,
        maxRetries: 0,
        timeout: SDK_TIMEOUT_MS,
      });
      this.#clients.set(endpoint.id, client);
    }
    return client;
  }
}

function toOpenAiMessage(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return { role: 'user', content: message.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content,
        ...(message.toolCalls !== undefined && message.toolCalls.length > 0
          ? {
              tool_calls: message.toolCalls.map((call) => ({
                id: call.id,
                type: 'function' as const,
                function: { name: call.name, arguments: JSON.stringify(call.args) },
              })),
            }
          : {}),
      };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId ?? '', content: message.content };
    default: {
      const unreachable: never = message.role;
      return unreachable;
    }
  }
}

function toOpenAiTool(tool: ProviderRequest['tools'][number]): ChatCompletionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

function toResponse(
  completion: ChatCompletion,
  endpointId: string,
  firstTokenMs: number | undefined,
): ProviderResponse {
  const choice = completion.choices?.[0];
  if (choice === undefined) throw invalidResponse(endpointId, 'the completion has no choices');
  const toolCalls: ToolCall[] = [];
  for (const call of choice.message.tool_calls ?? []) {
    if (call.type !== 'function') continue;
    toolCalls.push({
      id: call.id,
      name: call.function.name,
      args: parseArgs(call.function.arguments, endpointId),
    });
  }
  const usage = completion.usage;
  return {
    text: choice.message.content ?? '',
    toolCalls,
    inputTokens: usage?.prompt_tokens ?? 0,
    outputTokens: usage?.completion_tokens ?? 0,
    cachedInputTokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
    ...(firstTokenMs === undefined ? {} : { firstTokenMs }),
    ...(typeof completion.model === 'string' ? { providerModel: completion.model } : {}),
  };
}

function parseArgs(text: string, endpointId: string): Record<string, unknown> {
  let args: unknown;
  try {
    args = JSON.parse(text === '' ? '{}' : text);
  } catch {
    throw invalidResponse(endpointId, 'tool call arguments are not JSON');
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    throw invalidResponse(endpointId, 'tool call arguments are not a JSON object');
  return args as Record<string, unknown>;
}

export function requireEndpoint(request: ProviderRequest): ProviderEndpoint {
  if (request.endpoint === undefined)
    throw new TypeError(`model ${request.model.name}: a network provider needs an endpoint`);
  return request.endpoint;
}

function isKeelLike(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { name?: unknown }).name === 'KeelError'
  );
}
