// A run's timeline: one row per journal effect, its bar split into the time it queued (waiting for
// a slot, hatched) and the time it executed (solid), coloured by status; waits for a human, a timer
// or a child run are drawn as waits. Retries and unknown outcomes are marked on the row. Rows are
// focusable buttons that select the effect. Above them, a lane of the run's attempts (each claim of
// it): a recovery after a crash is a new attempt there, never a retry; an effect re-run because its
// run was recovered is marked apart from an effect's own retries.
import { useEffect, useState } from 'react';
import { api, type Step } from '../api.ts';
import { formatDuration } from '../format.ts';
import {
  ATTEMPT_ENDING_TEXT,
  attemptBands,
  effectReruns,
  segmentsOf,
  type AttemptBand,
  type RunAttempt,
  type Segment,
} from '../timeline-segments.ts';

const TICKS = 5;
/**
 * Rows drawn at most: a run of thousands of effects stays responsive (the journal API still has
 * them all).
 */
export const TIMELINE_ROWS_MAX = 500;
const MIN_SEGMENT_PCT = 0.35;
/**
 * Captions start right of a bar that ends before this point of the axis, else go left of it if
 * there is room.
 */
const CAPTION_RIGHT_LIMIT_PCT = 72;
const CAPTION_LEFT_MIN_PCT = 28;

function verb(step: Step, kind: Segment['kind']): string {
  if (step.status === 'unknown') return 'outcome unknown after';
  if (kind === 'waiting') return step.status === 'waiting' ? 'waiting' : 'waited';
  return step.status === 'running' ? 'running' : 'executed';
}

/**
 * The duration text beside its bar: right of it, or left of it near the end of the axis, or inside
 * a wide bar.
 */
function Caption({ from, to, text }: { from: number; to: number; text: string }) {
  if (to <= CAPTION_RIGHT_LIMIT_PCT)
    return (
      <span className="seg-caption" style={{ left: `${to}%` }}>
        {text}
      </span>
    );
  if (from >= CAPTION_LEFT_MIN_PCT)
    return (
      <span className="seg-caption seg-caption-left" style={{ right: `${100 - from}%` }}>
        {text}
      </span>
    );
  return (
    <span className="seg-caption seg-caption-inside" style={{ left: `${from}%` }}>
      {text}
    </span>
  );
}

/** Colour of an attempt band by its ending (the effect bars' status colours). */
const ENDING_STATUS: Readonly<Record<string, string>> = {
  running: 'running',
  completed: 'succeeded',
  parked: 'waiting',
  lease_expired: 'failed',
  preempted: 'unknown',
  released: 'unknown',
  cancelled: 'failed',
};

/**
 * The run's attempts: those given, or fetched for `runId` (again whenever `refresh` changes, e.g.
 * as the run's steps grow). A failed fetch leaves the lane out.
 */
function useAttempts(
  runId: string | undefined,
  given: readonly RunAttempt[] | undefined,
  refresh: unknown,
): readonly RunAttempt[] {
  const [fetched, setFetched] = useState<readonly RunAttempt[]>([]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `refresh` fetches again as the run moves on
  useEffect(() => {
    if (given !== undefined || runId === undefined) return;
    const abort = new AbortController();
    api<{ attempts: RunAttempt[] }>(`/v1/runs/${encodeURIComponent(runId)}/attempts`, {
      signal: abort.signal,
    })
      .then((body) => setFetched(body.attempts))
      .catch(() => {});
    return () => abort.abort();
  }, [runId, given, refresh]);
  return given ?? fetched;
}

function attemptTitle(band: AttemptBand): string {
  return `Attempt ${band.number}${band.recovery ? ' (recovery: the worker before it died or stalled)' : ''} on ${band.worker}: ${ATTEMPT_ENDING_TEXT[band.ending] ?? band.ending}, ${formatDuration(band.to - band.from)}`;
}

function niceStep(span: number): number {
  const raw = span / TICKS;
  const power = 10 ** Math.floor(Math.log10(Math.max(raw, 1)));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? raw;
}

export function Timeline({
  steps,
  origin,
  end,
  selected,
  onSelect,
  runId,
  attempts: givenAttempts,
}: {
  steps: Step[];
  origin: number;
  end: number;
  selected: number | undefined;
  onSelect: (seq: number) => void;
  /** The run whose attempts the lane shows (fetched), unless `attempts` are given. */
  runId?: string;
  attempts?: readonly RunAttempt[];
}) {
  const attempts = useAttempts(runId, givenAttempts, `${steps.length}:${end}`);
  const bands = attemptBands(attempts, end);
  const effects = steps.filter((s) => s.kind !== 'now');
  const visible = effects.slice(0, TIMELINE_ROWS_MAX);
  const rows = visible.map((step) => ({ step, segments: segmentsOf(step, end) }));
  const last = Math.max(
    end,
    ...rows.flatMap((r) => r.segments.map((s) => s.to)),
    ...bands.map((b) => b.to),
  );
  const span = Math.max(last - origin, 1);
  const pct = (t: number) => ((t - origin) / span) * 100;
  const tick = niceStep(span);
  const ticks: number[] = [];
  for (let t = 0; t <= span; t += tick) ticks.push(t);

  if (visible.length === 0)
    return <p className="empty">No effects yet: the run has not reached its first step.</p>;
  return (
    <div className="timeline" data-testid="timeline">
      <div className="timeline-axis" aria-hidden="true">
        <div className="timeline-label-col" />
        <div className="timeline-track">
          {ticks.map((t) => (
            <span key={t} className="tick" style={{ left: `${(t / span) * 100}%` }}>
              {t === 0 ? '0' : `+${formatDuration(t)}`}
            </span>
          ))}
        </div>
      </div>
      {bands.length > 0 ? (
        <div className="timeline-row timeline-attempts" data-testid="timeline-attempts">
          <span className="timeline-label-col">
            <span className="name">attempts</span>
          </span>
          <span className="timeline-track">
            {bands.map((b) => (
              <span
                key={b.number}
                className={`seg seg-executing status-${ENDING_STATUS[b.ending] ?? 'unknown'}`}
                data-attempt={b.number}
                data-ending={b.ending}
                data-recovery={b.recovery ? 'true' : undefined}
                style={{
                  left: `${pct(b.from)}%`,
                  width: `${Math.max(pct(b.to) - pct(b.from), MIN_SEGMENT_PCT)}%`,
                }}
                title={attemptTitle(b)}
                role="img"
                aria-label={attemptTitle(b)}
              >
                {b.recovery ? '⟲' : ''}
                {b.number}
              </span>
            ))}
          </span>
        </div>
      ) : null}
      <ol className="timeline-rows">
        {rows.map(({ step, segments }) => {
          const { ownAttempts, rerunAfterRecovery } = effectReruns(step, attempts);
          const queued = segments.find((s) => s.kind === 'queued');
          const executing = segments.find((s) => s.kind !== 'queued');
          const summary = [
            queued !== undefined ? `queued ${formatDuration(queued.to - queued.from)}` : null,
            executing !== undefined
              ? `${verb(step, executing.kind)} ${formatDuration(executing.to - executing.from)}`
              : null,
          ]
            .filter(Boolean)
            .join(' · ');
          const first = segments[0];
          const lastSeg = segments.at(-1);
          return (
            <li key={step.seq}>
              <button
                type="button"
                className={`timeline-row${selected === step.seq ? ' selected' : ''}`}
                onClick={() => onSelect(step.seq)}
                aria-pressed={selected === step.seq}
                data-seq={step.seq}
                data-status={step.status}
                data-kind={step.kind}
                aria-label={`Effect ${step.seq}: ${step.kind} ${step.name}, ${step.status}${ownAttempts > 1 ? `, ${ownAttempts} attempts` : ''}${rerunAfterRecovery ? ', re-run after a recovery' : ''}. ${summary}`}
              >
                <span className="timeline-label-col">
                  <span className="seq">{step.seq}</span>
                  <span className={`kind kind-${step.kind}`}>{step.kind}</span>
                  <span className="name" title={step.name}>
                    {step.name}
                  </span>
                  {ownAttempts > 1 ? (
                    <span className="marker marker-retry" title={`${ownAttempts} attempts`}>
                      ↻ {ownAttempts}
                    </span>
                  ) : null}
                  {rerunAfterRecovery ? (
                    <span
                      className="marker marker-recovered"
                      title="Re-run after a recovery: it was in flight when its worker died; not a retry"
                    >
                      ⟲
                    </span>
                  ) : null}
                  {step.status === 'unknown' ? (
                    <span
                      className="marker marker-unknown"
                      title="Outcome unknown: an operator must decide"
                    >
                      ?
                    </span>
                  ) : null}
                </span>
                <span className="timeline-track">
                  {ticks.map((t) => (
                    <span key={t} className="gridline" style={{ left: `${(t / span) * 100}%` }} />
                  ))}
                  {segments.map((s) => (
                    <span
                      key={s.kind}
                      className={`seg seg-${s.kind} status-${step.status}`}
                      data-segment={s.kind}
                      style={{
                        left: `${pct(s.from)}%`,
                        width: `${Math.max(pct(s.to) - pct(s.from), MIN_SEGMENT_PCT)}%`,
                      }}
                      title={`${s.kind} ${formatDuration(s.to - s.from)}`}
                    />
                  ))}
                  {first !== undefined && lastSeg !== undefined ? (
                    <Caption from={pct(first.from)} to={pct(lastSeg.to)} text={summary} />
                  ) : null}
                </span>
              </button>
            </li>
          );
        })}
      </ol>
      {effects.length > visible.length ? (
        <p className="muted small">
          Showing the first {TIMELINE_ROWS_MAX} of {effects.length} effects.
        </p>
      ) : null}
      <div className="legend" aria-hidden="true">
        <span>
          <i className="seg-sample seg-queued status-succeeded" />
          queued
        </span>
        <span>
          <i className="seg-sample seg-executing status-succeeded" />
          executing
        </span>
        <span>
          <i className="seg-sample seg-waiting status-waiting" />
          waiting (input, timer, child)
        </span>
        <span>
          <i className="swatch status-succeeded" />
          succeeded
        </span>
        <span>
          <i className="swatch status-running" />
          running
        </span>
        <span>
          <i className="swatch status-failed" />
          failed
        </span>
        <span>
          <i className="swatch status-unknown" />
          unknown
        </span>
        <span>
          <span className="marker marker-retry">↻ n</span> retried (the effect’s own attempts)
        </span>
        <span>
          <span className="marker marker-recovered">⟲</span> recovery: a new attempt of the run
          after its worker died (not a retry)
        </span>
      </div>
    </div>
  );
}
