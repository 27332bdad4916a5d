/** A record's fields as label and value, as a vendor's dashboard shows one object. */
import type { ComponentChildren } from 'preact';

/** One row: the label, the value (`—` when null, undefined or ''; `yes`/`no` for a boolean), and whether it is code (ids, keys). */
export type DetailItem = [label: string, value: ComponentChildren] | { label: string; value: ComponentChildren; mono?: boolean };

/**
 * `<DetailList items={[['ID', customer.id], ['Email', customer.email], { label: 'Key', value: k, mono: true }]} />`.
 * A label is `<dt>`, its value `<dd>`, so a test or a screen reader finds a value by its label.
 */
export function DetailList({ items, label }: { items: DetailItem[]; label?: string }) {
  return (
    <dl class="details" aria-label={label}>
      {items.map((item) => {
        const { label: name, value, mono } = Array.isArray(item) ? { label: item[0], value: item[1], mono: false } : item;
        const none = value === null || value === undefined || value === '';
        return (
          <div class="detail" key={name}>
            <dt>{name}</dt>
            <dd class={mono === true ? 'mono' : undefined}>{none ? <span class="muted">—</span> : typeof value === 'boolean' ? (value ? 'yes' : 'no') : value}</dd>
          </div>
        );
      })}
    </dl>
  );
}
