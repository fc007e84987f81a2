// The named statements both dialects define, with the same parameters (statement-dialects.test.ts
// checks the .sql files): what the shared store procedures may call on either store. Each dialect
// adds the few it alone has (bulk or per-row variants, server settings, rate windows).

export const SHARED_STATEMENT_NAMES = [
  'insert-tenant',
  'find-tenant-by-name',
  'insert-api-key',
  'find-tenant-by-key',
  'insert-run',
  'park-admitted-run', // spend admission parks a run over its tenant's budget
  'find-run-by-idempotency-key',
  'get-run',
  'lock-run',
  'lock-key',
  'list-runs',
  'list-run-tree', // the run tree (0031)
  'list-children-ending-with-run', // delegated children (0037)
  'allocate-event-seqs',
  'heartbeat',
  'find-held-runs',
  'release-leases',
  'expire-foreign-leases',
  'commit-run',
  'commit-effect',
  'load-journal',
  'load-journal-from', // bounded replay (0041)
  'latest-snapshot', // bounded replay (0041)
  'list-events',
  'list-tenant-events', // the tenant-wide event order (0038)
  'tenant-events-head',
  'event-horizon', // below it every event of the tenant-wide order is committed (0053)
  'request-cancel',
  'insert-input',
  'get-input',
  'consume-input',
  'wake-on-input',
  'wake-run',
  'wake-if-ready',
  'share-lock-runs',
  'count-inputs-with-prefix',
  'insert-audit',
  'find-execution',
  'resolve-execution',
  'readmit-run',
  'claim-probation-runs',
  'tenant-usage',
  'tenant-usage-since',
  'platform-usage-since', // platform-wide daily caps
  'agent-spend-sample', // spend admission's rolling average
  'live-run-counts',
  'run-queue',
  'count-unknown-executions',
  'summarize-runs',
  'count-ended-runs',
  'summarize-tenants',
  'update-tenant',
  'get-tenant',
  'list-tenants',
  'count-queued-runs',
  'count-held-runs',
  'admission-sample',
  'wake-budget-waiting-runs',
  'fair-backlog',
  'read-fair-clock',
  'save-tenant-vtimes',
  'save-fair-clock',
  'starved-interactive',
  'mark-preempted',
  'set-run-lineage',
  'copy-journal-prefix',
  // Serving processes (0019)
  'announce-process',
  'retire-process',
  'list-serving-processes',
  'forget-processes',
  'insert-node', // sandbox nodes (0046)
  'get-node', // sandbox nodes (0046)
  'find-node-by-token', // sandbox nodes (0046)
  'register-node', // sandbox nodes (0046)
  'heartbeat-node', // sandbox nodes (0046)
  'set-node-state', // sandbox nodes (0046)
  'delete-node', // sandbox nodes (0046)
  'list-nodes', // sandbox nodes (0046)
  'find-unstarted-queued-runs',
  'find-started-queued-runs',
  'migrate-run-version',
  'count-queued-by-version',
  'insert-attempts',
  'expire-attempt',
  'last-attempt',
  'end-attempt',
  'release-attempts',
  'list-attempts',
  // API keys and the audit log (0021)
  'find-api-key',
  'list-api-keys',
  'get-api-key',
  'revoke-api-key',
  'touch-api-key',
  // Named platform admins (0028)
  'insert-admin-principal',
  'list-admin-principals',
  'get-admin-principal',
  'find-admin-principal',
  'revoke-admin-principal',
  // The deployment's signing keys: per-run delegated tokens (0032)
  'ensure-deployment-key',
  'get-deployment-key',
  'append-audit',
  'list-audit',
  'prune-audit',
  // Secrets (0024)
  'insert-secret',
  'rotate-secret',
  'get-secret',
  'list-secrets',
  'delete-secret',
  'any-secret',
  // Tool policy and approvals (0023)
  'get-tool-policy',
  'put-tool-policy',
  'insert-approval',
  'get-approval',
  'decide-approval',
  'list-approvals',
  // The approver webhook and its outbox (0033)
  'put-approval-webhook',
  'get-approval-webhook',
  'delete-approval-webhook',
  'insert-approval-notification',
  'claim-approval-notifications',
  'finish-approval-notification',
  'list-approval-notifications',
  'release-approval-notification-claims',
  // The platform audit log (0034)
  'insert-platform-audit',
  'list-platform-audit',
  'prune-platform-audit',
  // MCP servers and per-run tool pins (0022)
  'put-mcp-server',
  'list-mcp-servers',
  'delete-mcp-server',
  'insert-mcp-tool-pin',
  'get-mcp-tool-pin',
  // The shared space of a run tree (0030)
  'find-shared-write',
  'put-shared-blob',
  'insert-shared-file',
  'get-shared-file',
  'list-shared-files',
  // Large payloads (0039)
  'put-payload-chunk',
  'count-payload-chunks',
  'insert-payload-ref',
  'upsert-payload',
  'run-payload-bytes',
  'get-payload',
  'get-payload-chunk',
  'has-run-payload',
  'release-run-payloads',
  'delete-gone-run-payload-refs',
  'delete-unreferenced-payloads',
  'delete-orphan-payload-chunks',
  // Pool slots leased across processes (0044)
  'next-pool-slot-token',
  'insert-pool-slot-holder',
  'renew-pool-slot-holder',
  'live-pool-slot-holder',
  'delete-expired-pool-slot-leases',
  'delete-expired-pool-slot-holders',
  'pool-slot-usage',
  'put-pool-slot-lease',
  'return-pool-slots',
  'pools-wanted-by-others',
  'delete-pool-slot-leases',
  'delete-pool-slot-holder',
  'list-pool-slot-leases',
] as const;
