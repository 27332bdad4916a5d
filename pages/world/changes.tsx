/**
 * A changeset's changes as a diff a person reads: per change the vendor request and the twin's
 * answer status (`POST /v1/products 200`), then per record it wrote its type and id, whether it
 * was created or deleted, and field by field `name: (none) → "Pro"`. The records the answer
 * names come first; what the change wrote beside them (events, counters, the twin's own records
 * and indexes) is folded below.
 */
import { Badge, JsonView, shortId, toneOf } from '../ui/index.js';
import type { Change, RecordChange, Tone } from '../ui/index.js';
import { isBookkeeping, recordDiff, shownValue, splitWrites, type FieldChange } from './diff.js';

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

/** A record's id with the part that files it (`acct_…/` of `acct_…/prod_…`) quieter than the vendor's id. */
function RecordId({ id }: { id: string }) {
  const own = shortId(id);
  return (
    <span class="mono record-id">
      {own.length < id.length && <span class="record-scope">{id.slice(0, id.length - own.length)}</span>}
      {own}
    </span>
  );
}

const KIND_TONE = { created: 'green', deleted: 'red', changed: 'blue', unchanged: 'gray' } as const;

function FieldLine({ f }: { f: FieldChange }) {
  return (
    <li>
      <span class="diff-field">{f.field === '' ? '(value)' : f.field}</span>: <Value value={f.before} side="before" /> <span class="diff-arrow">→</span> <Value value={f.after} side="after" />
    </li>
  );
}

function RecordDiffView({ write }: { write: RecordChange }) {
  const diff = recordDiff(write.before, write.after);
  // A record made with many empty fields: those are named in one line after the ones given.
  const empty = diff.kind === 'created' ? diff.fields.filter((f) => f.after === null) : [];
  const shown = empty.length > 1 ? diff.fields.filter((f) => f.after !== null) : diff.fields;
  return (
    <div class="record-diff" data-record={`${write.type} ${write.id}`}>
      <div class="record-head">
        <span class="mono">{write.type}</span> <RecordId id={write.id} /> <Badge tone={KIND_TONE[diff.kind]}>{diff.kind}</Badge>
      </div>
      {diff.fields.length > 0 && (
        <ul class="diff" aria-label={`${write.type} ${write.id}`}>
          {shown.map((f) => (
            <FieldLine key={f.field} f={f} />
          ))}
          {empty.length > 1 && (
            <li class="diff-empty">
              null: <span class="diff-field">{empty.map((f) => f.field).join(', ')}</span>
            </li>
          )}
        </ul>
      )}
    </div>
  );
}

function ChangeView({ change, failing }: { change: Change; failing: string[] }) {
  const { request } = change;
  const { subjects, others } = splitWrites(change.writes, change.answer);
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
        {failing.map((check) => (
          <Badge key={check} tone="red" title="the latest verification, on the current hash">
            fails {check}
          </Badge>
        ))}
      </header>
      {subjects.length === 0 && <p class="muted">Wrote no record a vendor has.</p>}
      {subjects.map((w) => (
        <RecordDiffView key={`${w.type}/${w.id}`} write={w} />
      ))}
      {others.length > 0 && (
        <details class="change-more">
          <summary>
            {others.length} more record{others.length === 1 ? '' : 's'} it wrote: {[...new Set(others.map((w) => (isBookkeeping(w.type) ? 'the twin’s own' : w.type)))].join(', ')}
          </summary>
          {others.map((w) => (
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

/** `failing`: per change index, the checks the latest verification on the current hash failed it on. */
export function ChangeList({ changes, failing }: { changes: Change[]; failing: Map<number, string[]> }) {
  if (changes.length === 0) return <p class="muted">This changeset has no changes.</p>;
  return (
    <div class="changes">
      {changes.map((c) => (
        <ChangeView key={c.index} change={c} failing={failing.get(c.index) ?? []} />
      ))}
    </div>
  );
}
