// The MCP servers file (KEEL_MCP_SERVERS_FILE): tenants' MCP server configurations, by tenant name,
// written to the store at start (insert or replace; servers the file does not name are left as the
// admin API made them). A file that does not parse, a bad configuration or an unknown tenant fails
// the start with the file's name: configuration errors are loud, never half-applied silently.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { KeelError } from '../../domain/keel-error.ts';
import type { Json } from '../../domain/json.ts';
import type { Store } from '../../store/store.ts';
import { parseMcpServerConfig, type McpServerConfig } from '../../sdk/mcp-server-config.ts';
import { checkedMcpServerConfig } from './service-sandbox.ts';

const ServersFile = z.strictObject({
  tenants: z.record(z.string().min(1), z.array(z.unknown()).max(256)),
});

export function readMcpServersFile(path: string): Map<string, McpServerConfig[]> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new KeelError('config_invalid', `MCP servers file ${path}: ${(error as Error).message}`);
  }
  const parsed = ServersFile.safeParse(raw);
  if (!parsed.success)
    throw new KeelError(
      'config_invalid',
      `MCP servers file ${path}: expected { "tenants": { "<tenant name>": [server, ...] } }`,
    );
  const byTenant = new Map<string, McpServerConfig[]>();
  for (const [tenant, servers] of Object.entries(parsed.data.tenants)) {
    byTenant.set(
      tenant,
      servers.map((server, i) => {
        try {
          return checkedMcpServerConfig(parseMcpServerConfig(server));
        } catch (error) {
          throw new KeelError(
            'config_invalid',
            `MCP servers file ${path}: tenants.${tenant}[${i}]: ${(error as Error).message}`,
          );
        }
      }),
    );
  }
  return byTenant;
}

/** Writes the file's servers to the store; returns how many were written. */
export async function applyMcpServersFile(store: Store, path: string): Promise<number> {
  const byTenant = readMcpServersFile(path);
  const tenants = await store.listTenants();
  let written = 0;
  for (const [name, servers] of byTenant) {
    const tenant = tenants.find((t) => t.name === name);
    if (tenant === undefined)
      throw new KeelError('config_invalid', `MCP servers file ${path}: no tenant named ${name}`);
    for (const server of servers) {
      await store.putMcpServer(tenant.id, server.name, server as unknown as Json);
      written++;
    }
  }
  return written;
}
