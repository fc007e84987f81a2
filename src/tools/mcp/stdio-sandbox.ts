// The command line that starts a stdio MCP server inside the namespace tier's sandbox: bubblewrap
// with the tier's own mount layout (host /usr read-only, private /tmp and /proc, no network, the
// workspace as the only writable host path, --die-with-parent), the server's package files and
// interpreter bound read-only at their host paths, and the whole thing run as an unprivileged uid.
// It only builds argv and the workspace; the MCP SDK's stdio transport spawns it.
// Not yet here (see docs/guides/mcp.md): the tier's cgroup limits, and images in place of host /usr.
import { chownSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { KeelError } from '../../domain/keel-error.ts';
import { programEnv } from '../../sandbox/driver.ts';
import { bwrapArgs } from '../../sandbox/namespace-driver.ts';
import type { McpServerConfig } from '../../sdk/mcp-server-config.ts';

/** The uid and gid a sandboxed MCP server runs as when Keel runs as root (nobody). */
export const MCP_SANDBOX_UID = 65_534;
const SETPRIV = '/usr/bin/setpriv';

type StdioTransport = Extract<McpServerConfig['transport'], { type: 'stdio' }>;

export interface SandboxedCommand {
  command: string;
  args: string[];
  /** Removes the private workspace (when Keel made one). */
  cleanup(): void;
}

/**
 * The server's program and arguments wrapped in bwrap. The program's directory is bound read-only
 * when it lies outside /usr (a Node installed under node_modules, say), with every configured
 * read-only path.
 */
export function sandboxedCommand(transport: StdioTransport): SandboxedCommand {
  const asRoot = process.getuid?.() === 0;
  let workspace = transport.workspace;
  let cleanup: () => void = () => {};
  if (workspace === undefined) {
    const made = mkdtempSync(join(tmpdir(), 'keel-mcp-'));
    if (asRoot) chownSync(made, MCP_SANDBOX_UID, MCP_SANDBOX_UID);
    workspace = made;
    cleanup = () => rmSync(made, { recursive: true, force: true });
  }
  const base = bwrapArgs(workspace);
  const dashDash = base.lastIndexOf('--');
  const args = base.slice(1, dashDash); // without /usr/bin/bwrap and the closing --
  for (const [source, target] of readOnlyBinds(transport)) args.push('--ro-bind', source, target);
  for (const [name, value] of Object.entries(programEnv(transport.env)))
    args.push('--setenv', name, value);
  args.push('--', transport.command, ...transport.args);
  if (!asRoot) return { command: base[0]!, args, cleanup };
  // As root, drop to nobody before bwrap: the server never holds a privileged uid, even mapped.
  return {
    command: SETPRIV,
    args: [
      `--reuid=${MCP_SANDBOX_UID}`,
      `--regid=${MCP_SANDBOX_UID}`,
      '--clear-groups',
      '--no-new-privs',
      base[0]!,
      ...args,
    ],
    cleanup,
  };
}

/**
 * [host source, inside path] pairs: each path at its real location and, when it is reached through
 * a symlink, at the path as written too (an argument naming `./node_modules/...` must resolve).
 */
function readOnlyBinds(transport: StdioTransport): Array<[string, string]> {
  const binds = new Map<string, string>();
  const add = (path: string, code: 'mcp_server_unavailable' | 'mcp_config_invalid') => {
    let real: string;
    try {
      real = realpathSync(path);
    } catch {
      throw new KeelError(code, `${path} (for MCP server) does not exist`);
    }
    if (real.startsWith('/usr/')) return;
    binds.set(real, real);
    if (real !== path) binds.set(path, real);
  };
  add(dirname(transport.command), 'mcp_server_unavailable');
  for (const path of transport.readOnlyPaths) add(path, 'mcp_config_invalid');
  return [...binds].map(([target, source]) => [source, target]);
}
