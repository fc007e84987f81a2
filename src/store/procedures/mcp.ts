// The MCP procedures both stores share: a tenant's MCP server configurations (put, list, delete)
// and the per-run tool pins (pin once, read back). Configurations and tool lists are opaque JSON
// here: src/tools/mcp validates them before they are written and after they are read.
import { KeelError } from '../../domain/keel-error.ts';
import type { Json } from '../../domain/json.ts';
import type { McpServerRow, McpToolPinRow } from '../mcp-rows.ts';
import { all, one, run, type Procedure, type Tx } from './transaction.ts';

export function* putMcpServer(
  tx: Tx,
  tenantId: string,
  name: string,
  config: Json,
): Procedure<McpServerRow> {
  if ((yield* one('get-tenant', { id: tenantId })) === undefined)
    throw new KeelError('tenant_not_found', `no tenant ${tenantId}`);
  yield run('put-mcp-server', {
    tenant_id: tenantId,
    name,
    config: JSON.stringify(config),
    now: tx.now,
  });
  return { name, config, updatedAt: tx.now };
}

export function* listMcpServers(tenantId: string): Procedure<McpServerRow[]> {
  return (yield* all('list-mcp-servers', { tenant_id: tenantId })).map((row) => ({
    name: row.name as string,
    config: JSON.parse(row.config as string) as Json,
    updatedAt: Number(row.updated_at),
  }));
}

/** True when the tenant had a server of this name. */
export function* deleteMcpServer(tenantId: string, name: string): Procedure<boolean> {
  return (yield* one('delete-mcp-server', { tenant_id: tenantId, name })) !== undefined;
}

/** Pins `pin` unless the run pinned this server already; returns the pin in force. */
export function* pinMcpTools(
  tx: Tx,
  runId: string,
  server: string,
  pin: { hash: string; tools: Json },
): Procedure<McpToolPinRow> {
  yield run('insert-mcp-tool-pin', {
    run_id: runId,
    server,
    hash: pin.hash,
    tools: JSON.stringify(pin.tools),
    now: tx.now,
  });
  return (yield* getMcpToolPin(runId, server))!;
}

export function* getMcpToolPin(runId: string, server: string): Procedure<McpToolPinRow | null> {
  const row = yield* one('get-mcp-tool-pin', { run_id: runId, server });
  if (row === undefined) return null;
  return {
    hash: row.hash as string,
    tools: JSON.parse(row.tools as string) as Json,
    pinnedAt: Number(row.pinned_at),
  };
}
