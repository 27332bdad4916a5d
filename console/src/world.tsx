/**
 * One world looked into with its own token: its clock (set, advance), its map (each twin's
 * position and resources) and its timeline (the twins' logs merged, newest first).
 */
import { useEffect, useState } from 'preact/hooks';
import { ClockControls, ErrorNote, Loading, MapTable, TimelineTable } from '../../pages/ui/index.js';
import { WorldApi } from './api.js';
import type { Clock, TimelineItem, WorldMap, WorldRow } from './api.js';

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
      <section aria-labelledby="clock-heading">
        <h3 id="clock-heading">Clock</h3>
        <ClockControls
          clock={clock}
          onSet={(at) => world.setClock(at)}
          onAdvance={(by) => world.advanceClock(by)}
          onChanged={(c) => {
            setClock(c);
            // Timed moves may fall due when the clock moves: the timeline shows them.
            void load();
          }}
        />
      </section>
      <section aria-labelledby="map-heading">
        <h3 id="map-heading">Map</h3>
        {map === null ? <Loading what="the map" /> : <MapTable map={map} />}
      </section>
      <section aria-labelledby="timeline-heading">
        <h3 id="timeline-heading">Timeline</h3>
        {items === null ? (
          <Loading what="the timeline" />
        ) : items.length === 0 ? (
          <p class="muted">Nothing has happened in this world yet.</p>
        ) : (
          <TimelineTable items={items} />
        )}
        {next !== null && (
          <button type="button" onClick={() => void older()} disabled={loadingOlder}>
            Older entries
          </button>
        )}
      </section>
    </section>
  );
}
