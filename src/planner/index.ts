// The public surface of `keel/planner`: plan a scenario, validate one, format the result. Section
// internals (per-section functions, the formula builder) stay private; every result type a caller
// may hold is exported.
export { plan, SECTION_NAMES } from './plan.ts';
export type { PlanResult, PlanSections, SectionName } from './plan.ts';
export { formatPlanJson, formatReport } from './report.ts';
export { ENV_POLICIES, parseScenario, ScenarioError, ScenarioSchema } from './scenario.ts';
export type {
  Attempt,
  BurstInput,
  Capacity,
  CommitsInput,
  EnvPolicy,
  FailureBranch,
  PauseInput,
  PrewarmInput,
  QuotaInput,
  RecoveryTreeInput,
  Replica,
  RestartInput,
  RoutingInput,
  Scenario,
  ScenarioIssue,
  Workload,
} from './scenario.ts';
export type { Figure, Unit, Verdict } from './formula.ts';
export { RESOURCES } from './capacity.ts';
export type { CapacityResult, PolicyOutcome, Resource, ResourceUse } from './capacity.ts';
export type { PauseResult } from './pause.ts';
export type { PrewarmLead, PrewarmResult } from './prewarm.ts';
export type { CommitBatch, CommitsResult } from './commits.ts';
export type { PathOutcome, RecoveryPath, RecoveryTreeResult } from './recovery-tree.ts';
export type { RestartResult } from './restart.ts';
export type { RoutedReplica, RoutingResult } from './routing.ts';
export type { BurstResult } from './burst.ts';
export { QUOTA_LIMITS } from './quota.ts';
export type { LimitUse, QuotaLimit, QuotaResult } from './quota.ts';
