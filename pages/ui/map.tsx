/** A world's map: each twin's position and how many records of each type it holds. */
import { typeRank } from './timeline.js';
import type { WorldMap } from './types.js';

export function MapTable({ map }: { map: WorldMap }) {
  return (
    <table aria-label="Map" class="data compact">
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
  );
}
