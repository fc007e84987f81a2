// The built-in tool-calling loop: ask the model, run the tools it asks for, feed results back,
// repeat. Replayed agent code imports this, so it must touch the world only through `ctx` and never
// import Node modules, the engine, the store or the API.
import type { ErrorCode } from '../domain/error-codes.ts';
import { KeelError, isKeelError } from '../domain/keel-error.ts';
import { CHECKPOINT_STATE_MAX_BYTES } from '../domain/run-snapshot.ts';
import type { ToolPolicy } from '../domain/tool-policy.ts';
import { defineAgent } from './define.ts';
import type {
  AgentContext,
  AgentDefinition,
  ChatMessage,
  Json,
  ToolCall,
  ToolDefinition,
} from './types.ts';

export const LOOP_MAX_STEPS_DEFAULT = 10;
/**
 * Model turns between two automatic checkpoints of the conversation (ctx.checkpoint): a resume
 * replays at most this many turns, however long the conversation has run.
 */
export const LOOP_CHECKPOINT_EVERY_TURNS = 10;
/** Upper bound on `maxSteps`: every loop must end, even one configured carelessly. */
export const LOOP_MAX_STEPS_LIMIT = 1_000;

/**
 * Failures that end the run rather than a tool call: feeding these back to the model would only let
 * it keep spending a run that is cancelled, over budget or no longer ours.
 */
const RUN_LEVEL_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'cancelled',
  'budget_exceeded',
  'non_determinism',
  'stale_write',
  'internal',
]);

export interface LoopAgentSpec {
  name: string;
  version: string;
  /** Model name known to the gateway. */
  model: string;
  /** System prompt. */
  system: string;
  tools?: ReadonlyArray<ToolDefinition<any, any>>;
  /**
   * Model calls allowed before the run fails with `budget_exceeded`; default
   * `LOOP_MAX_STEPS_DEFAULT`.
   */
  maxSteps?: number;
  /**
   * The agent's tool policy (see defineAgent): a call it denies, or a human denies, is fed back to
   * the model as that tool's error.
   */
  policy?: ToolPolicy;
}

/** A type alias, not an interface, so that it is assignable to `Json`. */
export type LoopAgentResult = { text: string; steps: number };

/**
 * Declares an agent that loops model → tools → model until the model answers without tool calls.
 * Input: a string, `{ prompt: string }`, or any JSON (sent to the model as JSON text). Tool calls
 * of one step run concurrently; a tool's failure (or an unknown tool name) is fed back to the model
 * as the tool's result instead of failing the run.
 * @example
 * export const researcher = defineLoopAgent({
 *   name: 'researcher', version: '1', model: 'mock',
 *   system: 'You answer questions using the tools.', tools: [search], maxSteps: 8,
 * });
 */
export function defineLoopAgent(spec: LoopAgentSpec): AgentDefinition<Json, LoopAgentResult> {
  const maxSteps = spec.maxSteps ?? LOOP_MAX_STEPS_DEFAULT;
  if (!Number.isInteger(maxSteps) || maxSteps < 1 || maxSteps > LOOP_MAX_STEPS_LIMIT) {
    throw new TypeError(
      `Agent ${spec.name}: maxSteps must be an integer in [1, ${LOOP_MAX_STEPS_LIMIT}]`,
    );
  }
  const tools = [...(spec.tools ?? [])];
  const toolsByName = new Map(tools.map((tool) => [tool.name, tool]));
  if (toolsByName.size !== tools.length)
    throw new TypeError(`Agent ${spec.name}: tool names must be unique`);

  return defineAgent({
    name: spec.name,
    version: spec.version,
    tools,
    ...(spec.policy === undefined ? {} : { policy: spec.policy }),
    async run(ctx: AgentContext, input: Json): Promise<LoopAgentResult> {
      // A resume re-enters from the last automatic checkpoint: the conversation so far, and the
      // turn it had reached.
      const resumed = ctx.resumedFrom?.state as LoopCheckpoint | undefined;
      const messages: ChatMessage[] =
        resumed !== undefined
          ? [...resumed.messages]
          : [
              { role: 'system', content: spec.system },
              { role: 'user', content: userContent(input) },
            ];
      for (let step = resumed?.nextStep ?? 1; step <= maxSteps; step += 1) {
        const response = await ctx.model({
          model: spec.model,
          messages,
          ...(tools.length > 0 ? { tools } : {}),
        });
        if (response.toolCalls.length === 0) return { text: response.text, steps: step };
        // Tools asked for in the last allowed step would never be read by the model: do not run
        // them.
        if (step === maxSteps) break;
        const results = await Promise.all(
          response.toolCalls.map((call) => runToolCall(ctx, toolsByName, call)),
        );
        messages.push({ role: 'assistant', content: response.text, toolCalls: response.toolCalls });
        response.toolCalls.forEach((call, index) => {
          messages.push({
            role: 'tool',
            content: results[index] ?? 'null',
            toolCallId: call.id,
            name: call.name,
          });
        });
        if (step % LOOP_CHECKPOINT_EVERY_TURNS === 0) await checkpointTurn(ctx, messages, step + 1);
      }
      throw new KeelError(
        'budget_exceeded',
        `Agent ${spec.name} made ${maxSteps} model calls without a final answer`,
        {
          details: { budget: 'maxSteps', maxSteps },
        },
      );
    },
  });
}

/** What the loop's automatic checkpoint holds. */
type LoopCheckpoint = { messages: ChatMessage[]; nextStep: number };

/**
 * Checkpoints the conversation. Optional: a run that started before the loop checkpointed replays
 * as it ran. A conversation too large for a checkpoint is not checkpointed (the same on every
 * replay: its size is journaled content).
 */
async function checkpointTurn(
  ctx: AgentContext,
  messages: ChatMessage[],
  nextStep: number,
): Promise<void> {
  const state = { messages, nextStep } as unknown as Json;
  if (new TextEncoder().encode(JSON.stringify(state)).length > CHECKPOINT_STATE_MAX_BYTES) return;
  await ctx.checkpoint(state, { optional: true });
}

function userContent(input: Json): string {
  if (typeof input === 'string') return input;
  if (
    typeof input === 'object' &&
    input !== null &&
    !Array.isArray(input) &&
    typeof input.prompt === 'string'
  ) {
    return input.prompt;
  }
  return JSON.stringify(input ?? null);
}

/** Runs one requested tool and returns the tool message's content (JSON text). */
async function runToolCall(
  ctx: AgentContext,
  toolsByName: ReadonlyMap<string, ToolDefinition<any, any>>,
  call: ToolCall,
): Promise<string> {
  const tool = toolsByName.get(call.name);
  if (tool === undefined) {
    const known = [...toolsByName.keys()].join(', ') || 'none';
    return JSON.stringify({
      error: {
        message: `Tool ${JSON.stringify(call.name)} does not exist. Available tools: ${known}.`,
      },
    });
  }
  try {
    const result: unknown = await ctx.tool(tool, call.args);
    return JSON.stringify(result ?? null);
  } catch (error) {
    if (!isKeelError(error) || RUN_LEVEL_CODES.has(error.code)) throw error;
    return JSON.stringify({ error: { code: error.code, message: error.message } });
  }
}
