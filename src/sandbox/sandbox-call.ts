// One sandboxed program run, as the built-in tools make it: in the run's environment under its
// profile, with the profile's secrets revealed per call and placed without a command line, then the
// workspace snapshot. Shared by the local path (sandbox-tools.ts, this process's manager) and a
// sandbox node (src/nodes/node-server.ts, the node's manager), so both run a call the same way.
import type { OutputListener } from './output-capture.ts';
import type { ExecResult } from './launch.ts';
import type { SandboxProfile } from './profile.ts';
import type { SandboxManager } from './sandbox-manager.ts';
import { withSecretFiles } from './secret-files.ts';

export interface SandboxCallRequest {
  tenantId: string;
  runId: string;
  executionId: string;
  profile: SandboxProfile;
  argv: string[];
  stdin?: string | undefined;
  env?: Record<string, string> | undefined;
  deadlineMs?: number | undefined;
  /** False for the tools that only read the workspace: they commit no snapshot. */
  snapshot: boolean;
  /** Set the profile's secret variables and files (`exec` only). */
  secrets: boolean;
  signal?: AbortSignal | undefined;
  stopRequested?: AbortSignal | undefined;
  onOutput?: OutputListener | undefined;
}

export interface SandboxCallOutcome {
  result: ExecResult;
  manifestSha256: string | undefined;
  cold: boolean;
}

export async function runSandboxCall(
  manager: SandboxManager,
  request: SandboxCallRequest,
): Promise<SandboxCallOutcome> {
  const { profile } = request;
  const use = { runId: request.runId, executionId: request.executionId };
  const outcome = await manager.call(
    request.runId,
    profile,
    async (env) => {
      // Secrets the profile declares as variables or files are revealed per call (a rotation
      // counts at once) and travel like any variable: never on a command line. Files are written
      // by a shell builtin before the program starts (secret-files.ts).
      const placed = request.secrets
        ? withSecretFiles(request.argv, await manager.secretFiles(request.tenantId, profile, use))
        : { argv: request.argv, env: {} };
      return env.exec({
        argv: placed.argv,
        stdin: request.stdin,
        env: request.secrets
          ? {
              ...request.env,
              ...(await manager.secretEnv(request.tenantId, profile, use)),
              ...placed.env,
            }
          : request.env,
        deadlineMs: request.deadlineMs,
        signal: request.signal,
        stopRequested: request.stopRequested,
        onOutput: request.onOutput,
      });
    },
    { tenantId: request.tenantId, executionId: request.executionId, snapshot: request.snapshot },
  );
  return { result: outcome.value, manifestSha256: outcome.manifestSha256, cold: outcome.cold };
}
