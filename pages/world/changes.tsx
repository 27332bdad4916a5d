/**
 * A changeset's changes as a diff a person reads: per change the vendor request and the twin's
 * answer status (`POST /v1/products 200`), then per record it wrote its type and id, whether it
 * was created or deleted, and field by field `name: (none) → "Pro"`. Records a twin keeps for
 * itself (types beginning `__`) are folded below.
 */
import { Badge, JsonView, toneOf } from '../ui/index.js';
import type { Change, RecordChange, Tone } from '../ui/index.js';
import { isBookkeeping, recordDiff, shownValue } from './diff.js';

const STATE_TONE: Record<Change['state'], Tone> = { landed: 'gray', deployed: 'green', failed: 'red' };

function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

function Value({ value, side }: { value: unknown; side: 'before' | 'after' }) {
  const { text, whole } = shownValue(value);
  return (
    <span class={`diff-${side}${value === undefined ? ' diff-none' : ''}`} title={whole === text ? undefined : whole}>
      {text}
    </span>
  );
}

const KIND_TONE = { created: 'green', deleted: 'red', changed: 'blue', unchanged: 'gray' } as const;

function RecordDiffView({ write }: { write: RecordChange }) {
  const diff = recordDiff(write.before, write.after);
  return (
    <div class="record-diff" data-record={`${write.type} ${write.id}`}>
      <div class="record-head">
        <span class="mono">{write.type}</span> <span class="mono record-id">{write.id}</span> <Badge tone={KIND_TONE[diff.kind]}>{diff.kind}</Badge>
      </div>
      {diff.fields.length > 0 && (
        <ul class="diff" aria-label={`${write.type} ${write.id}`}>
          {diff.fields.map((f) => (
            <li key={f.field}>
              <span class="diff-field">{f.field === '' ? '(value)' : f.field}</span>: <Value value={f.before} side="before" /> <span class="diff-arrow">→</span> <Value value={f.after} side="after" />
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function ChangeView({ change }: { change: Change }) {
  const { request } = change;
  const records = change.writes.filter((w) => !isBookkeeping(w.type));
  const bookkeeping = change.writes.filter((w) => isBookkeeping(w.type));
  return (
    <article class="change" aria-label={`Change ${change.index + 1}`}>
      <header class="change-head">
        <span class="change-index">#{change.index + 1}</span>
        <Badge tone="blue">{change.twin}</Badge>
        <span class="mono change-request">
          {request.method} {request.path}
          {request.query === '' ? '' : `?${request.query}`}
        </span>
        <Badge tone={toneOf(statusClass(change.status))} title="the twin's answer">
          {change.status}
        </Badge>
        <Badge tone={STATE_TONE[change.state]}>{change.state}</Badge>
      </header>
      {records.length === 0 && <p class="muted">Wrote no record a vendor has.</p>}
      {records.map((w) => (
        <RecordDiffView key={`${w.type}/${w.id}`} write={w} />
      ))}
      {bookkeeping.length > 0 && (
        <details class="change-more">
          <summary>
            {bookkeeping.length} record{bookkeeping.length === 1 ? '' : 's'} the twin keeps for itself
          </summary>
          {bookkeeping.map((w) => (
            <RecordDiffView key={`${w.type}/${w.id}`} write={w} />
          ))}
        </details>
      )}
      {request.body !== '' && (
        <details class="change-more">
          <summary>Request body{request.contentType === null ? '' : ` (${request.contentType})`}</summary>
          <pre class="request-body">{request.body}</pre>
        </details>
      )}
      {change.answer !== null && change.answer !== undefined && (
        <details class="change-more">
          <summary>The twin's answer</summary>
          <JsonView value={change.answer} />
        </details>
      )}
    </article>
  );
}

export function ChangeList({ changes }: { changes: Change[] }) {
  if (changes.length === 0) return <p class="muted">This changeset has no changes.</p>;
  return (
    <div class="changes">
      {changes.map((c) => (
        <ChangeView key={c.index} change={c} />
      ))}
    </div>
  );
}
