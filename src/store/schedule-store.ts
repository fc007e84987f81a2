// The store area for schedules: schedules, their fires (one row per (scheduleId, logicalTime)), the
// webhook allowlist and the failure-notification outbox. Both backends implement it next to their
// run store, sharing its transaction, so a fire and the run it creates commit together. It decides
// nothing about when or whether to fire.
import type { FireStatus } from '../domain/fire-status.ts';
import type { Json } from '../domain/json.ts';
import type { RunStatus } from '../domain/run-status.ts';
import type { Budget, NewRun, Priority } from '../domain/records.ts';

export type OverlapPolicy = 'allow' | 'skip' | 'buffer_one' | 'buffer_all' | 'cancel_other';
export type FireKind = 'scheduled' | 'trigger' | 'backfill';

/**
 * What each fire starts. `agent` is `name` (the newest version when the fire starts) or
 * `name@version`.
 */
export interface RunTemplate {
  agent: string;
  input: Json;
  priority: Priority;
  budget: Budget;
  metadata: Record<string, Json> | null;
}

export interface ScheduleTiming {
  /**
   * 5 or 6 field cron expression, read in `timeZone`; exactly one of cron and intervalMs is set.
   */
  cron: string | null;
  intervalMs: number | null;
  timeZone: string;
  startAt: number | null;
  endAt: number | null;
}

export interface ScheduleRecord extends ScheduleTiming {
  id: string;
  tenantId: string;
  name: string | null;
  /** Bumped by every edit; each run records the version it was created from. */
  version: number;
  paused: boolean;
  template: RunTemplate;
  catchupWindowMs: number;
  overlap: OverlapPolicy;
  webhookUrl: string | null;
  /** The next logical fire time not yet recorded; null when the schedule has no more fires. */
  nextFireAt: number | null;
  lastSuccessAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface NewSchedule extends ScheduleTiming {
  id: string;
  tenantId: string;
  name: string | null;
  paused: boolean;
  template: RunTemplate;
  catchupWindowMs: number;
  overlap: OverlapPolicy;
  webhookUrl: string | null;
  nextFireAt: number | null;
}

/**
 * An edit: the fields given replace the stored ones; the version goes up by one (not for pausing or
 * resuming).
 */
export type SchedulePatch = Partial<Omit<NewSchedule, 'id' | 'tenantId'>>;

export interface FireRecord {
  scheduleId: string;
  tenantId: string;
  logicalTime: number;
  kind: FireKind;
  status: FireStatus;
  runId: string | null;
  /** The schedule version the fire was decided (and its run created) with. */
  scheduleVersion: number;
  /** The scheduler (owner id) that decided it. */
  firedBy: string | null;
  detail: Record<string, Json> | null;
  /**
   * The run's terminal status was observed (and a failure notified): the fire needs no more
   * attention.
   */
  runSettled: boolean;
  recordedAt: number;
  startedAt: number | null;
}

/** An open fire with the status of its run (null when no run exists yet). */
export interface OpenFire extends FireRecord {
  runStatus: RunStatus | null;
}

export interface ScheduleClaim {
  schedule: ScheduleRecord;
  /** Fencing token: every commit of this pass is conditioned on it. */
  token: number;
}

export interface NewFire {
  logicalTime: number;
  kind: FireKind;
  status: FireStatus;
  runId: string | null;
  detail: Record<string, Json> | null;
  startedAt: number | null;
}

export interface FireUpdate {
  logicalTime: number;
  /** Guard: applied only if the fire still has this status. */
  from: FireStatus;
  to: FireStatus;
  runId?: string | null;
  detail?: Record<string, Json> | null;
  startedAt?: number | null;
}

export interface NewNotification {
  id: string;
  runId: string;
  url: string;
  payload: Json;
}

/**
 * One scheduler pass over one schedule, applied atomically and only while the pass still holds the
 * claim (`token`); otherwise it fails with `stale_write` and nothing is applied.
 */
export interface ScheduleCommit {
  scheduleId: string;
  owner: string;
  token: number;
  scheduleVersion: number;
  nextFireAt?: number | null;
  lastSuccessAt?: number;
  newFires?: NewFire[];
  fireUpdates?: FireUpdate[];
  /** Logical times of fires whose run ended and was dealt with. */
  settle?: number[];
  createRuns?: NewRun[];
  /** Runs to cancel through the engine's normal cancellation (cancel_other). */
  cancelRuns?: string[];
  notifications?: NewNotification[];
  /** Give the claim up at the end of the pass... */
  release: boolean;
  /** ...and let no scheduler claim it again before this time (null: at once). */
  releaseUntil?: number | null;
}

export interface NotificationRecord {
  id: string;
  tenantId: string;
  scheduleId: string;
  runId: string;
  url: string;
  payload: Json;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  claimToken: number;
  deliveredAt: number | null;
}

/** What happened to a schedule's fires, in order: `seq` is gapless per schedule, from 1. */
export interface ScheduleEventRecord {
  scheduleId: string;
  seq: number;
  /**
   * fire.requested, fire.<status> (started, skipped, missed, buffered, cancelling_other,
   * cancelled_other), notification.queued
   */
  type: string;
  at: number;
  data: Json;
}

export interface FireFilter {
  status?: FireStatus;
  limit: number;
  /** Logical time of the last fire of the previous page (newest first). */
  before?: number;
}

export interface ScheduleStore {
  createSchedule(schedule: NewSchedule, now: number): Promise<ScheduleRecord>;
  getSchedule(id: string): Promise<ScheduleRecord | null>;
  listSchedules(tenantId: string, limit: number, afterId?: string): Promise<ScheduleRecord[]>;
  /**
   * Applies the patch and bumps the version (see SchedulePatch); `schedule_not_found` if missing or
   * deleted.
   */
  updateSchedule(id: string, patch: SchedulePatch, now: number): Promise<ScheduleRecord>;
  /** Deletes the schedule; its fires stay as history and its runs are untouched. */
  deleteSchedule(id: string, now: number): Promise<void>;

  /**
   * Records requested fires (trigger, backfill) as `pending`; reopens missed/skipped ones; returns
   * those recorded.
   */
  requestFires(
    scheduleId: string,
    fires: Array<{ logicalTime: number; kind: FireKind }>,
    now: number,
  ): Promise<number[]>;
  listFires(scheduleId: string, filter: FireFilter): Promise<FireRecord[]>;
  /**
   * The schedule's events after `afterSeq`, oldest first (a commit or a request appends them in its
   * transaction).
   */
  listScheduleEvents(
    scheduleId: string,
    afterSeq: number,
    limit: number,
  ): Promise<ScheduleEventRecord[]>;
  getFire(scheduleId: string, logicalTime: number): Promise<FireRecord | null>;
  /**
   * Fires still waiting for a run, and fires whose run is not settled yet, oldest first, with their
   * run's status.
   */
  listOpenFires(scheduleId: string): Promise<OpenFire[]>;

  /**
   * Claims up to `limit` schedules that need a pass (a fire due, a requested or waiting fire, a run
   * to observe) and whose claim is free or expired, with a fresh fencing token each.
   */
  claimSchedules(
    owner: string,
    now: number,
    leaseMs: number,
    limit: number,
  ): Promise<ScheduleClaim[]>;
  commitSchedule(commit: ScheduleCommit, now: number): Promise<void>;
  /** Gives up a claim whose pass failed (nothing happens if the claim moved on). */
  releaseClaim(scheduleId: string, owner: string, token: number): Promise<void>;
  /**
   * Frees schedule and notification claims not held by `owner`: only for a store this process owns
   * exclusively.
   */
  expireForeignClaims(owner: string): Promise<number>;

  setWebhookAllowlist(tenantId: string, origins: string[]): Promise<void>;
  getWebhookAllowlist(tenantId: string): Promise<string[]>;
  claimNotifications(
    owner: string,
    now: number,
    leaseMs: number,
    limit: number,
  ): Promise<NotificationRecord[]>;
  /**
   * Records a delivery attempt; guarded by the claim token. `retryAt` null with failure: give up.
   */
  finishNotification(
    id: string,
    token: number,
    outcome: { delivered: true } | { delivered: false; error: string; retryAt: number | null },
    now: number,
  ): Promise<void>;
  listNotifications(scheduleId: string): Promise<NotificationRecord[]>;
}
