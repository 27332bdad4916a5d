/**
 * Loading a view's data: the answer, the error, whether it is under way. An answer that comes
 * after the view moved on (a newer call, or the component gone) is dropped, so a quick click
 * never shows an older page over a newer one.
 */
import { useEffect, useRef, useState } from 'preact/hooks';

export interface Loaded<T> {
  data: T | null;
  error: unknown;
  loading: boolean;
}

export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<Loaded<T>>({ data: null, error: null, loading: true });
  const latest = useRef(0);
  useEffect(() => {
    const call = ++latest.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => {
        if (call === latest.current) setState({ data, error: null, loading: false });
      },
      (error: unknown) => {
        if (call === latest.current) setState({ data: null, error, loading: false });
      },
    );
    return () => {
      latest.current++;
    };
  }, deps);
  return state;
}
