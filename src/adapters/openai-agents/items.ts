// Translates between the OpenAI Agents SDK's model request (instructions, input items, function
// tools, handoffs) and Keel's chat messages and tool specs, and Keel's answer back into output
// items. Pure functions: they run in replayed agent code, so they never touch the world, read a
// clock or draw randomness. A handoff is offered to the model as the function tool the SDK names
// for it (`transfer_to_…`); the SDK itself switches agents when the model calls it.
import type {
  AgentInputItem,
  AssistantMessageItem,
  FunctionCallItem,
  ModelRequest as AgentsModelRequest,
} from '@openai/agents';
import { KeelError } from '../../domain/keel-error.ts';
import type { ChatMessage, ModelResponse, ModelToolSpec, ToolCall } from '../../sdk/types.ts';

function unsupported(what: string): KeelError {
  return new KeelError(
    'model_content_unsupported',
    `keel/openai-agents: ${what} cannot go through Keel's model gateway (it carries text, function calls and their results)`,
    { details: { content: what } },
  );
}

/** The request's conversation as Keel chat messages, the system instructions first. */
export function toChatMessages(request: AgentsModelRequest): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (request.systemInstructions !== undefined && request.systemInstructions !== '')
    messages.push({ role: 'system', content: request.systemInstructions });
  if (typeof request.input === 'string') {
    messages.push({ role: 'user', content: request.input });
    return messages;
  }
  // Function calls following an assistant message belong to it (one chat turn), as in Chat
  // Completions.
  let turn: ChatMessage | undefined;
  for (const item of request.input) {
    if (item.type === 'function_call') {
      if (turn === undefined) {
        turn = { role: 'assistant', content: '', toolCalls: [] };
        messages.push(turn);
      }
      turn.toolCalls = [
        ...(turn.toolCalls ?? []),
        functionCall(item.callId, item.name, item.arguments),
      ];
      continue;
    }
    turn = undefined;
    const message = toChatMessage(item);
    if (message === undefined) continue;
    messages.push(message);
    if (message.role === 'assistant') turn = message;
  }
  return messages;
}

/** One input item (not a function call) as a chat message; undefined for items left out. */
function toChatMessage(item: AgentInputItem): ChatMessage | undefined {
  if (item.type === 'reasoning') return undefined; // the model's own notes: not sent back
  if (item.type === 'function_call_result') {
    return {
      role: 'tool',
      toolCallId: item.callId,
      name: item.name,
      content: outputText(item.output),
    };
  }
  if (item.type !== undefined && item.type !== 'message')
    throw unsupported(`an item of type ${item.type}`);
  if (!('role' in item)) throw unsupported('an item without a role');
  switch (item.role) {
    case 'system':
      return { role: 'system', content: item.content };
    case 'user': {
      if (typeof item.content === 'string') return { role: 'user', content: item.content };
      const texts = item.content.map((part) => {
        if (part.type !== 'input_text') throw unsupported(`user content of type ${part.type}`);
        return part.text;
      });
      return { role: 'user', content: texts.join('\n') };
    }
    case 'assistant': {
      const texts = item.content.map((part) => {
        if (part.type === 'output_text') return part.text;
        if (part.type === 'refusal') return part.refusal;
        throw unsupported(`assistant content of type ${part.type}`);
      });
      return { role: 'assistant', content: texts.join('') };
    }
    default:
      throw unsupported('a message of an unknown role');
  }
}

function functionCall(callId: string, name: string, args: string): ToolCall {
  const value: unknown = JSON.parse(args === '' ? '{}' : args);
  const object =
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : { input: value };
  return { id: callId, name, args: object };
}

function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  const part = output as { type?: string; text?: string } | null;
  if (part?.type === 'text' && typeof part.text === 'string') return part.text;
  if (Array.isArray(output))
    return output
      .map((p: { type?: string; text?: string }) => {
        if (p.type !== 'input_text' && p.type !== 'text')
          throw unsupported(`a function result part of type ${p.type}`);
        return p.text ?? '';
      })
      .join('\n');
  throw unsupported(`a function result of type ${part?.type}`);
}

/** Function tools and handoffs as Keel tool specs; hosted tools are refused. */
export function toToolSpecs(request: AgentsModelRequest): ModelToolSpec[] {
  const specs: ModelToolSpec[] = request.tools.map((tool) => {
    if (tool.type !== 'function') throw unsupported(`the hosted tool ${tool.name}`);
    return { name: tool.name, description: tool.description, parameters: tool.parameters };
  });
  for (const handoff of request.handoffs)
    specs.push({
      name: handoff.toolName,
      description: handoff.toolDescription,
      parameters: handoff.inputJsonSchema as Record<string, unknown>,
    });
  return specs;
}

/** Keel's answer as output items: the assistant message (if any text), then the function calls. */
export function toOutputItems(
  response: ModelResponse,
): Array<AssistantMessageItem | FunctionCallItem> {
  const output: Array<AssistantMessageItem | FunctionCallItem> = [];
  if (response.text !== '' || response.toolCalls.length === 0)
    output.push({
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: response.text }],
    });
  for (const call of response.toolCalls)
    output.push({
      type: 'function_call',
      callId: call.id,
      name: call.name,
      arguments: JSON.stringify(call.args),
      status: 'completed',
    });
  return output;
}

/** The answer's usage in the SDK's wire form (what `new Usage(...)` and `response_done` take). */
export function usageData(response: ModelResponse) {
  const { inputTokens, outputTokens, cachedInputTokens = 0 } = response.usage;
  return {
    requests: 1,
    inputTokens,
    outputTokens,
    totalTokens: inputTokens + outputTokens,
    inputTokensDetails: { cached_tokens: cachedInputTokens },
  };
}
