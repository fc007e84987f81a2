// How a stdio MCP server configuration becomes a sandboxed service: the profile it runs under
// (namespace tier; the configuration's image, limits, network allowlist and secret variables) and
// the request to the sandbox manager (its program and arguments, its variables, the host paths it
// needs read-only, and a configured workspace bound writable). The manager does the rest: cgroup,
// namespaces, egress, teardown.
import { realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import { KeelError } from '../../domain/keel-error.ts';
import { defineSandboxProfile, type SandboxProfile } from '../../sandbox/profile.ts';
import type { ServiceRequest } from '../../sandbox/sandbox-manager.ts';
import type { McpServerConfig } from '../../sdk/mcp-server-config.ts';
import { serviceSandboxOf } from './service-sandbox.ts';

/**
 * The uid a server with a configured workspace runs as (nobody): one owner for what it writes
 * there, from one session to the next. Without one, the server gets a pooled uid and a private
 * workspace, like any sandbox.
 */
export const MCP_SANDBOX_UID = 65_534;
/** Longest profile name (the profile schema's limit). */
const PROFILE_NAME_MAX = 64;

type StdioTransport = Extract<McpServerConfig['transport'], { type: 'stdio' }>;

/** The sandbox profile the server runs under (`mcp_config_invalid` if its sandbox is not valid). */
export function serviceProfileOf(config: McpServerConfig): SandboxProfile {
  return defineSandboxProfile({
    name: `mcp.${config.name}`.slice(0, PROFILE_NAME_MAX),
    tier: 'namespace',
    ...serviceSandboxOf(config),
  });
}

/** What the sandbox manager starts for the server `name` of `tenantId`. */
export function serviceRequestOf(
  tenantId: string,
  name: string,
  transport: StdioTransport,
): ServiceRequest {
  return {
    tenantId,
    label: `mcp:${name}`,
    argv: [transport.command, ...transport.args],
    env: transport.env,
    readOnlyBinds: readOnlyBinds(transport),
    workspaceBind:
      transport.workspace === undefined
        ? undefined
        : { hostDir: transport.workspace, uid: MCP_SANDBOX_UID },
  };
}

/**
 * Every configured read-only path and, on the host image, the program's directory (when outside
 * /usr, which the sandbox sees already), each bound at its real location and, when it is reached
 * through a symlink, at the path as written too (an argument naming `./node_modules/...` must
 * resolve). With an environment image the program is looked up in the image: host paths it needs
 * are listed in `readOnlyPaths`.
 */
function readOnlyBinds(transport: StdioTransport): Array<{ source: string; target: string }> {
  const onHost = (transport.sandbox.image ?? 'host') === 'host';
  const binds = new Map<string, string>();
  const add = (path: string, code: 'mcp_server_unavailable' | 'mcp_config_invalid') => {
    let real: string;
    try {
      real = realpathSync(path);
    } catch {
      throw new KeelError(code, `${path} (for MCP server) does not exist`);
    }
    if (onHost && real.startsWith('/usr/')) return;
    binds.set(real, real);
    if (real !== path) binds.set(path, real);
  };
  if (onHost) add(dirname(transport.command), 'mcp_server_unavailable');
  for (const path of transport.readOnlyPaths) add(path, 'mcp_config_invalid');
  return [...binds].map(([target, source]) => ({ source, target }));
}
