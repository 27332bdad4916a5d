/**
 * Lists that page: the page never loads a whole world. The caller says how to fetch one page
 * from a cursor (`null` for the first) and what the next cursor is; these keep the pages and
 * offer "Load more" (`useCursorList` + `LoadMore`) or Previous/Next (`usePagedList` + `PrevNext`).
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ErrorNote } from './ui.js';

/** One page of a list and the cursor of the page after it (null: it was the last). */
export interface CursorPage<T> {
  items: T[];
  next: string | null;
}

export type FetchPage<T> = (cursor: string | null) => Promise<CursorPage<T>>;

export interface CursorList<T> {
  /** Every item loaded so far; null before the first page came. */
  items: T[] | null;
  error: unknown;
  loading: boolean;
  hasMore: boolean;
  /** Loads the next page and appends it. */
  more: () => void;
  /** Starts again from the first page. */
  reload: () => void;
}

/**
 * Asks for pages with the caller's latest `fetchPage`, keeping `loading` and `error`. `fresh`
 * starts over: an answer to anything asked before it, or after `stop()` (unmounted, `deps`
 * changed), is dropped, so a slow old page never shows over a new one.
 */
function usePageRequests<T>(fetchPage: FetchPage<T>) {
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const fetchRef = useRef(fetchPage);
  fetchRef.current = fetchPage;
  const ask = (cursor: string | null, fresh: boolean, take: (page: CursorPage<T>) => void): void => {
    const gen = fresh ? ++generation.current : generation.current;
    setLoading(true);
    fetchRef.current(cursor).then(
      (page) => {
        if (gen !== generation.current) return;
        take(page);
        setError(null);
        setLoading(false);
      },
      (e: unknown) => {
        if (gen !== generation.current) return;
        setError(e);
        setLoading(false);
      },
    );
  };
  const stop = (): void => {
    generation.current++;
  };
  return { error, loading, ask, stop };
}

/** Asks for the first page now and whenever `deps` change; drops what is in flight when they do. */
function useFirstPage(reload: () => void, stop: () => void): void {
  useEffect(() => {
    reload();
    return stop;
  }, [reload]);
}

/** Pages appended one after another ("Load more"); starts again when `deps` change. */
export function useCursorList<T>(fetchPage: FetchPage<T>, deps: readonly unknown[]): CursorList<T> {
  const [items, setItems] = useState<T[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const { error, loading, ask, stop } = usePageRequests(fetchPage);
  const load = (cursor: string | null, append: boolean) =>
    ask(cursor, !append, (page) => {
      setItems((shown) => (append ? [...(shown ?? []), ...page.items] : page.items));
      setNext(page.next);
    });
  const reload = useCallback(() => load(null, false), deps);
  useFirstPage(reload, stop);
  return { items, error, loading, hasMore: next !== null, more: () => next !== null && load(next, true), reload };
}

/** The "Load more" button under a list, with how many are shown; nothing when there is no more and `shown` is not given. */
export function LoadMore({ list, label = 'Load more' }: { list: Pick<CursorList<unknown>, 'items' | 'hasMore' | 'loading' | 'more' | 'error'>; label?: string }) {
  const shown = list.items?.length ?? 0;
  return (
    <div class="pager">
      {list.items !== null && list.error !== null && <ErrorNote error={list.error} what="The next page did not load" />}
      {list.hasMore && (
        <button type="button" onClick={list.more} disabled={list.loading}>
          {list.loading ? 'Loading…' : label}
        </button>
      )}
      {shown > 0 && <span class="hint">{list.hasMore ? `${shown} shown` : `${shown} in all`}</span>}
    </div>
  );
}

export interface PagedList<T> {
  /** The current page's items; null before the first page came. */
  items: T[] | null;
  error: unknown;
  loading: boolean;
  /** 1 for the first page. */
  page: number;
  hasPrev: boolean;
  hasNext: boolean;
  next: () => void;
  prev: () => void;
  reload: () => void;
}

/** One page at a time, Previous and Next; the cursors of the pages seen are kept to go back. */
export function usePagedList<T>(fetchPage: FetchPage<T>, deps: readonly unknown[]): PagedList<T> {
  // cursors[i] is the cursor that fetches page i + 1 (null for the first).
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [items, setItems] = useState<T[] | null>(null);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const { error, loading, ask, stop } = usePageRequests(fetchPage);
  const show = (stack: (string | null)[]) =>
    ask(stack[stack.length - 1] ?? null, true, (page) => {
      setCursors(stack);
      setItems(page.items);
      setNextCursor(page.next);
    });
  const reload = useCallback(() => show([null]), deps);
  useFirstPage(reload, stop);
  return {
    items,
    error,
    loading,
    page: cursors.length,
    hasPrev: cursors.length > 1,
    hasNext: nextCursor !== null,
    next: () => nextCursor !== null && show([...cursors, nextCursor]),
    prev: () => cursors.length > 1 && show(cursors.slice(0, -1)),
    reload,
  };
}

/** Previous / Next under a list, with the page number. */
export function PrevNext({ list }: { list: Pick<PagedList<unknown>, 'page' | 'hasPrev' | 'hasNext' | 'next' | 'prev' | 'loading' | 'items' | 'error'> }) {
  if (!list.hasPrev && !list.hasNext) return null;
  return (
    <div class="pager">
      <button type="button" onClick={list.prev} disabled={!list.hasPrev || list.loading}>
        ← Previous
      </button>
      <span class="hint">Page {list.page}</span>
      <button type="button" onClick={list.next} disabled={!list.hasNext || list.loading}>
        Next →
      </button>
      {list.items !== null && list.error !== null && <ErrorNote error={list.error} what="The page did not load" />}
    </div>
  );
}
