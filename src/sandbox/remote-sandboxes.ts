// The port through which built-in sandbox tools send a call to a sandbox node instead of running it
// in this process (issue 24). The placer (src/nodes/sandbox-placer.ts) implements it; the runtime
// hands it to tools through their ToolNode when KEEL_SANDBOX_PLACEMENT=nodes. Types only.
import type { SandboxCallOutcome, SandboxCallRequest } from './sandbox-call.ts';

/** What the engine does with the call if its node is lost mid-call (the tool's effect class). */
export type RemoteCallEffect = 'read' | 'idempotent' | 'side-effect';

export interface RemoteSandboxes {
  /**
   * Places the call on a node and waits for its outcome. A node lost mid-call: a `read` or
   * `idempotent` call is placed again elsewhere; a side effect throws `node_lost` (the engine
   * treats its outcome as unknown). No node accepting it by the placement deadline:
   * `nodes_unavailable` (retryable).
   */
  call(
    request: Omit<SandboxCallRequest, 'onOutput' | 'stopRequested'>,
    effect: RemoteCallEffect,
  ): Promise<SandboxCallOutcome>;
}
