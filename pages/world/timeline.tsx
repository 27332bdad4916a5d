/**
 * The whole timeline: the twins' logs merged, newest first, narrowed by twin and by trace,
 * kept live (new entries come in at the top while "Live" is on) and paged back with "Older
 * entries" (the world's `before` cursor).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { Card, Empty, ErrorNote, Loading, TimelineTable, useInterval } from '../ui/index.js';
import type { TimelineItem } from '../ui/index.js';
import type { SectionProps, TimelineFilter } from './api.js';

const POLL_MS = 2000;

const keyOf = (item: TimelineItem) => `${item.twin}:${item.position}`;

/** The entries of a fresh first page that are newer than everything shown, or null when the page does not reach what is shown. */
export function newerThanShown(page: TimelineItem[], shown: TimelineItem[]): TimelineItem[] | null {
  const seen = new Set(shown.map(keyOf));
  const at = page.findIndex((item) => seen.has(keyOf(item)));
  if (at === -1) return shown.length === 0 ? page : null;
  return page.slice(0, at);
}

export function TimelineSection({ api, config }: SectionProps) {
  const [filter, setFilter] = useState<TimelineFilter>({});
  const [trace, setTrace] = useState('');
  const [live, setLive] = useState(true);
  const [items, setItems] = useState<TimelineItem[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(false);
  // Answers for an earlier filter are dropped.
  const generation = useRef(0);
  const shown = useRef<TimelineItem[]>([]);
  shown.current = items ?? [];

  useEffect(() => {
    const gen = ++generation.current;
    setItems(null);
    setError(null);
    api.timeline(filter, null).then(
      (page) => {
        if (gen !== generation.current) return;
        setItems(page.entries);
        setNext(page.next);
      },
      (e: unknown) => gen === generation.current && setError(e),
    );
  }, [api, filter]);

  useInterval(
    () => {
      const gen = generation.current;
      api.timeline(filter, null).then(
        (page) => {
          if (gen !== generation.current) return;
          const newer = newerThanShown(page.entries, shown.current);
          if (newer === null) {
            // More came than a page holds: start again from the newest.
            setItems(page.entries);
            setNext(page.next);
          } else if (newer.length > 0) setItems([...newer, ...shown.current]);
          setError(null);
        },
        (e: unknown) => gen === generation.current && setError(e),
      );
    },
    live ? POLL_MS : null,
  );

  const older = () => {
    if (next === null) return;
    const gen = generation.current;
    setLoading(true);
    api.timeline(filter, next).then(
      (page) => {
        setLoading(false);
        if (gen !== generation.current) return;
        setItems([...shown.current, ...page.entries]);
        setNext(page.next);
      },
      (e: unknown) => {
        setLoading(false);
        setError(e);
      },
    );
  };

  const byTrace = (t: string) => {
    setTrace(t);
    setFilter({ ...filter, trace: t });
  };

  return (
    <Card title="Timeline">
      <form
        class="inline filters"
        aria-label="Filter the timeline"
        onSubmit={(e) => {
          e.preventDefault();
          setFilter({ ...filter, trace: trace.trim() });
        }}
      >
        <label>
          Twin{' '}
          <select name="twin" value={filter.twin ?? ''} onChange={(e) => setFilter({ ...filter, twin: e.currentTarget.value })}>
            <option value="">all twins</option>
            {config.twins.map((t) => (
              <option key={t.vendor} value={t.vendor}>
                {t.vendor}
              </option>
            ))}
          </select>
        </label>
        <label>
          Trace <input name="trace" class="mono" placeholder="32 hex digits of a traceparent" size={34} value={trace} onInput={(e) => setTrace(e.currentTarget.value)} />
        </label>
        <button type="submit">Filter</button>
        {(filter.trace ?? '') !== '' && (
          <button type="button" onClick={() => (setTrace(''), setFilter({ ...filter, trace: '' }))}>
            Any trace
          </button>
        )}
        <label class="live">
          <input type="checkbox" checked={live} onChange={(e) => setLive(e.currentTarget.checked)} /> Live
        </label>
      </form>
      <ErrorNote error={error} what="The timeline could not be read" />
      {items === null ? (
        error === null && <Loading what="the timeline" />
      ) : items.length === 0 ? (
        <Empty title={filter.twin || filter.trace ? 'No entries match.' : 'Nothing has happened in this world yet.'} hint="Requests your app sends to the twins appear here as they happen." />
      ) : (
        <TimelineTable items={items} onTrace={byTrace} />
      )}
      {next !== null && (
        <div class="pager">
          <button type="button" onClick={older} disabled={loading}>
            {loading ? 'Loading…' : 'Older entries'}
          </button>
          <span class="hint">{items?.length ?? 0} shown</span>
        </div>
      )}
    </Card>
  );
}
