/**
 * Loading data in a component: the call's answer, its error, whether it is under way, and a
 * way to call it again. An answer that comes after a newer call was made is dropped, so a fast
 * typist never sees an older list replace a newer one.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  /** The last answer; null until the first one comes (kept while reloading). */
  data: T | null;
  /** The last call's error, or null. */
  error: unknown;
  loading: boolean;
  /** Calls again (after a change the page made). */
  reload: () => void;
  /** Replaces the data in place (an edit whose answer is the new record). */
  set: (data: T) => void;
}

/** `const { data, error, loading, reload } = useLoad(() => world.api<Clock>('/clock'), [world])`; called again when `deps` change. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const latest = useRef(0);
  const run = useCallback(() => {
    const call = ++latest.current;
    setLoading(true);
    load().then(
      (value) => {
        if (call !== latest.current) return;
        setData(value);
        setError(null);
        setLoading(false);
      },
      (e: unknown) => {
        if (call !== latest.current) return;
        setError(e);
        setLoading(false);
      },
    );
  }, deps);
  useEffect(() => {
    run();
    return () => {
      // An answer for an unmounted component is dropped.
      latest.current++;
    };
  }, [run]);
  return { data, error, loading, reload: run, set: setData };
}

/** Calls `tick` every `ms` while the tab is visible (and once when it becomes visible again); stops on unmount. */
export function useInterval(tick: () => void, ms: number | null): void {
  const saved = useRef(tick);
  saved.current = tick;
  useEffect(() => {
    if (ms === null) return undefined;
    const id = setInterval(() => {
      if (document.visibilityState === 'visible') saved.current();
    }, ms);
    const onVisible = () => {
      if (document.visibilityState === 'visible') saved.current();
    };
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      clearInterval(id);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [ms]);
}

export interface Action {
  /** Whether the work is under way (a form's button disabled meanwhile). */
  busy: boolean;
  /** The last run's error, or null. */
  error: unknown;
  setError: (error: unknown) => void;
  /** Runs `work`: busy while it runs, its error kept (and the last one cleared when it starts). */
  run: (work: () => Promise<void>) => Promise<void>;
}

/** A button's or a form's work: `const action = useAction(); … onSubmit={() => action.run(async () => …)}`. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, setError, run };
}
