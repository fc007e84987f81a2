// The package root `keel`: what agent and tool authors import. Small and explicit; engine internals stay out.
export { defineAgent, defineModel, defineTool } from './sdk/define.ts';
export { defineLoopAgent } from './sdk/loop-agent.ts';
export type { LoopAgentResult, LoopAgentSpec } from './sdk/loop-agent.ts';
export { KeelError, isKeelError } from './domain/keel-error.ts';
export type { ErrorCode } from './domain/error-codes.ts';
export type {
  AgentContext, AgentDefinition, ChatMessage, Json, MockModelOptions, ModelDefinition, ModelPrice, ModelRateLimits, ModelReplica, ModelRequest, ModelResponse,
  ModelToolSpec, ModelUsage, StepOptions, ToolCall, ToolContext, ToolDefinition, ToolEffect, WaitForInputOptions,
} from './sdk/types.ts';
// Sandboxed tools (issue 6)
export { sandboxTools } from './tools/sandbox-tools.ts';
export type { SandboxToolsOptions } from './tools/sandbox-tools.ts';
export { defineSandboxProfile } from './sandbox/profile.ts';
export type { SandboxProfile, SandboxProfileInput } from './sandbox/profile.ts';
export type { LimitReason } from './sandbox/limits.ts';
export type { LifecyclePolicy } from './sandbox/lifecycle-policy.ts';
export type { Tier } from './sandbox/tiers.ts';
