/** What a page shows while it waits, and when there is nothing to show. */
import type { ComponentChildren } from 'preact';

/** A loading line, announced to screen readers: `<Loading what="customers" />` → "Loading customers…". */
export function Loading({ what }: { what?: string }) {
  return (
    <p class="loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      Loading{what === undefined ? '' : ` ${what}`}…
    </p>
  );
}

/**
 * Nothing to show, said plainly, with what a person can do about it:
 * `<Empty title="No customers yet" hint="Customers your app makes appear here." />`.
 */
export function Empty({ title, hint, children }: { title: string; hint?: ComponentChildren; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <p class="empty-title">{title}</p>
      {hint !== undefined && <p class="empty-hint">{hint}</p>}
      {children}
    </div>
  );
}
