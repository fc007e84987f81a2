// keel/client: the typed client of Keel's HTTP API for applications, the CLI and the dashboard.
// Browser-safe (fetch only). The operations are interfaces (KeelRuns, KeelSchedules) so another
// transport, the embedded runtime, can offer the same ones.
export {
  createKeelClient,
  type KeelClient,
  type KeelClientOptions,
  type KeelEvents,
} from './keel-client.ts';
export {
  FOLLOW_RUN_IDS_MAX,
  streamTenantEvents,
  type TenantStreamOptions,
} from './tenant-event-stream.ts';
export type {
  CallOptions,
  CancelOptions,
  CreateOptions,
  EventsOptions,
  KeelRuns,
  ListEventsOptions,
  ReconnectInfo,
  ResultOptions,
  WaitOptions,
} from './keel-runs.ts';
export type { KeelSchedules } from './keel-schedules.ts';
export { HttpTransport, REQUEST_TIMEOUT_MS, type HttpOptions } from './http-transport.ts';
export { HttpRuns, RESULT_WAIT_MAX_MS } from './http-runs.ts';
export { HttpSchedules } from './keel-schedules.ts';
export { classifyStreamMessage, type StreamMessage } from './run-event-stream.ts';
export {
  isTransientError,
  KeelApiError,
  KeelConnectionError,
  KeelProtocolError,
  KeelStreamError,
  KeelWaitTimeoutError,
} from './errors.ts';
export {
  isTerminalStatus,
  RUN_STATUSES,
  TERMINAL_EVENT_TYPES,
  TERMINAL_RUN_STATUSES,
} from './types.ts';
export type {
  Attempt,
  BatchRunResult,
  TenantEvent,
  TenantEventFilter,
  Budget,
  CreateRunRequest,
  CreateScheduleRequest,
  Fire,
  FirePage,
  ForkRequest,
  Json,
  ListRunsFilter,
  ModelDelta,
  Priority,
  RerunRequest,
  ResetRequest,
  Resolution,
  Run,
  RunError,
  RunEvent,
  RunOutcome,
  RunPage,
  RunStatus,
  RunTemplate,
  RunTree,
  RunTreeNode,
  Schedule,
  ScheduleEvent,
  SchedulePage,
  Step,
  ToolOutput,
  UpdateScheduleRequest,
} from './types.ts';
