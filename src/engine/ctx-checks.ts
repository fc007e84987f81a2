// The checks a ctx call passes before it takes a journal position (a call failing them takes none):
// the same in the main thread's ctx and in an isolate's, so both count positions alike.
import { KeelError } from '../domain/keel-error.ts';
import { MESSAGE_KEY_PREFIX, isMessageKey } from '../domain/messages.ts';
import { isAgentDefinition, isToolDefinition } from '../sdk/define.ts';
import type {
  AgentDefinition,
  ChildOptions,
  Json,
  ParentEndPolicy,
  ToolDefinition,
} from '../sdk/types.ts';
import type { AgentRegistry } from './registry.ts';
import { toJson } from './journal-cursor.ts';
import { assertArgumentsFit, TOOL_ARGUMENTS_MAX_BYTES_DEFAULT } from './argument-size.ts';

const WAIT_KEY_MAX_CHARS = 256;

/**
 * Validates a tool call's arguments (their size, then the tool's schema); returns them as JSON.
 */
export function parseToolArgs(tool: ToolDefinition<unknown, Json>, args: unknown): Json {
  if (!isToolDefinition(tool))
    throw new TypeError('ctx.tool() expects a tool made with defineTool()');
  assertArgumentsFit(tool.name, args, tool.maxArgumentBytes ?? TOOL_ARGUMENTS_MAX_BYTES_DEFAULT);
  const parsed = tool.input.safeParse(args);
  if (!parsed.success) {
    throw new KeelError(
      'tool_input_invalid',
      `arguments of tool ${tool.name} are invalid: ${parsed.error.message}`,
      { details: { tool: tool.name } },
    );
  }
  return toJson(parsed.data);
}

export function checkWaitForInput(key: unknown, timeoutMs: number | undefined): void {
  if (typeof key !== 'string' || key.length === 0 || key.length > WAIT_KEY_MAX_CHARS) {
    throw new TypeError(
      `ctx.waitForInput() key must be a string of 1 to ${WAIT_KEY_MAX_CHARS} characters`,
    );
  }
  if (isMessageKey(key))
    throw new TypeError(
      `ctx.waitForInput() keys starting with ${MESSAGE_KEY_PREFIX} are reserved for messages (ctx.receive)`,
    );
  if (timeoutMs !== undefined && (!Number.isFinite(timeoutMs) || timeoutMs < 0))
    throw new TypeError('ctx.waitForInput() timeoutMs must be a non-negative number');
}

export function checkSleep(ms: unknown): void {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)
    throw new TypeError('ctx.sleep() expects a non-negative number of milliseconds');
}

/**
 * The agent a ctx.child() call names: a name (latest version) or a definition (its exact version).
 */
export function resolveChild(
  registry: AgentRegistry,
  ref: string | AgentDefinition,
): AgentDefinition {
  const agent =
    typeof ref === 'string'
      ? registry.resolve(ref)
      : isAgentDefinition(ref)
        ? registry.resolve(`${ref.name}@${ref.version}`)
        : undefined;
  if (agent === undefined)
    throw new TypeError('ctx.child() expects an agent name or an agent made with defineAgent()');
  return agent;
}

/** The child's parent-end policy, checked: a typo must not silently detach (or cancel) a child. */
export function parentEndPolicy(options: ChildOptions | undefined): ParentEndPolicy {
  const policy = options?.onParentEnd ?? 'cancel';
  if (policy !== 'cancel' && policy !== 'detach' && policy !== 'wait')
    throw new KeelError(
      'validation_failed',
      `ctx.child: onParentEnd is 'cancel', 'detach' or 'wait', got ${JSON.stringify(policy)}`,
    );
  return policy;
}
