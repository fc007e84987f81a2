// The package root `keel`: what agent and tool authors import. Small and explicit: it loads the SDK
// only, never the engine, a store, a database driver or the sandbox (built-in sandbox tools live at
// `keel/sandbox`: src/sandbox/index.ts).
export { defineAgent, defineModel, defineTool } from './sdk/define.ts';
export { defineLoopAgent } from './sdk/loop-agent.ts';
export { mcpTool } from './sdk/mcp-tool.ts';
export type { McpToolArguments } from './sdk/mcp-tool.ts';
export type { LoopAgentResult, LoopAgentSpec } from './sdk/loop-agent.ts';
export { KeelError, isKeelError } from './domain/keel-error.ts';
export type { ErrorCode } from './domain/error-codes.ts';
export type {
  AgentContext,
  AgentDefinition,
  AnyOptions,
  ChatMessage,
  ChildOptions,
  FanInBranch,
  Json,
  McpServerSpec,
  MockModelOptions,
  ModelDefinition,
  ModelPrice,
  ModelRateLimits,
  ModelReplica,
  ModelRequest,
  ModelResponse,
  ModelToolSpec,
  ModelUsage,
  ParentEndPolicy,
  CheckpointOptions,
  ReceivedMessage,
  ResumedFrom,
  ReceiveOptions,
  SendOptions,
  SendResult,
  SharedFileEntry,
  SharedFileRead,
  SharedSpace,
  SharedWriteOptions,
  SharedWriteResult,
  StepOptions,
  ToolCall,
  ToolContext,
  ToolDefinition,
  AnyToolDefinition,
  ToolEffect,
  ToolNode,
  WaitForInputOptions,
} from './sdk/types.ts';
export type { DelegatedScope, ToolDelegation } from './domain/delegation.ts';
