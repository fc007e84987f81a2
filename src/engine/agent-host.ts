// Where agent code runs. The orchestrator hands each live run to an AgentHost: `inThreadHost` calls
// the agent function on the thread that serves HTTP and commits (embedded use, tests); the isolate
// host (isolation/) runs it in worker threads under a watchdog, so a run whose code loops, exhausts
// memory or exits costs only that run.
import type { RunExecution } from './run-execution.ts';
import { createAgentContext, type ContextDeps } from './agent-context.ts';
import { parseAgentInput } from './agent-contract.ts';

export interface AgentHost {
  /**
   * Runs the agent function of `execution` to its result (or its error); effects go through `deps`.
   */
  run(execution: RunExecution, deps: ContextDeps): Promise<unknown>;
  /** Stops whatever the host owns (threads); live executions were handed back before. */
  close(): Promise<void>;
}

export const inThreadHost: AgentHost = {
  run: (x, deps) =>
    x.agent!.run(
      createAgentContext(x, deps) as never,
      parseAgentInput(x.agent!, x.run.input) as never,
    ),
  close: async () => {},
};
