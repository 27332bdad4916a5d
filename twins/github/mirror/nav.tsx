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

/** A link to a view (or a vendor path) of this mirror. */
export function GhLink({ to, children, class: className, title }: { to: View | string; children: ComponentChildren; class?: string; title?: string }) {
  const base = useBase();
  const path = typeof to === 'string' ? to : pathOf(to);
  return (
    <a
      class={className}
      title={title}
      href={`${base}${path}`}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey || e.defaultPrevented) return;
        e.preventDefault();
        go(base, path);
      }}
    >
      {children}
    </a>
  );
}
