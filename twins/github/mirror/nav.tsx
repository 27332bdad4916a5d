/**
 * Moving between the mirror's views: the address bar holds the vendor path
 * (`{worldUrl}/github/repos/o/r/issues/7`), `go` pushes one, and `GhLink` is an `<a>` with the
 * real address (a new tab opens it through the host) whose plain clicks stay in the page.
 */
import type { ComponentChildren } from 'preact';
import { createContext } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import { pathOf, type View } from './routes.js';

const CHANGED = 'kit:navigate';

/** The mirror's base path on this origin (`{worldUrl}/github`), for links. */
export const BaseContext = createContext('');

export function useBase(): string {
  return useContext(BaseContext);
}

/** Goes to a vendor path under `base` without a reload. */
export function go(base: string, vendorPath: string, options: { replace?: boolean } = {}): void {
  const to = `${base}${vendorPath}`;
  if (options.replace === true) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  window.dispatchEvent(new Event(CHANGED));
  if (options.replace !== true) window.scrollTo(0, 0);
}

/** The address (path and query); re-renders when it changes. */
export function useAddress(): { pathname: string; search: string } {
  const read = () => ({ pathname: location.pathname, search: location.search });
  const [where, setWhere] = useState(read);
  useEffect(() => {
    const update = () => setWhere(read());
    window.addEventListener('popstate', update);
    window.addEventListener(CHANGED, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(CHANGED, update);
    };
  }, []);
  return where;
}

/**
 * A link to a view (or a vendor path) of this mirror: a plain `<a data-nav>` with the real
 * address. `useLinkClicks` turns its plain clicks into `go` with one listener for the page, so
 * a folder of 1,000 entries draws 1,000 anchors and no handlers.
 */
export function GhLink({ to, children, class: className, title }: { to: View | string; children: ComponentChildren; class?: string; title?: string }) {
  const base = useBase();
  const path = typeof to === 'string' ? to : pathOf(to);
  return (
    <a class={className} title={title} href={`${base}${path}`} data-nav="">
      {children}
    </a>
  );
}

/** One click listener on the document for every `GhLink`: a plain left click stays in the page; modified clicks open tabs as usual. */
export function useLinkClicks(base: string): void {
  useEffect(() => {
    const onClick = (e: MouseEvent) => {
      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey || e.defaultPrevented) return;
      const a = e.target instanceof Element ? e.target.closest('a[data-nav]') : null;
      if (!(a instanceof HTMLAnchorElement) || a.origin !== location.origin || !a.pathname.startsWith(`${base}/`)) return;
      e.preventDefault();
      go(base, `${a.pathname.slice(base.length)}${a.search}`);
    };
    document.addEventListener('click', onClick);
    return () => document.removeEventListener('click', onClick);
  }, [base]);
}
