/** A world's timeline as a table: when, which twin, what caused each entry and what it wrote. */
import { instant, shortId } from './format.js';
import type { TimelineItem } from './types.js';

/**
 * Order in which a twin's record types read best: those its events name first (`customer` for
 * `customer.created`), then plain types, then types with a dot, which are a twin's own indexes
 * (`by.customer.email_folded.…`).
 */
export function typeRank(type: string, named: ReadonlySet<string>): number {
  if (named.has(type)) return 0;
  return type.includes('.') ? 2 : 1;
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
    case 'push':
      what.push(`change ${cause.change + 1} of changeset ${cause.changeset}: ${cause.method} ${cause.path} → ${cause.status}`);
      break;
    case 'pull':
      what.push(`${cause.merged ? 'merged' : 'pulled'} from ${cause.origin}`);
      break;
  }
  if (events !== undefined && events.length > 0) what.push(`events ${events.map((e) => e.type).join(', ')}`);
  const named = new Set((events ?? []).map((e) => e.type.split('.')[0] ?? ''));
  const ordered = [...writes].sort((a, b) => typeRank(a.type, named) - typeRank(b.type, named));
  const shown = ordered.slice(0, 3).map((w) => `${w.value === null ? 'deleted ' : ''}${w.type} ${shortId(w.id)}`);
  const wrote = writes.length === 0 ? '' : `wrote ${shown.join(', ')}${writes.length > 3 ? ` and ${writes.length - 3} more` : ''}`;
  return { what: what.join('; '), wrote };
}

/** The trace id (32 hex) of a W3C `traceparent`, or null. */
export function traceId(traceparent: string | undefined): string | null {
  const m = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(traceparent ?? '');
  return m === null ? null : m[1]!;
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

/**
 * The entries, newest first as the world answers them. With `onTrace`, an entry's trace id is a
 * button that narrows the timeline to it.
 */
export function TimelineTable({ items, onTrace }: { items: TimelineItem[]; onTrace?: (trace: string) => void }) {
  return (
    <div class="scroll">
      <table aria-label="Timeline" class="data timeline">
        <thead>
          <tr>
            <th>Time</th>
            <th>Twin</th>
            <th class="num">Position</th>
            <th>Kind</th>
            <th>What happened</th>
            {onTrace !== undefined && <th>Trace</th>}
          </tr>
        </thead>
        <tbody>
          {items.map((item) => {
            const trace = traceId(item.entry.traceparent);
            return (
              <tr key={`${item.twin}:${item.position}`}>
                <td class="mono nowrap">{instant(item.entry.occurredAt)}</td>
                <td class="mono">{item.twin}</td>
                <td class="num">{item.position}</td>
                <td>{item.entry.cause.kind}</td>
                <td class="summary">
                  <SummaryCell item={item} />
                </td>
                {onTrace !== undefined && (
                  <td class="mono nowrap">
                    {trace === null ? (
                      <span class="muted">—</span>
                    ) : (
                      <button type="button" class="link" title={`Show only trace ${trace}`} onClick={() => onTrace(trace)}>
                        {trace.slice(0, 8)}…
                      </button>
                    )}
                  </td>
                )}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
