/**
 * Moving between the mirror's views: the address bar holds the vendor path
 * (`{worldUrl}/github/repos/o/r/issues/7`), `go` pushes one (pages/ui's router, whose
 * `useLocation` the mirror renders from), and `GhLink` is an `<a>` with the real address (a new
 * tab opens it through the host) whose plain clicks stay in the page.
 */
import type { ComponentChildren } from 'preact';
import { createContext } from 'preact';
import { useContext, useEffect } from 'preact/hooks';
import { navigate } from '../../../pages/ui/index.js';
import { pathOf, type View } from './routes.js';

/** The mirror's base path on this origin (`{worldUrl}/github`), for links. */
export const BaseContext = createContext('');

export function useBase(): string {
  return useContext(BaseContext);
}

/** Goes to a vendor path under `base` without a reload (pages/ui's `navigate`). */
export function go(base: string, vendorPath: string, options: { replace?: boolean } = {}): void {
  navigate(`${base}${vendorPath}`, options);
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
