/**
 * Secrets a twin keeps in its records (a webhook's signing secret) are hidden from a caller
 * that may only read, wherever the world shows records: the log, the timeline, the diff and
 * the checkpoint. With a signing secret a reader could sign webhooks the app under test
 * would trust. The vendors hide them too: Stripe shows a `whsec_` once, GitHub answers a
 * hook's secret as `********`. The world's token, which may write, sees the records as kept.
 *
 * A twin names them in its definition (`secrets`): a record type whose whole value is secret
 * (`webhook_secret: true`), or dotted paths of fields in its values (`hook: ['config.secret']`).
 * The signing secret of a webhook delivery an entry asks for is hidden whatever the twin says.
 */
import type { Entry } from '../world/types.js';

/** Record type → the whole value (`true`) or the dotted paths of its secret fields. */
export type SecretFields = Readonly<Record<string, true | readonly string[]>>;

/** What a hidden value reads as. */
export const REDACTED = '[redacted]';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A copy of `value` with the field at `path` hidden, or `value` itself when there is none. */
function hidePath(value: unknown, path: readonly string[], at: number): unknown {
  if (!isObject(value)) return value;
  const key = path[at] as string;
  if (!Object.prototype.hasOwnProperty.call(value, key)) return value;
  const inner = value[key];
  const next = at === path.length - 1 ? (inner === null || inner === undefined ? inner : REDACTED) : hidePath(inner, path, at + 1);
  if (next === inner) return value;
  const copy: Record<string, unknown> = { ...value };
  Object.defineProperty(copy, key, { value: next, enumerable: true, writable: true, configurable: true });
  return copy;
}

/** `redact(type, value)` for a twin's secrets, or undefined when it names none. */
export function redactorOf(secrets: SecretFields | undefined): ((type: string, value: unknown) => unknown) | undefined {
  if (secrets === undefined || !isObject(secrets) || Object.keys(secrets).length === 0) return undefined;
  const paths = new Map<string, true | string[][]>();
  for (const [type, spec] of Object.entries(secrets)) {
    if (spec === true) paths.set(type, true);
    else if (Array.isArray(spec)) paths.set(type, spec.filter((p): p is string => typeof p === 'string' && p !== '').map((p) => p.split('.')));
  }
  return (type, value) => {
    const spec = paths.get(type);
    if (spec === undefined || value === null || value === undefined) return value;
    if (spec === true) return REDACTED;
    let out: unknown = value;
    for (const path of spec) out = hidePath(out, path, 0);
    return out;
  };
}

/** The event an entry emits to have a webhook sent (runner/deliveries.ts); its `sign.secret` signs it. */
const DELIVERY_EVENT = 'webhook.delivery';

/**
 * An entry as a caller that may only read sees it: its writes' secrets hidden (`redact`, when
 * the twin names any), and the signing secret of every webhook delivery it asks for. A copy
 * only when something was hidden.
 */
export function redactEntry(entry: Entry, redact: ((type: string, value: unknown) => unknown) | undefined): Entry {
  let writes: Entry['writes'] | undefined;
  if (redact !== undefined) {
    entry.writes.forEach((w, i) => {
      const value = redact(w.type, w.value);
      if (value === w.value) return;
      writes ??= entry.writes.slice();
      writes[i] = { ...w, value };
    });
  }
  let events: Entry['events'] | undefined;
  entry.events?.forEach((e, i) => {
    if (e.type !== DELIVERY_EVENT) return;
    const data = hidePath(e.data, ['sign', 'secret'], 0);
    if (data === e.data) return;
    events ??= (entry.events as NonNullable<Entry['events']>).slice();
    events[i] = { ...e, data };
  });
  if (writes === undefined && events === undefined) return entry;
  const out: Entry = { ...entry };
  if (writes !== undefined) out.writes = writes;
  if (events !== undefined) out.events = events;
  return out;
}
