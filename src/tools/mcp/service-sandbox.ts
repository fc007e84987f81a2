// The whole check of a stdio MCP server's `sandbox` against the sandbox profile schema. The SDK
// checks only its shape (it loads nothing of the sandbox plane), so every place a configuration
// enters the node — the admin API, the servers file, an agent's own servers when the tool source
// reads them — and the start of the server itself pass through here: a bad image, limit,
// allowlist or secret reference is `mcp_config_invalid` naming its path, before any server starts.
import { KeelError } from '../../domain/keel-error.ts';
import { type ServiceSandbox, ServiceSandboxSchema } from '../../sandbox/profile.ts';
import type { McpServerConfig } from '../../sdk/mcp-server-config.ts';

/** The configuration, refused as `mcp_config_invalid` when its sandbox is not a valid profile's. */
export function checkedMcpServerConfig(config: McpServerConfig): McpServerConfig {
  if (config.transport.type === 'stdio') serviceSandboxOf(config);
  return config;
}

/** The stdio server's sandbox, parsed whole (defaults filled in). */
export function serviceSandboxOf(config: McpServerConfig): ServiceSandbox {
  const transport = config.transport;
  const parsed = ServiceSandboxSchema.safeParse(
    transport.type === 'stdio' ? transport.sandbox : {},
  );
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new KeelError(
    'mcp_config_invalid',
    `MCP server ${config.name}: transport.sandbox.${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`,
    { details: { server: config.name, issues: parsed.error.issues.slice(0, 5) } },
  );
}
