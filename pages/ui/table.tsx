/**
 * A list of records as a table, columns described once. Rows may lead somewhere: with
 * `rowHref` the first cell is a link and a click anywhere on the row follows it (through
 * `onOpen` when given, e.g. the mirror's router, else as a link).
 */
import type { ComponentChildren } from 'preact';
import { Empty } from './states.js';

export interface Column<T> {
  /** The header's text. */
  title: string;
  /** The cell of one row. */
  cell: (row: T) => ComponentChildren;
  /** Numbers and amounts are right-aligned. */
  align?: 'left' | 'right';
  /** Ids, keys, paths: in the code font. */
  mono?: boolean;
  /** Keep the cell on one line (instants, amounts). */
  nowrap?: boolean;
  /** A CSS width for the column (`8rem`, `30%`). */
  width?: string;
}

export interface DataTableProps<T> {
  columns: Column<T>[];
  rows: T[];
  /** A stable key per row (its id). */
  rowKey: (row: T) => string;
  /** Names the table for screen readers and tests (`getByRole('table', { name })`). */
  label: string;
  /** Where a row leads; its first cell becomes a link. */
  rowHref?: (row: T) => string;
  /** Called instead of following `rowHref` on a plain click (client-side navigation). */
  onOpen?: (row: T, href: string) => void;
  /** The row shown as selected. */
  selected?: string | null;
  /** What is shown when `rows` is empty. */
  empty?: ComponentChildren;
}

function modified(e: MouseEvent): boolean {
  return e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey;
}

function cellClass(column: { align?: 'left' | 'right'; mono?: boolean; nowrap?: boolean }): string | undefined {
  const names = [column.align === 'right' ? 'num' : '', column.mono === true ? 'mono' : '', column.nowrap === true ? 'nowrap' : ''].filter((c) => c !== '');
  return names.length === 0 ? undefined : names.join(' ');
}

/** `<DataTable label="Customers" columns={[{ title: 'Email', cell: (c) => c.email }]} rows={customers} rowKey={(c) => c.id} />`. */
export function DataTable<T>({ columns, rows, rowKey, label, rowHref, onOpen, selected, empty }: DataTableProps<T>) {
  if (rows.length === 0) return typeof empty === 'string' || empty === undefined ? <Empty title={typeof empty === 'string' ? empty : 'Nothing here yet.'} /> : <>{empty}</>;
  return (
    <div class="scroll">
      <table class="data" aria-label={label}>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.title} class={cellClass({ align: c.align })} style={c.width === undefined ? undefined : { width: c.width }}>
                {c.title}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => {
            const key = rowKey(row);
            const href = rowHref?.(row);
            const open = (e: MouseEvent) => {
              if (href === undefined || modified(e)) return;
              // A click on a control inside the row (other than the row's own link) is that control's.
              const control = (e.target as Element).closest('a, button, input, select, textarea, summary, label');
              if (control !== null && !control.hasAttribute('data-row-link')) return;
              e.preventDefault();
              if (onOpen !== undefined) onOpen(row, href);
              else location.assign(href);
            };
            const classes = [href === undefined ? '' : 'clickable', key === selected ? 'selected' : ''].filter((c) => c !== '').join(' ');
            return (
              <tr key={key} class={classes === '' ? undefined : classes} data-key={key} onClick={href === undefined ? undefined : open}>
                {columns.map((c, i) => (
                  <td key={c.title} class={cellClass(c)}>
                    {i === 0 && href !== undefined ? (
                      <a href={href} data-row-link="">
                        {c.cell(row)}
                      </a>
                    ) : (
                      c.cell(row)
                    )}
                  </td>
                ))}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
