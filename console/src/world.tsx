/**
 * One world looked into with its own token: its clock (set, advance), its map (each twin's
 * position and resources) and its timeline (the twins' logs merged, newest first).
 */
import { useEffect, useState } from 'preact/hooks';
import { WorldApi } from './api.js';
import type { Clock, TimelineItem, WorldMap, WorldRow } from './api.js';
import { ErrorNote, instant } from './ui.js';

/** What one timeline entry did, in a line: its cause, then the records it wrote and the events it emitted. */
export function summary(item: TimelineItem): string {
  const { cause, writes, events } = item.entry;
  const parts: string[] = [];
  switch (cause.kind) {
    case 'request':
      parts.push(`${cause.route} → ${cause.status}`);
      break;
    case 'move':
      parts.push(`${cause.move} (due ${instant(cause.dueAt)})`);
      break;
    case 'ingest':
      parts.push(`from ${cause.source}`);
      break;
    case 'system':
      parts.push(cause.reason);
      break;
    case 'refresh':
      break;
  }
  if (writes.length > 0) {
    const shown = writes.slice(0, 3).map((w) => `${w.value === null ? 'deleted ' : ''}${w.type} ${w.id}`);
    parts.push(`wrote ${shown.join(', ')}${writes.length > 3 ? ` and ${writes.length - 3} more` : ''}`);
  }
  if (events !== undefined && events.length > 0) parts.push(`events ${events.map((e) => e.type).join(', ')}`);
  return parts.join('; ');
}

function ClockSection({ world, clock, onChanged }: { world: WorldApi; clock: Clock | null; onChanged: (clock: Clock) => void }) {
  const [at, setAt] = useState('');
  const [by, setBy] = useState('1h');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const act = async (what: () => Promise<Clock>) => {
    setBusy(true);
    setError(null);
    try {
      onChanged(await what());
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="clock-heading">
      <h3 id="clock-heading">Clock</h3>
      {clock === null ? (
        <p class="muted">Loading…</p>
      ) : (
        <p class="clock" data-frozen={String(clock.frozen)}>
          <span class="mono">{instant(clock.at)}</span>{' '}
          <span class="badge">{clock.frozen ? 'set: moves only when set or advanced' : 'wall clock: not set'}</span>
        </p>
      )}
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          void act(() => world.setClock(at.trim()));
        }}
      >
        <label>
          Set to <input name="at" class="mono" placeholder="2026-05-01T09:00:00Z" value={at} onInput={(e) => setAt(e.currentTarget.value)} required />
        </label>
        <button type="submit" disabled={busy}>
          Set clock
        </button>
      </form>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          void act(() => world.advanceClock(by.trim()));
        }}
      >
        <label>
          Advance by <input name="by" class="mono short" placeholder="1h" value={by} onInput={(e) => setBy(e.currentTarget.value)} required />
        </label>
        <button type="submit" disabled={busy}>
          Advance
        </button>
        <span class="hint">a number and s, m, h or d</span>
      </form>
      <ErrorNote error={error} what="The clock did not change" />
    </section>
  );
}

function MapSection({ map }: { map: WorldMap | null }) {
  return (
    <section aria-labelledby="map-heading">
      <h3 id="map-heading">Map</h3>
      {map === null ? (
        <p class="muted">Loading…</p>
      ) : (
        <table aria-label="Map" class="compact">
          <thead>
            <tr>
              <th>Twin</th>
              <th class="num">Position</th>
              <th>Resources</th>
            </tr>
          </thead>
          <tbody>
            {map.twins.map((t) => (
              <tr key={t.twin}>
                <td class="mono">{t.twin}</td>
                <td class="num">{t.position}</td>
                <td>{t.resources.length === 0 ? <span class="muted">none yet</span> : t.resources.map((r) => `${r.type} ${r.count}`).join(', ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function TimelineSection({ items, next, onOlder, loadingOlder }: { items: TimelineItem[] | null; next: string | null; onOlder: () => void; loadingOlder: boolean }) {
  return (
    <section aria-labelledby="timeline-heading">
      <h3 id="timeline-heading">Timeline</h3>
      {items === null ? (
        <p class="muted">Loading…</p>
      ) : items.length === 0 ? (
        <p class="muted">Nothing has happened in this world yet.</p>
      ) : (
        <div class="scroll">
          <table aria-label="Timeline">
            <thead>
              <tr>
                <th>Time</th>
                <th>Twin</th>
                <th class="num">Position</th>
                <th>Kind</th>
                <th>What happened</th>
              </tr>
            </thead>
            <tbody>
              {items.map((item) => (
                <tr key={`${item.twin}:${item.position}`}>
                  <td class="mono nowrap">{instant(item.entry.occurredAt)}</td>
                  <td class="mono">{item.twin}</td>
                  <td class="num">{item.position}</td>
                  <td>{item.entry.cause.kind}</td>
                  <td class="summary">{summary(item)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {next !== null && (
        <button type="button" onClick={onOlder} disabled={loadingOlder}>
          Older entries
        </button>
      )}
    </section>
  );
}

/** The panel of the world chosen in the list; `key` it on the token so a rotation reloads it. */
export function WorldPanel({ base, row, onClose }: { base: string; row: WorldRow; onClose: () => void }) {
  const [world] = useState(() => new WorldApi(base, row.name, row.token));
  const [clock, setClock] = useState<Clock | null>(null);
  const [map, setMap] = useState<WorldMap | null>(null);
  const [items, setItems] = useState<TimelineItem[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [errors, setErrors] = useState<{ what: string; error: unknown }[]>([]);

  const load = async () => {
    setErrors([]);
    const failed: { what: string; error: unknown }[] = [];
    const [c, m, t] = await Promise.allSettled([world.clock(), world.map(), world.timeline()]);
    if (c.status === 'fulfilled') setClock(c.value);
    else failed.push({ what: 'Reading the clock failed', error: c.reason });
    if (m.status === 'fulfilled') setMap(m.value);
    else failed.push({ what: 'Reading the map failed', error: m.reason });
    if (t.status === 'fulfilled') {
      setItems(t.value.entries);
      setNext(t.value.next);
    } else failed.push({ what: 'Reading the timeline failed', error: t.reason });
    setErrors(failed);
  };

  const older = async () => {
    if (next === null) return;
    setLoadingOlder(true);
    try {
      const page = await world.timeline(next);
      setItems((shown) => [...(shown ?? []), ...page.entries]);
      setNext(page.next);
    } catch (e) {
      setErrors((shown) => [...shown, { what: 'Reading older entries failed', error: e }]);
    } finally {
      setLoadingOlder(false);
    }
  };

  useEffect(() => {
    void load();
  }, [world]);

  return (
    <section class="panel" aria-label={`World ${row.name}`}>
      <header class="panel-head">
        <h2>
          <span class="mono">{row.name}</span>
          {row.base !== null && <span class="muted"> branch of {row.base}</span>}
        </h2>
        <div class="actions">
          <button type="button" onClick={() => void load()}>
            Refresh
          </button>
          <button type="button" onClick={onClose}>
            Close
          </button>
        </div>
      </header>
      <dl class="urls">
        <dt>Vendor APIs</dt>
        <dd class="mono">
          {row.twins.map((t) => (
            <div key={t.vendor}>{`${world.url}/${t.vendor}/`}</div>
          ))}
        </dd>
        <dt>World API</dt>
        <dd class="mono">{world.api}/</dd>
      </dl>
      {errors.map((e) => (
        <ErrorNote key={e.what} error={e.error} what={e.what} />
      ))}
      <ClockSection
        world={world}
        clock={clock}
        onChanged={(c) => {
          setClock(c);
          // Timed moves may fall due when the clock moves: the timeline shows them.
          void load();
        }}
      />
      <MapSection map={map} />
      <TimelineSection items={items} next={next} onOlder={() => void older()} loadingOlder={loadingOlder} />
    </section>
  );
}
