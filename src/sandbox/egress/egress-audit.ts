// Files each egress connection in the tenant's audit log: who (the system, on behalf of the run and
// tool execution), what (`egress.connection`), on what (`egress:host:port`), the verdict as the
// outcome, and the resolved address, bytes and injected secret names (never values) as data. And
// each use of a secret (`secret.use`: which secret, for which run and execution, how), before the
// value is handed over.
import type { Store } from '../../store/store.ts';
import type { EgressRecord, SecretUse } from './egress-proxy.ts';

export const EGRESS_AUDIT_ACTION = 'egress.connection';

export function auditEgress(
  store: Pick<Store, 'appendAudit'>,
  record: EgressRecord,
): Promise<void> {
  return store.appendAudit({
    tenantId: record.tenantId,
    runId: record.runId === '' ? null : record.runId,
    actor: { type: 'system', id: null, name: null },
    action: EGRESS_AUDIT_ACTION,
    resource: `egress:${record.destination}`,
    outcome: record.verdict,
    data: {
      executionId: record.executionId,
      sandboxId: record.sandboxId,
      service: record.service,
      kind: record.kind,
      address: record.address,
      reason: record.reason,
      bytesSent: record.bytesSent,
      bytesReceived: record.bytesReceived,
      injected: record.injected,
    },
  });
}

export function auditSecretUse(
  store: Pick<Store, 'appendAudit'>,
  tenantId: string,
  ref: string,
  use: SecretUse,
): Promise<void> {
  return store.appendAudit({
    tenantId,
    runId: use.runId === '' ? null : use.runId,
    actor: { type: 'system', id: null, name: null },
    action: 'secret.use',
    resource: ref,
    outcome: 'ok',
    data: { executionId: use.executionId, via: use.via, destination: use.destination ?? null },
  });
}
