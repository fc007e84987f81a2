// A run kept live on screen: its record and journal, re-read (throttled) whenever its event stream
// delivers an event, plus a slow safety poll while it has not ended. The stream is fetch-based SSE
// (see sse.ts).
import { useCallback, useEffect, useRef, useState } from 'react';
import { TERMINAL, runsApi, type ApiError, type Run, type RunEvent, type Step } from './api.ts';
import { streamRunEvents } from './sse.ts';

/** Events kept on screen; older ones stay in the store (GET …/events?format=json). */
const EVENTS_SHOWN_MAX = 500;
/** A burst of events causes one re-read of the run and its journal, not one per event. */
const REFETCH_THROTTLE_MS = 150;
/** Re-read a live run this often even without events (a missed wake-up costs at most this long). */
const SAFETY_POLL_MS = 5_000;

export type StreamState = 'connecting' | 'live' | 'ended' | 'retrying';

export function useRunLive(id: string) {
  const [run, setRun] = useState<Run>();
  const [steps, setSteps] = useState<Step[]>([]);
  const [events, setEvents] = useState<RunEvent[]>([]);
  const [streamState, setStreamState] = useState<StreamState>('connecting');
  const [error, setError] = useState<ApiError | Error>();
  const refetchTimer = useRef<ReturnType<typeof setTimeout>>(undefined);

  const load = useCallback(async () => {
    try {
      const [r, s] = await Promise.all([runsApi.get(id), runsApi.steps(id)]);
      setRun(r);
      setSteps(s.steps);
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

  return { run, steps, events, streamState, error, setError, setRun, load };
}
