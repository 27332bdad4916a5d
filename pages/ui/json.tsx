/**
 * A JSON value as a tree whose objects and arrays fold (`<details>`: no state, keyboard and
 * screen readers work as the browser's). Long arrays and objects show their first `MAX_SHOWN`
 * members and say how many more there are, so a large record cannot freeze the page.
 */
import type { ComponentChildren } from 'preact';

const MAX_SHOWN = 200;

function Scalar({ value }: { value: unknown }) {
  if (value === null) return <span class="json-null">null</span>;
  switch (typeof value) {
    case 'string':
      return <span class="json-string">{JSON.stringify(value)}</span>;
    case 'number':
    case 'bigint':
      return <span class="json-number">{String(value)}</span>;
    case 'boolean':
      return <span class="json-bool">{String(value)}</span>;
    default:
      return <span class="json-null">{value === undefined ? 'undefined' : String(value)}</span>;
  }
}

function Node({ name, value, depth, open }: { name: ComponentChildren; value: unknown; depth: number; open: number }) {
  const key = name === null ? null : <span class="json-key">{name}: </span>;
  if (typeof value !== 'object' || value === null) {
    return (
      <div class="json-line">
        {key}
        <Scalar value={value} />
      </div>
    );
  }
  const array = Array.isArray(value);
  const entries: [string, unknown][] = array ? (value as unknown[]).map((v, i) => [String(i), v]) : Object.entries(value as Record<string, unknown>);
  const [start, end] = array ? ['[', ']'] : ['{', '}'];
  if (entries.length === 0) {
    return (
      <div class="json-line">
        {key}
        <span class="json-punct">{start + end}</span>
      </div>
    );
  }
  const shown = entries.slice(0, MAX_SHOWN);
  return (
    <details class="json-node" open={depth < open}>
      <summary>
        {key}
        <span class="json-punct">{start}</span>
        <span class="json-count">
          {entries.length} {array ? (entries.length === 1 ? 'item' : 'items') : entries.length === 1 ? 'key' : 'keys'}
        </span>
        <span class="json-punct json-close-folded">{end}</span>
      </summary>
      <div class="json-children">
        {shown.map(([k, v]) => (
          <Node key={k} name={array ? null : k} value={v} depth={depth + 1} open={open} />
        ))}
        {entries.length > shown.length && <div class="json-line muted">… {entries.length - shown.length} more</div>}
      </div>
      <span class="json-punct">{end}</span>
    </details>
  );
}

/**
 * `<JsonView value={record} />`: the value as a folding tree, the first `open` levels open
 * (default 1). `label` names the tree for screen readers and tests.
 */
export function JsonView({ value, open = 1, label }: { value: unknown; open?: number; label?: string }) {
  return (
    <div class="json" role="group" aria-label={label ?? 'JSON'}>
      <Node name={null} value={value} depth={0} open={open} />
    </div>
  );
}
