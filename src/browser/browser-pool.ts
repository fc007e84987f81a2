// The node's browser pool: one Chromium per process and one BrowserContext per session, a session
// per run that holds a slot of the `browser` scheduling pool (so the pools file's limit, queue
// bound and per-tenant caps apply to sessions, and KEEL_BROWSER_MAX_SESSIONS is its default limit)
// from its first action until it is reclaimed. One browser with a context per session, not a
// browser per session: a context is Chromium's unit of isolation for cookies, storage and cache,
// opens without starting browser processes of its own, and shares one set of them, so
// memory grows per page rather than per browser — the price is that a Chromium crash takes every
// session of the node with it (each is then rebuilt from its saved storage state).
//
// A session lives under its own lease: renewed by every action, it expires KEEL_BROWSER_IDLE_MS
// after the last one and the session is reclaimed (storage state saved, context closed, pool slot
// given back). It is also reclaimed when its run leaves this process (ends, parks on a wait, is
// preempted or lost: release()). It never runs two actions of one run at once (they queue), never
// keeps a session of a run after release(), and never outlives close().
import type { BrowserContext, Page } from 'playwright-core';
import { KeelError } from '../domain/keel-error.ts';
import type { Priority } from '../domain/records.ts';
import type { ArtifactStore } from '../store/artifact-store.ts';
import { launchChromium, type RunningChromium } from './chromium.ts';
import {
  SESSION_STATES,
  type ReclaimReason,
  type SessionEvent,
  type SessionState,
  transition,
} from './session-state.ts';
import { loadStorageState, saveStorageState } from './storage-state.ts';

/** The scheduling pool every session takes a slot of. */
export const BROWSER_POOL = 'browser';
/** Playwright's wait for one action (a navigation, a click) before it fails. */
export const BROWSER_ACTION_TIMEOUT_MS = 15_000;
export const BROWSER_VIEWPORT = { width: 1280, height: 800 } as const;

export interface BrowserPoolObserver {
  /** A session opened: how long it took (browser launch included) and whether state was restored. */
  started(seconds: number, restored: boolean): void;
  /** A session was reclaimed, and how long its lease had lived. */
  reclaimed(reason: ReclaimReason, leaseSeconds: number): void;
}

/**
 * The scheduling pools as the browser pool uses them (the process's PoolRegistry): named here
 * rather than imported, so the SDK's types, which name BrowserPool, load no scheduling code.
 */
export interface SessionSlots {
  acquire(
    name: string,
    request: { tenantId: string; priority: Priority; signal?: AbortSignal },
  ): Promise<() => void>;
  setDefaultLimit(name: string, limit: number): void;
}

export interface BrowserPoolOptions {
  pools: SessionSlots;
  /** Where storage states (and the browser tools' screenshots) are kept. */
  artifacts: ArtifactStore;
  executablePath: string;
  /** Sessions at once in this process: the `browser` pool's limit unless the pools file names one. */
  maxSessions: number;
  /** A session unused this long is reclaimed. */
  idleMs: number;
  observer?: BrowserPoolObserver;
}

/** Whose session an action runs in, and how it queues for a slot. */
export interface SessionRequest {
  runId: string;
  tenantId: string;
  priority: Priority;
  signal?: AbortSignal;
}

export interface SessionInfo {
  /** This action opened the session (first action, or after a reclaim or crash). */
  opened: boolean;
  /** It was opened from the run's saved storage state. */
  restored: boolean;
  /** The lease's fencing token: a new one for every session of the node. */
  leaseToken: number;
}

interface Lease {
  token: number;
  acquiredAt: number;
  expiresAt: number;
}

interface Session {
  readonly runId: string;
  state: SessionState;
  readonly chromium: RunningChromium;
  readonly context: BrowserContext;
  readonly page: Page;
  readonly lease: Lease;
  readonly releaseSlot: () => void;
  idleTimer: NodeJS.Timeout | undefined;
}

export class BrowserPool {
  readonly artifacts: ArtifactStore;
  readonly #options: BrowserPoolOptions;
  readonly #sessions = new Map<string, Session>();
  /** Sessions being opened (slot taken, context not ready yet), counted as `starting`. */
  #starting = 0;
  /** Runs whose session Chromium took down since their last action: their next action is told. */
  readonly #crashed = new Set<string>();
  /** Each run's actions, one after another. */
  readonly #chains = new Map<string, Promise<unknown>>();
  #chromium: Promise<RunningChromium> | undefined;
  #nextToken = 0;
  #closed = false;

  constructor(options: BrowserPoolOptions) {
    this.#options = options;
    this.artifacts = options.artifacts;
    options.pools.setDefaultLimit(BROWSER_POOL, options.maxSessions);
  }

  /**
   * Runs `fn` on the run's page, opening its session first when it has none (waiting for a slot of
   * the `browser` pool). Throws `browser_crashed` when Chromium died under the session (during
   * this action or since the last one): the next action rebuilds the session from its storage
   * state.
   */
  use<T>(request: SessionRequest, fn: (page: Page, info: SessionInfo) => Promise<T>): Promise<T> {
    const previous = this.#chains.get(request.runId) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.#useNow(request, fn));
    this.#chains.set(request.runId, next);
    const forget = () => {
      if (this.#chains.get(request.runId) === next) this.#chains.delete(request.runId);
    };
    next.then(forget, forget);
    return next;
  }

  async #useNow<T>(
    request: SessionRequest,
    fn: (page: Page, info: SessionInfo) => Promise<T>,
  ): Promise<T> {
    if (this.#crashed.delete(request.runId)) throw crashedError(request.runId);
    let session = this.#sessions.get(request.runId);
    let opened: { restored: boolean } | undefined;
    if (session === undefined) {
      const started = await this.#open(request);
      session = started.session;
      opened = { restored: started.restored };
    } else {
      this.#move(session, 'use');
      clearTimeout(session.idleTimer);
    }
    this.#renew(session);
    try {
      const value = await fn(session.page, {
        opened: opened !== undefined,
        restored: opened?.restored ?? false,
        leaseToken: session.lease.token,
      });
      await saveStorageState(this.artifacts, session.runId, session.context);
      return value;
    } catch (error) {
      // Playwright may report the closed page before the browser's `disconnected` event: a page
      // gone under an active session is its crash, whichever comes first.
      if (
        session.state === 'active' &&
        (session.page.isClosed() || !session.chromium.browser.isConnected())
      )
        this.#crashSession(session);
      if (session.state === 'crashed' || session.state === 'closed') {
        if (this.#crashed.delete(request.runId)) throw crashedError(request.runId);
        throw new KeelError(
          'browser_session_reclaimed',
          `the browser session of run ${request.runId} was reclaimed during the action`,
        );
      }
      throw error;
    } finally {
      if (session.state === 'active') {
        this.#move(session, 'done');
        this.#renew(session);
        this.#armIdle(session);
      }
    }
  }

  async #open(request: SessionRequest): Promise<{ session: Session; restored: boolean }> {
    if (this.#closed) throw stoppingError();
    const releaseSlot = await this.#options.pools.acquire(BROWSER_POOL, {
      tenantId: request.tenantId,
      priority: request.priority,
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    });
    const startedAt = performance.now();
    this.#starting++;
    let state: SessionState = 'starting';
    try {
      const chromium = await this.#browser();
      const storageState = await loadStorageState(this.artifacts, request.runId);
      const context = await chromium.browser.newContext({
        viewport: BROWSER_VIEWPORT,
        locale: 'en-US',
        timezoneId: 'UTC',
        ...(storageState === undefined ? {} : { storageState }),
      });
      context.setDefaultTimeout(BROWSER_ACTION_TIMEOUT_MS);
      const page = await context.newPage();
      if (this.#closed) {
        await context.close().catch(() => undefined);
        throw stoppingError();
      }
      state = transition(state, 'ready');
      const session: Session = {
        runId: request.runId,
        state,
        chromium,
        context,
        page,
        lease: { token: ++this.#nextToken, acquiredAt: Date.now(), expiresAt: 0 },
        releaseSlot,
        idleTimer: undefined,
      };
      this.#sessions.set(request.runId, session);
      this.#options.observer?.started(
        (performance.now() - startedAt) / 1000,
        storageState !== undefined,
      );
      return { session, restored: storageState !== undefined };
    } catch (error) {
      releaseSlot();
      throw error;
    } finally {
      this.#starting--;
    }
  }

  /** The node's Chromium, launched on first need and again after a crash. */
  #browser(): Promise<RunningChromium> {
    if (this.#chromium !== undefined) return this.#chromium;
    const launching = launchChromium(this.#options.executablePath).then((chromium) => {
      chromium.browser.on('disconnected', () => this.#onDisconnected(chromium));
      return chromium;
    });
    this.#chromium = launching;
    launching.catch(() => {
      if (this.#chromium === launching) this.#chromium = undefined;
    });
    return launching;
  }

  /** Chromium is gone: every session on it crashed; the next session starts a new one. */
  #onDisconnected(chromium: RunningChromium): void {
    void chromium.close();
    if (this.#chromium !== undefined)
      void this.#chromium.then((current) => {
        if (current === chromium) this.#chromium = undefined;
      });
    for (const session of [...this.#sessions.values()])
      if (session.chromium === chromium) this.#crashSession(session);
  }

  /** The session's page or browser is gone: its run's next action is told, then rebuilds. */
  #crashSession(session: Session): void {
    if (session.state === 'reclaiming' || session.state === 'closed' || session.state === 'crashed')
      return;
    this.#move(session, 'crash');
    if (!this.#closed) this.#crashed.add(session.runId);
    void this.#reclaim(session, 'crashed');
  }

  /**
   * Reclaims the run's session, if this process holds one: its run ended, parked, was preempted or
   * lost its lease. Its storage state is saved first, so the next session starts from it.
   */
  async release(runId: string, reason: ReclaimReason): Promise<void> {
    if (reason === 'ended') this.#crashed.delete(runId);
    const session = this.#sessions.get(runId);
    if (session === undefined || session.state === 'reclaiming') return;
    await this.#reclaim(session, reason);
  }

  async #reclaim(session: Session, reason: ReclaimReason): Promise<void> {
    clearTimeout(session.idleTimer);
    const crashed = session.state === 'crashed';
    this.#move(session, 'reclaim');
    if (this.#sessions.get(session.runId) === session) this.#sessions.delete(session.runId);
    try {
      if (!crashed) {
        await saveStorageState(this.artifacts, session.runId, session.context).catch(
          () => undefined,
        );
        await session.context.close().catch(() => undefined);
        this.#move(session, 'finish');
      }
    } finally {
      session.releaseSlot();
      this.#options.observer?.reclaimed(reason, (Date.now() - session.lease.acquiredAt) / 1000);
    }
  }

  #renew(session: Session): void {
    session.lease.expiresAt = Date.now() + this.#options.idleMs;
  }

  /**
   * Reclaims the session once it has been idle past its lease. A timer can fire before the lease's
   * wall-clock expiry (Node's timers count from the event loop's cached time, which lags behind a
   * busy turn): it is then armed again for what is left, never dropped.
   */
  #armIdle(session: Session, delayMs: number = this.#options.idleMs): void {
    clearTimeout(session.idleTimer);
    session.idleTimer = setTimeout(() => {
      if (session.state !== 'idle') return;
      const left = session.lease.expiresAt - Date.now();
      if (left <= 0) void this.#reclaim(session, 'idle');
      else this.#armIdle(session, left);
    }, delayMs);
    session.idleTimer.unref();
  }

  #move(session: Session, event: SessionEvent): void {
    session.state = transition(session.state, event);
  }

  /** Sessions of this process by state (closed and crashed ones are gone at once: 0). */
  counts(): Record<SessionState, number> {
    const counts = Object.fromEntries(SESSION_STATES.map((s) => [s, 0])) as Record<
      SessionState,
      number
    >;
    counts.starting = this.#starting;
    for (const session of this.#sessions.values()) counts[session.state]++;
    return counts;
  }

  /** Age of the oldest live session lease, in seconds (0 when none). */
  oldestLeaseAgeSeconds(now: number = Date.now()): number {
    let oldest = now;
    for (const session of this.#sessions.values())
      oldest = Math.min(oldest, session.lease.acquiredAt);
    return (now - oldest) / 1000;
  }

  /** The state of the run's session here, if it has one. */
  sessionState(runId: string): SessionState | undefined {
    return this.#sessions.get(runId)?.state;
  }

  /** The running Chromium's process id, if one is running. */
  async chromiumPid(): Promise<number | undefined> {
    return this.#chromium === undefined ? undefined : (await this.#chromium).pid;
  }

  /** Reclaims every session (storage states saved) and stops Chromium. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(
      [...this.#sessions.values()].map((session) =>
        session.state === 'reclaiming' ? undefined : this.#reclaim(session, 'shutdown'),
      ),
    );
    this.#crashed.clear();
    const chromium = this.#chromium;
    this.#chromium = undefined;
    if (chromium !== undefined) await (await chromium.catch(() => undefined))?.close();
  }
}

const crashedError = (runId: string): KeelError =>
  new KeelError(
    'browser_crashed',
    `Chromium crashed under the browser session of run ${runId}: the page is lost; the next browser action rebuilds the session from its saved storage state (cookies, local storage)`,
  );

const stoppingError = (): KeelError =>
  new KeelError('browser_unavailable', 'this node is stopping: its browser pool is closed');
