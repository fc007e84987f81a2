// A run kept live on screen: its record and journal, re-read (throttled) whenever its event stream
// delivers an event, plus a slow safety poll while it has not ended. The stream is fetch-based SSE
// (see sse.ts). Model calls that stream, and tools that stream their output (exec's stdout and
// stderr), show their text as it arrives (`streaming`), until the committed step replaces it.
import { useCallback, useEffect, useRef, useState } from 'react';
import { TERMINAL, runsApi, type ApiError, type Run, type RunEvent, type Step } from './api.ts';
import { streamRunEvents, type ModelDelta, type ToolOutput } from './sse.ts';

/** Events kept on screen; older ones stay in the store (GET …/events?format=json). */
const EVENTS_SHOWN_MAX = 500;
/** A burst of events causes one re-read of the run and its journal, not one per event. */
const REFETCH_THROTTLE_MS = 150;
/** Re-read a live run this often even without events (a missed wake-up costs at most this long). */
const SAFETY_POLL_MS = 5_000;

export type StreamState = 'connecting' | 'live' | 'ended' | 'retrying';

/** The text of a model call or tool streamed so far (keyed by its journal position). */
export interface StreamingCall {
  seq: number;
  kind: 'model' | 'tool';
  /** The model's or the tool's name. */
  model: string;
  attempt: number;
  text: string;
  /** The follower joined after the call started streaming (a reconnect): the text lacks its head. */
  partial: boolean;
  nextIndex: number;
}

/** Characters of one streamed answer kept on screen (the committed step has the whole answer). */
const STREAMED_CHARS_MAX = 20_000;

/** Adds a delta to the calls streaming now; a new attempt starts its text over. */
export function addDelta(
  calls: ReadonlyMap<number, StreamingCall>,
  delta: ModelDelta,
): Map<number, StreamingCall> {
  const next = new Map(calls);
  const current = calls.get(delta.seq);
  const fresh = current === undefined || current.attempt !== delta.attempt;
  const base: StreamingCall = fresh
    ? {
        seq: delta.seq,
        kind: 'model',
        model: delta.model,
        attempt: delta.attempt,
        text: '',
        partial: delta.index > 0,
        nextIndex: delta.index,
      }
    : current;
  next.set(delta.seq, {
    ...base,
    partial: base.partial || delta.index > base.nextIndex,
    text: (base.text + delta.text).slice(-STREAMED_CHARS_MAX),
    nextIndex: delta.index + 1,
  });
  return next;
}

/**
 * Adds a piece of a tool's output (stdout and stderr interleaved as they came); a new attempt
 * starts over. A follower that joined mid-call has no way to tell: the committed step is whole.
 */
export function addToolOutput(
  calls: ReadonlyMap<number, StreamingCall>,
  output: ToolOutput,
): Map<number, StreamingCall> {
  const next = new Map(calls);
  const current = calls.get(output.seq);
  const base: StreamingCall =
    current === undefined || current.attempt !== output.attempt
      ? {
          seq: output.seq,
          kind: 'tool',
          model: output.tool,
          attempt: output.attempt,
          text: '',
          partial: false,
          nextIndex: 0,
        }
      : current;
  next.set(output.seq, { ...base, text: (base.text + output.text).slice(-STREAMED_CHARS_MAX) });
  return next;
}

/** Drops streamed text whose step has committed (or is no longer running). */
function pruneCommitted(
  calls: ReadonlyMap<number, StreamingCall>,
  steps: readonly Step[],
): ReadonlyMap<number, StreamingCall> {
  let next: Map<number, StreamingCall> | undefined;
  for (const seq of calls.keys()) {
    const step = steps.find((s) => s.seq === seq);
    if (step !== undefined && step.status !== 'running') {
      next ??= new Map(calls);
      next.delete(seq);
    }
  }
  return next ?? calls;
}

export function useRunLive(id: string) {
  const [run, setRun] = useState<Run>();
  const [steps, setSteps] = useState<Step[]>([]);
  const [events, setEvents] = useState<RunEvent[]>([]);
  const [streaming, setStreaming] = useState<ReadonlyMap<number, StreamingCall>>(new Map());
  const [streamState, setStreamState] = useState<StreamState>('connecting');
  const [error, setError] = useState<ApiError | Error>();
  const refetchTimer = useRef<ReturnType<typeof setTimeout>>(undefined);

  const load = useCallback(async () => {
    try {
      const [r, s] = await Promise.all([runsApi.get(id), runsApi.steps(id)]);
      setRun(r);
      setSteps(s.steps);
      setStreaming((calls) =>
        TERMINAL.has(r.status) ? new Map() : pruneCommitted(calls, s.steps),
      );
      setError(undefined);
    } catch (e) {
      setError(e as Error);
    }
  }, [id]);

  const scheduleLoad = useCallback(() => {
    if (refetchTimer.current !== undefined) return;
    refetchTimer.current = setTimeout(() => {
      refetchTimer.current = undefined;
      void load();
    }, REFETCH_THROTTLE_MS);
  }, [load]);

  useEffect(() => {
    setRun(undefined);
    setSteps([]);
    setEvents([]);
    setStreaming(new Map());
    void load();
    const controller = new AbortController();
    void streamRunEvents(
      id,
      0,
      {
        onEvent: (event) => {
          setEvents((list) => [...list.slice(-(EVENTS_SHOWN_MAX - 1)), event]);
          scheduleLoad();
        },
        onDelta: (delta) => setStreaming((calls) => addDelta(calls, delta)),
        onToolOutput: (output) => setStreaming((calls) => addToolOutput(calls, output)),
        onState: setStreamState,
      },
      controller.signal,
    );
    return () => {
      controller.abort();
      clearTimeout(refetchTimer.current);
      refetchTimer.current = undefined;
    };
  }, [id, load, scheduleLoad]);

  const live = run !== undefined && !TERMINAL.has(run.status);
  useEffect(() => {
    if (!live) return;
    const timer = setInterval(() => void load(), SAFETY_POLL_MS);
    return () => clearInterval(timer);
  }, [live, load]);

  return { run, steps, events, streaming, streamState, error, setError, setRun, load };
}
