// Translates between the AI SDK's language-model prompt (LanguageModelV3Prompt) and Keel's chat
// messages, and Keel's model answer back into the SDK's content parts. Pure functions: they run in
// replayed agent code, so they must never touch the world, read a clock or draw randomness.
import type {
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3Prompt,
  LanguageModelV3ToolResultOutput,
  LanguageModelV3Usage,
  SharedV3Warning,
} from '@ai-sdk/provider';
import { KeelError } from '../../domain/keel-error.ts';
import type { ChatMessage, ModelResponse, ModelToolSpec, ToolCall } from '../../sdk/types.ts';

/** Call options the gateway does not carry: each one set is reported as an `unsupported` warning. */
const UNCARRIED_SETTINGS = [
  'stopSequences',
  'topP',
  'topK',
  'presencePenalty',
  'frequencyPenalty',
  'seed',
] as const;

function unsupported(what: string): KeelError {
  return new KeelError(
    'model_content_unsupported',
    `keel/ai-sdk: ${what} cannot go through Keel's model gateway (it carries text, tool calls and tool results)`,
    { details: { content: what } },
  );
}

/** The prompt as Keel chat messages; throws `model_content_unsupported` for files and images. */
export function toChatMessages(prompt: LanguageModelV3Prompt): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (const message of prompt) {
    switch (message.role) {
      case 'system':
        messages.push({ role: 'system', content: message.content });
        break;
      case 'user': {
        const texts: string[] = [];
        for (const part of message.content) {
          if (part.type !== 'text') throw unsupported(`a ${part.mediaType} file in a user message`);
          texts.push(part.text);
        }
        messages.push({ role: 'user', content: texts.join('\n') });
        break;
      }
      case 'assistant': {
        const texts: string[] = [];
        const toolCalls: ToolCall[] = [];
        for (const part of message.content) {
          if (part.type === 'text') texts.push(part.text);
          else if (part.type === 'tool-call') {
            if (part.providerExecuted === true) throw unsupported('a provider-executed tool call');
            toolCalls.push({
              id: part.toolCallId,
              name: part.toolName,
              args: toolArgs(part.input),
            });
          } else if (part.type === 'file') throw unsupported('a file in an assistant message');
          // reasoning parts are the model's own notes: not sent back
        }
        messages.push({
          role: 'assistant',
          content: texts.join(''),
          ...(toolCalls.length > 0 ? { toolCalls } : {}),
        });
        break;
      }
      case 'tool':
        for (const part of message.content) {
          if (part.type !== 'tool-result') continue; // approval responses concern provider-executed tools
          messages.push({
            role: 'tool',
            toolCallId: part.toolCallId,
            name: part.toolName,
            content: toolResultText(part.output),
          });
        }
        break;
      default: {
        const unreachable: never = message;
        throw unsupported(`a message of role ${(unreachable as { role: string }).role}`);
      }
    }
  }
  return messages;
}

function toolArgs(input: unknown): Record<string, unknown> {
  const value = typeof input === 'string' ? JSON.parse(input === '' ? '{}' : input) : input;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { input: value as unknown };
  return value as Record<string, unknown>;
}

/** A tool result as the text a chat model reads in the `tool` message. */
function toolResultText(output: LanguageModelV3ToolResultOutput): string {
  switch (output.type) {
    case 'text':
    case 'error-text':
      return output.value;
    case 'json':
    case 'error-json':
      return JSON.stringify(output.value);
    case 'execution-denied':
      return `Tool execution denied${output.reason === undefined ? '' : `: ${output.reason}`}`;
    case 'content':
      return output.value
        .map((part) => {
          if (part.type !== 'text') throw unsupported(`a tool result part of type ${part.type}`);
          return part.text;
        })
        .join('\n');
    default: {
      const unreachable: never = output;
      throw unsupported(`a tool result of type ${(unreachable as { type: string }).type}`);
    }
  }
}

/** The function tools offered to the model, as Keel tool specs; provider tools are refused. */
export function toToolSpecs(
  tools: LanguageModelV3CallOptions['tools'],
  toolChoice: LanguageModelV3CallOptions['toolChoice'],
): ModelToolSpec[] {
  if (tools === undefined || toolChoice?.type === 'none') return [];
  return tools.map((tool) => {
    if (tool.type !== 'function') throw unsupported(`the provider tool ${tool.id}`);
    return {
      name: tool.name,
      description: tool.description ?? '',
      parameters: tool.inputSchema as Record<string, unknown>,
    };
  });
}

/** Warnings for the call options Keel's gateway cannot honour. */
export function warningsFor(options: LanguageModelV3CallOptions): SharedV3Warning[] {
  const warnings: SharedV3Warning[] = [];
  for (const setting of UNCARRIED_SETTINGS)
    if (options[setting] !== undefined) warnings.push({ type: 'unsupported', feature: setting });
  if (options.toolChoice?.type === 'required' || options.toolChoice?.type === 'tool')
    warnings.push({
      type: 'unsupported',
      feature: 'toolChoice',
      details: `toolChoice ${options.toolChoice.type} is sent as auto`,
    });
  if (options.responseFormat?.type === 'json')
    warnings.push({
      type: 'unsupported',
      feature: 'responseFormat',
      details: 'JSON output is not enforced by the gateway; ask for it in the prompt',
    });
  return warnings;
}

/** Keel's answer as the SDK's content parts: the text, then the tool calls, in order. */
export function toContent(response: ModelResponse): LanguageModelV3Content[] {
  const content: LanguageModelV3Content[] = [];
  if (response.text !== '') content.push({ type: 'text', text: response.text });
  for (const call of response.toolCalls)
    content.push({
      type: 'tool-call',
      toolCallId: call.id,
      toolName: call.name,
      input: JSON.stringify(call.args),
    });
  return content;
}

export function finishReasonOf(response: ModelResponse): LanguageModelV3FinishReason {
  return response.toolCalls.length > 0
    ? { unified: 'tool-calls', raw: 'tool_calls' }
    : { unified: 'stop', raw: 'stop' };
}

export function usageOf(response: ModelResponse): LanguageModelV3Usage {
  const { inputTokens, outputTokens, cachedInputTokens = 0 } = response.usage;
  return {
    inputTokens: {
      total: inputTokens,
      noCache: inputTokens - cachedInputTokens,
      cacheRead: cachedInputTokens,
      cacheWrite: undefined,
    },
    outputTokens: { total: outputTokens, text: outputTokens, reasoning: undefined },
  };
}
