/**
 * One world looked into with its own token: its clock (set, advance), its map (each twin's
 * position and resources) and its timeline (the twins' logs merged, newest first).
 */
import { useEffect, useState } from 'preact/hooks';
import { WorldApi } from './api.js';
import type { Clock, TimelineItem, WorldMap, WorldRow } from './api.js';
import { ErrorNote, instant } from './ui.js';

/**
 * Order in which a twin's record types read best: those its events name first (`customer` for
 * `customer.created`), then plain types, then types with a dot, which are a twin's own indexes
 * (`by.customer.email_folded.…`).
 */
function typeRank(type: string, named: ReadonlySet<string>): number {
  if (named.has(type)) return 0;
  return type.includes('.') ? 2 : 1;
}

/** A record id as the vendor's API shows it: the last segment of a twin's composite id (`acct_…/cus_…`). */
function shortId(id: string): string {
  return id.slice(id.lastIndexOf('/') + 1);
}

/** What one timeline entry did: its cause and the events it emitted, then the records it wrote. */
export function summary(item: TimelineItem): { what: string; wrote: string } {
  const { cause, writes, events } = item.entry;
  const what: string[] = [];
  switch (cause.kind) {
    case 'request': {
      // `route` is the twin's name for the matched route (`customers.create`), or the raw path.
      const request = `${cause.method} ${cause.path} → ${cause.status}`;
      what.push(cause.route === cause.path || cause.route === `${cause.method} ${cause.path}` ? request : `${request} · ${cause.route}`);
      break;
    }
    case 'move':
      what.push(`${cause.move} (due ${instant(cause.dueAt)})`);
      break;
    case 'ingest':
      what.push(`from ${cause.source}`);
      break;
    case 'system':
      what.push(cause.reason);
      break;
    case 'refresh':
      break;
  }
  if (events !== undefined && events.length > 0) what.push(`events ${events.map((e) => e.type).join(', ')}`);
  const named = new Set((events ?? []).map((e) => e.type.split('.')[0] ?? ''));
  const ordered = [...writes].sort((a, b) => typeRank(a.type, named) - typeRank(b.type, named));
  const shown = ordered.slice(0, 3).map((w) => `${w.value === null ? 'deleted ' : ''}${w.type} ${shortId(w.id)}`);
  const wrote = writes.length === 0 ? '' : `wrote ${shown.join(', ')}${writes.length > 3 ? ` and ${writes.length - 3} more` : ''}`;
  return { what: what.join('; '), wrote };
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

function SummaryCell({ item }: { item: TimelineItem }) {
  const { what, wrote } = summary(item);
  return (
    <>
      {what !== '' && <div>{what}</div>}
      {wrote !== '' && (
        <div class="wrote" title={item.entry.writes.map((w) => `${w.type} ${w.id}`).join('\n')}>
          {wrote}
        </div>
      )}
    </>
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
                <td>
                  {t.resources.length === 0 ? (
                    <span class="muted">none yet</span>
                  ) : (
                    [...t.resources]
                      .sort((a, b) => typeRank(a.type, new Set()) - typeRank(b.type, new Set()) || a.type.localeCompare(b.type))
                      .map((r) => (
                        <span key={r.type} class={r.type.includes('.') ? 'resource index' : 'resource'}>
                          {r.type} <strong>{r.count}</strong>
                        </span>
                      ))
                  )}
                </td>
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
                  <td class="summary">
                    <SummaryCell item={item} />
                  </td>
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
