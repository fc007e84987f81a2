// The Anthropic Messages provider over the official `@anthropic-ai/sdk`, with tool use and
// streaming. One attempt per call: the SDK's retries are off (the gateway owns retries). It must
// never log or echo the API key, and never keep a request running after `signal` aborts.
import Anthropic from '@anthropic-ai/sdk';
import type {
  Message,
  MessageCreateParamsNonStreaming,
  MessageParam,
  Tool,
} from '@anthropic-ai/sdk/resources/messages';
import type { ChatMessage, ToolCall } from '../../sdk/types.ts';
import type {
  ModelProvider,
  ProviderEndpoint,
  ProviderHooks,
  ProviderRequest,
  ProviderResponse,
} from '../provider.ts';
import { requireEndpoint } from './openai-provider.ts';
import { classifyProviderError, invalidResponse, keySource } from './provider-errors.ts';

export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';
/**
 * Anthropic requires max_tokens; used when neither the request nor the model definition sets one.
 */
export const ANTHROPIC_MAX_TOKENS_DEFAULT = 1_024;
const SDK_TIMEOUT_MS = 10 * 60_000;

export class AnthropicProvider implements ModelProvider {
  readonly name = 'anthropic';
  readonly #clients = new Map<string, Anthropic>();

  /**
   * One Messages request (streamed when `request.stream`), mapped back to text, tool calls and
   * usage.
   * @example
   * await new AnthropicProvider().complete({ model, messages, tools: [], endpoint, stream: true }, signal, { onDelta: console.log });
   */
  async complete(
    request: ProviderRequest,
    signal: AbortSignal,
    hooks: ProviderHooks = {},
  ): Promise<ProviderResponse> {
    const endpoint = requireEndpoint(request);
    const client = this.#client(endpoint);
    const system = request.messages
      .filter((m) => m.role === 'system')
      .map((m) => m.content)
      .join('\n\n');
    const body: MessageCreateParamsNonStreaming = {
      model: request.model.definition.providerModel ?? request.model.name,
      max_tokens:
        request.maxOutputTokens ??
        request.model.definition.maxOutputTokens ??
        ANTHROPIC_MAX_TOKENS_DEFAULT,
      messages: toAnthropicMessages(request.messages),
      ...(system === '' ? {} : { system }),
      ...(request.tools.length > 0 ? { tools: request.tools.map(toAnthropicTool) } : {}),
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    };
    const startedAt = performance.now();
    let firstTokenMs: number | undefined;
    try {
      let message: Message;
      if (request.stream === true) {
        const stream = client.messages.stream(body, { signal });
        stream.on('streamEvent', () => {
          firstTokenMs ??= performance.now() - startedAt;
        });
        stream.on('text', (delta) => hooks.onDelta?.(delta));
        message = await stream.finalMessage();
      } else {
        message = await client.messages.create(body, { signal });
        firstTokenMs = performance.now() - startedAt;
      }
      return toResponse(message, endpoint.id, firstTokenMs);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (
        typeof error === 'object' &&
        error !== null &&
        (error as { name?: unknown }).name === 'KeelError'
      )
        throw error;
      throw classifyProviderError(error, endpoint.id, keySource(endpoint));
    }
  }

  #client(endpoint: ProviderEndpoint): Anthropic {
    let client = this.#clients.get(endpoint.id);
    if (client === undefined) {
      // Explicit key and URL: the SDK must not read ANTHROPIC_* variables (config.ts owns the
      // environment).
      client = new Anthropic({
        apiKey: endpoint.apiKey ?? 'no-key',
        baseURL: endpoint.baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL,
        maxRetries: 0,
        timeout: SDK_TIMEOUT_MS,
      });
      this.#clients.set(endpoint.id, client);
    }
    return client;
  }
}

/**
 * Anthropic alternates user and assistant turns; tool results are user content blocks, merged into
 * one turn.
 */
function toAnthropicMessages(messages: readonly ChatMessage[]): MessageParam[] {
  const out: MessageParam[] = [];
  for (const message of messages) {
    if (message.role === 'system') continue;
    const next = toAnthropicMessage(message);
    const last = out.at(-1);
    if (last !== undefined && last.role === next.role) {
      last.content = [...asBlocks(last.content), ...asBlocks(next.content)];
    } else {
      out.push(next);
    }
  }
  return out;
}

function toAnthropicMessage(message: ChatMessage): MessageParam {
  if (message.role === 'tool') {
    return {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: message.toolCallId ?? '', content: message.content },
      ],
    };
  }
  if (
    message.role === 'assistant' &&
    message.toolCalls !== undefined &&
    message.toolCalls.length > 0
  ) {
    return {
      role: 'assistant',
      content: [
        ...(message.content === '' ? [] : [{ type: 'text' as const, text: message.content }]),
        ...message.toolCalls.map((call) => ({
          type: 'tool_use' as const,
          id: call.id,
          name: call.name,
          input: call.args,
        })),
      ],
    };
  }
  return { role: message.role === 'assistant' ? 'assistant' : 'user', content: message.content };
}

function asBlocks(content: MessageParam['content']): Exclude<MessageParam['content'], string> {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

function toAnthropicTool(tool: ProviderRequest['tools'][number]): Tool {
  return {
    name: tool.name,
    description: tool.description,
    input_schema: { type: 'object', ...tool.parameters } as Tool['input_schema'],
  };
}

function toResponse(
  message: Message,
  endpointId: string,
  firstTokenMs: number | undefined,
): ProviderResponse {
  if (!Array.isArray(message.content))
    throw invalidResponse(endpointId, 'the message has no content blocks');
  let text = '';
  const toolCalls: ToolCall[] = [];
  for (const block of message.content) {
    if (block.type === 'text') text += block.text;
    else if (block.type === 'tool_use') {
      if (typeof block.input !== 'object' || block.input === null || Array.isArray(block.input))
        throw invalidResponse(endpointId, 'tool input is not an object');
      toolCalls.push({
        id: block.id,
        name: block.name,
        args: block.input as Record<string, unknown>,
      });
    }
  }
  const usage = message.usage;
  const cached = usage?.cache_read_input_tokens ?? 0;
  return {
    text,
    toolCalls,
    // Anthropic's input_tokens excludes cache reads and writes; Keel counts all input, cached
    // included.
    inputTokens: (usage?.input_tokens ?? 0) + cached + (usage?.cache_creation_input_tokens ?? 0),
    outputTokens: usage?.output_tokens ?? 0,
    cachedInputTokens: cached,
    ...(firstTokenMs === undefined ? {} : { firstTokenMs }),
    ...(typeof message.model === 'string' ? { providerModel: message.model } : {}),
  };
}
