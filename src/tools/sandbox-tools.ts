// The built-in workspace tools — exec, read_file, write_file, list_files — as ordinary Keel tools
// (effect classes, execution ids, journaling come from the engine). Every one of them runs inside
// the run's sandbox through the SandboxManager, so even reading a file goes through the sandbox's
// view. A path argument can never be an option (workspace-paths.ts: relative, no `..`, no leading
// `-`, passed as `./…`) and is never followed through a symbolic link; list_files returns
// NUL-separated names, so no name can forge an entry. Results carry the workspace manifest
// committed with the step and the execution's usage; read_file and list_files commit no snapshot.
// `exec` is a side effect unless the call (`effect`) or the profile (`execEffect`) declares it
// `read` or `idempotent`, which makes a crash mid-command re-run it rather than park the run. Its
// profile's secret variables and files are revealed per call and placed without a command line. The
// manager is the one passed in, else the cluster's sandbox nodes when the runtime places calls on
// them (ctx.node.sandboxNodes), else this node's own from the tool's context: this module holds no
// manager of its own.
import { DELEGATION_ENV } from '../domain/delegation.ts';
import { z } from 'zod';
import { KeelError } from '../domain/keel-error.ts';
import type { ExecResult } from '../sandbox/launch.ts';
import { DEFAULT_SANDBOX_ARGUMENTS_MAX_BYTES, type SandboxProfile } from '../sandbox/profile.ts';
import type { SandboxManager } from '../sandbox/sandbox-manager.ts';
import type { RemoteCallEffect } from '../sandbox/remote-sandboxes.ts';
import { runSandboxCall } from '../sandbox/sandbox-call.ts';
import { defineTool } from '../sdk/define.ts';
import type { Json, ToolContext, ToolDefinition } from '../sdk/types.ts';
import {
  GUARD,
  GUARD_REFUSED_EXIT,
  normalizeWorkspacePath,
  sandboxArgument,
  WorkspacePath,
} from './workspace-paths.ts';

/** `./…` path in $1, checked by GUARD: read it if it is a regular file. */
const READ_SCRIPT = `${GUARD}
if [ ! -f "$p" ]; then printf '%s is not a regular file\\n' "\${p#./}" >&2; exit ${GUARD_REFUSED_EXIT}; fi
exec dd if="$p" iflag=nofollow bs=65536 status=none`;
/** `./…` path in $1, checked by GUARD: create its directories, then write stdin to it. */
const WRITE_SCRIPT = `${GUARD}
if [ -e "$p" ] && [ ! -f "$p" ]; then printf '%s is not a regular file\\n' "\${p#./}" >&2; exit ${GUARD_REFUSED_EXIT}; fi
mkdir -p -- "$(dirname -- "$p")" || exit 1
exec dd of="$p" oflag=nofollow bs=65536 status=none`;
/**
 * `./…` path in $1, checked by GUARD: list it as NUL-separated (kind, size, name) triples — a name
 * holds any byte but NUL, so no name can end its entry early or add a forged one.
 */
const LIST_SCRIPT = `${GUARD}
if [ ! -d "$p" ]; then printf '%s is not a directory\\n' "\${p#./}" >&2; exit ${GUARD_REFUSED_EXIT}; fi
exec find "$p" -mindepth 1 -printf '%y\\0%s\\0%P\\0'`;

/** Beyond start-up and the command's deadline: waiting for the run's earlier call, the snapshot. */
const SANDBOX_CALL_MARGIN_MS = 5 * 60_000;
/** Longest single argv entry or env value `exec` accepts. */
const EXEC_STRING_MAX_CHARS = 64 * 1024;
/** Room for a write_file call's path and JSON beyond its content. */
const WRITE_FILE_OVERHEAD_BYTES = 16 * 1024;
/** No tier can pass a NUL inside an argument or variable (gVisor cut argv there silently): refused. */
const NoNul = z
  .string()
  .max(EXEC_STRING_MAX_CHARS)
  .refine((value) => !value.includes('\0'), { message: 'must not contain a NUL byte' });
const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,255}$/, {
  message: 'must be a variable name ([A-Za-z_][A-Za-z0-9_]*)',
});

export interface SandboxToolsOptions {
  /**
   * Default: the sandbox manager of the node running the tool (`ctx.node`: workspaces under its
   * data directory).
   */
  manager?: SandboxManager;
  profile: SandboxProfile;
  /** Environment variable names the model may set for `exec`; any other name is refused. */
  envAllowlist?: string[];
  /** Prefix for the tool names, when an agent uses several profiles. */
  prefix?: string;
}

type ExecJson = {
  exitCode: number | null;
  signal: string | null;
  limit: string | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  usage: { wallMs: number; cpuSeconds: number; peakMemoryBytes: number; cold: boolean };
  workspace: { manifest: string };
};

const EXEC_EFFECTS = ['read', 'idempotent', 'side-effect'] as const;

function toJson(result: ExecResult, cold: boolean, manifest: string): ExecJson {
  return {
    exitCode: result.exitCode,
    signal: result.signal,
    limit: result.limit,
    stdout: result.stdout,
    stderr: result.stderr,
    truncated: result.truncated,
    usage: {
      wallMs: Math.round(result.wallMs * 1000) / 1000,
      cpuSeconds: result.cpuSeconds,
      peakMemoryBytes: result.peakMemoryBytes,
      cold,
    },
    workspace: { manifest },
  };
}

/**
 * The variables carrying a profile's delegated token to `exec`'s program (the profile opted in with
 * `delegate`): in the environment, never on argv, and set after the caller's own variables so a
 * call cannot replace them.
 */
function delegationEnv(ctx: ToolContext): Record<string, string> {
  const delegation = ctx.delegation;
  if (delegation === undefined) return {};
  return {
    [DELEGATION_ENV.token]: delegation.token,
    ...(delegation.apiUrl !== undefined ? { [DELEGATION_ENV.apiUrl]: delegation.apiUrl } : {}),
  };
}

const isDelegationVariable = (name: string): boolean =>
  name === DELEGATION_ENV.token || name === DELEGATION_ENV.apiUrl;

/**
 * The built-in tools bound to one sandbox profile.
 * @example
 * import { defineSandboxProfile, sandboxTools } from 'keel/sandbox';
 * const tools = sandboxTools({ profile: defineSandboxProfile({ name: 'shell', tier: 'namespace', policy: 'rebuild' }) });
 * await ctx.tool(tools.exec, { argv: ['python3', '-c', 'print(1)'] });
 */
export function sandboxTools(options: SandboxToolsOptions) {
  const { profile } = options;
  const managerFor = (ctx: ToolContext): SandboxManager => {
    const manager = options.manager ?? ctx.node.sandboxManager();
    if (manager === undefined) {
      throw new KeelError(
        'sandbox_unavailable',
        `tool ${name('exec')} needs a sandbox manager: this engine was started without one (pass sandboxTools({ manager }) or run under keel dev|server|worker)`,
      );
    }
    return manager;
  };
  const allowed = new Set(options.envAllowlist ?? []);
  const name = (base: string) => `${options.prefix ?? ''}${base}`;
  /**
   * Every tool of a profile queues in that profile's pool, apart from inline tools and other
   * profiles.
   */
  const pool = `sandbox:${profile.name}`;
  // The sandbox bounds each call itself (start-up, then the command's deadline); the tool's own
  // timeout is a backstop past both, so Keel's default tool timeout never cuts a long command short.
  const callTimeoutMs =
    profile.limits.startupMs + profile.limits.deadlineMs + SANDBOX_CALL_MARGIN_MS;
  const argumentsMaxBytes = profile.argumentsMaxBytes ?? DEFAULT_SANDBOX_ARGUMENTS_MAX_BYTES;
  const run = async (
    ctx: ToolContext,
    argv: string[],
    extra: {
      stdin?: string;
      env?: Record<string, string>;
      deadlineMs?: number;
      /** False for the tools that only read the workspace: they commit no snapshot. */
      snapshot?: boolean;
      /** Set the profile's secret variables (`exec` only). */
      secrets?: boolean;
      /** Stream the program's output to the run's live followers (`exec` only, local calls). */
      live?: boolean;
      /** What a lost node means for this call (sandbox nodes: re-place it, or its outcome is unknown). */
      effect: RemoteCallEffect;
    },
  ) => {
    const request = {
      tenantId: ctx.tenantId,
      runId: ctx.runId,
      executionId: ctx.executionId,
      profile,
      argv,
      stdin: extra.stdin,
      env: extra.env,
      deadlineMs: extra.deadlineMs,
      snapshot: extra.snapshot ?? true,
      secrets: extra.secrets ?? false,
      signal: ctx.signal,
    };
    // A manager passed in is this process's by choice; otherwise the cluster's nodes when the
    // runtime places calls on them, else this node's own sandboxes.
    const nodes = options.manager === undefined ? ctx.node.sandboxNodes?.() : undefined;
    const outcome =
      nodes !== undefined
        ? await nodes.call(request, extra.effect)
        : await runSandboxCall(managerFor(ctx), {
            ...request,
            stopRequested: ctx.stopping,
            onOutput: extra.live ? ctx.output : undefined,
          });
    return { result: outcome.result, manifest: outcome.manifestSha256, cold: outcome.cold };
  };

  const exec = defineTool({
    name: name('exec'),
    effect: 'side-effect',
    pool,
    timeoutMs: callTimeoutMs,
    maxArgumentBytes: argumentsMaxBytes,
    description:
      'Runs a command (argv) in the sandboxed workspace and returns its exit status, output and the limit that ended it, if any.',
    input: z.object({
      argv: z.array(NoNul).min(1).max(1024),
      stdin: z.string().max(profile.limits.outputMaxBytes).optional(),
      env: z.record(EnvName, NoNul).optional(),
      timeoutMs: z.number().int().min(1).max(profile.limits.deadlineMs).optional(),
      effect: z
        .enum(EXEC_EFFECTS)
        .optional()
        .describe(
          "What running this command again after a crash would do: 'read' (it changes nothing), 'idempotent' (the same outcome again) or 'side-effect' (unsafe to repeat; the default unless the profile says otherwise)",
        ),
    }),
    effectOf: (args) => args.effect ?? profile.execEffect,
    ...(profile.delegate.length > 0 ? { delegate: profile.delegate } : {}),
    async run(args, ctx): Promise<ExecJson> {
      for (const key of Object.keys(args.env ?? {})) {
        if (!allowed.has(key) || isDelegationVariable(key))
          throw new KeelError(
            'tool_input_invalid',
            `environment variable ${key} is not in this tool's allowlist`,
          );
      }
      const { result, manifest, cold } = await run(ctx, args.argv, {
        stdin: args.stdin,
        // Only a profile that opted in passes a token on, whatever the context carries.
        env: { ...args.env, ...(profile.delegate.length > 0 ? delegationEnv(ctx) : {}) },
        deadlineMs: args.timeoutMs,
        secrets: true,
        live: true,
        effect: args.effect ?? profile.execEffect,
      });
      return toJson(result, cold, manifest!);
    },
  });

  const readFile = defineTool({
    name: name('read_file'),
    effect: 'read',
    pool,
    timeoutMs: callTimeoutMs,
    maxArgumentBytes: argumentsMaxBytes,
    description: 'Reads a UTF-8 file from the workspace.',
    input: z.object({ path: WorkspacePath }),
    async run(args, ctx): Promise<{ content: string; truncated: boolean }> {
      const { result } = await run(
        ctx,
        ['/bin/sh', '-c', READ_SCRIPT, 'read_file', sandboxArgument(args.path)],
        { snapshot: false, effect: 'read' },
      );
      if (result.exitCode !== 0 && !result.truncated)
        throw new KeelError(
          'workspace_path_invalid',
          `cannot read ${args.path}: ${result.stderr.trim()}`,
        );
      return { content: result.stdout, truncated: result.truncated };
    },
  });

  const writeFile = defineTool({
    name: name('write_file'),
    effect: 'idempotent',
    pool,
    timeoutMs: callTimeoutMs,
    maxArgumentBytes:
      profile.argumentsMaxBytes ?? profile.limits.fileBytes + WRITE_FILE_OVERHEAD_BYTES,
    description: 'Writes a UTF-8 file in the workspace, creating parent directories.',
    input: z.object({ path: WorkspacePath, content: z.string().max(profile.limits.fileBytes) }),
    async run(args, ctx): Promise<{ bytes: number; workspace: { manifest: string } }> {
      const { result, manifest } = await run(
        ctx,
        ['/bin/sh', '-c', WRITE_SCRIPT, 'write_file', sandboxArgument(args.path)],
        { stdin: args.content, effect: 'idempotent' },
      );
      if (result.exitCode !== 0) {
        throw new KeelError(
          result.limit === 'disk_limit' ? 'workspace_limit' : 'workspace_path_invalid',
          `cannot write ${args.path}: ${result.stderr.trim() || result.limit}`,
        );
      }
      return { bytes: Buffer.byteLength(args.content), workspace: { manifest: manifest! } };
    },
  });

  const listFiles = defineTool({
    name: name('list_files'),
    effect: 'read',
    pool,
    timeoutMs: callTimeoutMs,
    maxArgumentBytes: argumentsMaxBytes,
    description: 'Lists the files in the workspace (or a directory of it) with their sizes.',
    input: z.object({ path: WorkspacePath.optional() }),
    async run(args, ctx): Promise<{ files: ListedFile[]; truncated: boolean }> {
      const { result } = await run(
        ctx,
        ['/bin/sh', '-c', LIST_SCRIPT, 'list_files', sandboxArgument(args.path ?? '.')],
        { snapshot: false, effect: 'read' },
      );
      if (result.exitCode !== 0 && !result.truncated)
        throw new KeelError(
          'workspace_path_invalid',
          `cannot list ${args.path ?? '.'}: ${result.stderr.trim()}`,
        );
      const prefix = args.path === undefined ? '' : normalizeWorkspacePath(args.path);
      return {
        files: parseListing(result.stdout, prefix === '.' ? '' : prefix),
        truncated: result.truncated,
      };
    },
  });

  return {
    exec,
    read_file: readFile,
    write_file: writeFile,
    list_files: listFiles,
    // biome-ignore lint/suspicious/noExplicitAny: each tool has its own input type; the record only checks the outputs.
  } satisfies Record<string, ToolDefinition<any, Json>>;
}

export type ListedFile = {
  path: string;
  kind: 'file' | 'directory' | 'symlink' | 'other';
  size: number;
};

const KINDS: Record<string, ListedFile['kind']> = { f: 'file', d: 'directory', l: 'symlink' };

/**
 * `find -printf '%y\0%s\0%P\0'` output → entries. Only complete triples count: a listing cut at
 * the output cap loses its last, partial entry rather than inventing one.
 */
export function parseListing(stdout: string, prefix: string): ListedFile[] {
  const fields = stdout.split('\0');
  const files: ListedFile[] = [];
  for (let i = 0; i + 3 <= fields.length - 1; i += 3) {
    const [kind, size, name] = [fields[i]!, fields[i + 1]!, fields[i + 2]!];
    files.push({
      path: prefix === '' ? name : `${prefix}/${name}`,
      kind: KINDS[kind] ?? 'other',
      size: Number(size),
    });
  }
  return files;
}
