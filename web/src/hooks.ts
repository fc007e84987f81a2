// Data hooks: a poller that refreshes while the tab is visible, and a ticking clock for live
// durations.
import { useCallback, useEffect, useRef, useState } from 'react';

export interface Polled<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  refresh: () => void;
}

/**
 * Calls `load` now, then every `intervalMs` while the page is visible; a change of `key` starts
 * over.
 */
export function usePolling<T>(
  load: (signal: AbortSignal) => Promise<T>,
  intervalMs: number,
  key: string,
): Polled<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<Error>();
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const refresh = useCallback(() => setTick((t) => t + 1), []);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` is the trigger: a new key clears the old data.
  useEffect(() => {
    setData(undefined);
    setLoading(true);
  }, [key]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` and `tick` are the triggers: reload on a new key or refresh().
  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      if (document.visibilityState === 'visible') {
        try {
          const value = await loadRef.current(controller.signal);
          if (controller.signal.aborted) return;
          setData(value);
          setError(undefined);
        } catch (e) {
          if (controller.signal.aborted) return;
          setError(e as Error);
        } finally {
          if (!controller.signal.aborted) setLoading(false);
        }
      }
      if (!controller.signal.aborted && intervalMs > 0) timer = setTimeout(run, intervalMs);
    };
    void run();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [key, tick, intervalMs]);

  return { data, error, loading, refresh };
}

/** The current time, re-rendered every `everyMs` while `active`. */
export function useNow(everyMs: number, active = true): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs, active]);
  return now;
}
