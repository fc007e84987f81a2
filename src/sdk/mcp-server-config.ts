// What an MCP server configuration is: a name, how to reach it (a stdio command run as a sandboxed
// service, with a profile's image, limits, network allowlist and secret variables; or a
// streamable-HTTP URL) and per-tool effect-class overrides. One zod schema for the three places a
// configuration comes from (defineAgent, the admin API, the servers file), so they cannot drift.
// In the SDK because defineAgent validates with it: it loads no server code and never starts or
// contacts a server.
import { z } from 'zod';
import { KeelError } from '../domain/keel-error.ts';
import { SecretHeaderSchema } from '../domain/secrets.ts';

/** A server's name: the middle part of its tools' Keel names (`mcp.<server>.<tool>`). */
export const MCP_SERVER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
/** MCP tool names Keel can carry in a tool name (the MCP spec's recommended alphabet). */
export const MCP_TOOL_NAME_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

const EffectClass = z.enum(['read', 'idempotent', 'side-effect']);

const StdioTransport = z.strictObject({
  type: z.literal('stdio'),
  /** Absolute path of the program (the sandbox has no PATH lookup into the host). */
  command: z.string().startsWith('/', 'command must be an absolute path'),
  args: z.array(z.string()).max(64).default([]),
  /**
   * Variables for the server. They reach it through a pipe, never a command line; a credential
   * belongs in `sandbox.secrets.env` (`secret:NAME`), which is revealed per session and audited.
   */
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).default({}),
  /**
   * Host paths made visible read-only at the same path inside the sandbox: the server's package
   * files (its node_modules) and its interpreter when they live outside /usr.
   */
  readOnlyPaths: z.array(z.string().startsWith('/')).max(32).default([]),
  /**
   * Host directory bound writable at /workspace (the server's working directory); default a
   * private empty directory per session.
   */
  workspace: z.string().startsWith('/').optional(),
  /**
   * The sandbox the server runs in: a sandbox profile's `image`, `limits` (its cgroup: memory,
   * pids, CPU; open files and file size), `network` (an allowlist through Keel's egress proxy) and
   * `secrets` (variables from the tenant's secrets). Default: the host's /usr, the default limits,
   * no network. Only its shape is checked here (the SDK loads nothing of the sandbox plane); the
   * node checks it whole against the profile schema when the configuration is stored or loaded
   * and before it starts the server (src/tools/mcp/service-sandbox.ts).
   */
  sandbox: z
    .strictObject({
      image: z.union([z.literal('host'), z.record(z.string(), z.unknown())]).optional(),
      limits: z.record(z.string(), z.unknown()).optional(),
      network: z.record(z.string(), z.unknown()).optional(),
      secrets: z.record(z.string(), z.unknown()).optional(),
    })
    .default({}),
});

const HttpTransport = z.strictObject({
  type: z.literal('http'),
  url: z.url({ protocol: /^https?$/ }),
  /**
   * Request headers whose values are read from Keel's environment at connect time (header name →
   * variable name), so no credential is stored in the configuration.
   */
  headersFromEnv: z.record(z.string(), z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)).default({}),
  /**
   * Request headers whose values are the tenant's secrets (`{ header, secret: 'secret:NAME',
   * format }`), revealed at each connect (a rotated secret is used from the next session on) and
   * audited; never stored in the configuration.
   */
  secretHeaders: z.array(SecretHeaderSchema).max(8).default([]),
});

export const McpServerConfigSchema = z.strictObject({
  name: z.string().regex(MCP_SERVER_NAME_PATTERN),
  transport: z.discriminatedUnion('type', [StdioTransport, HttpTransport]),
  /** Effect class per tool, overriding what the tool's annotations say. */
  effects: z.record(z.string().regex(MCP_TOOL_NAME_PATTERN), EffectClass).default({}),
  /** Per-call time limit in ms (progress notifications do not extend it). Default 60 s. */
  callTimeoutMs: z.number().int().min(100).max(3_600_000).default(60_000),
});

export type McpServerConfig = z.infer<typeof McpServerConfigSchema>;
/** What a caller writes: defaults may be left out. */
export type McpServerConfigInput = z.input<typeof McpServerConfigSchema>;

/** Parses one configuration; `mcp_config_invalid` (400) names the first problem. */
export function parseMcpServerConfig(value: unknown): McpServerConfig {
  const parsed = McpServerConfigSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new KeelError(
      'mcp_config_invalid',
      `MCP server configuration: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
      { details: { issues: parsed.error.issues.slice(0, 5) } },
    );
  }
  return parsed.data;
}
