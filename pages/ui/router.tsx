/**
 * Moving between a page's views without reloading it: the address bar is the state (a mirror's
 * addresses are its vendor's API paths, so a link can be copied and opened later). `navigate`
 * pushes an address; `useLocation` re-renders a component when the address changes (a link,
 * the back button).
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

const CHANGED = 'kit:navigate';

/** The address as a page reads it: path and query. */
export interface Where {
  path: string;
  query: URLSearchParams;
}

function here(): Where {
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

/** Goes to `to` (a path on this origin, with its query) without a reload; `replace` keeps the back button where it was. */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (options.replace === true) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  window.dispatchEvent(new Event(CHANGED));
  if (options.replace !== true) window.scrollTo(0, 0);
}

/** The current address; the component renders again when it changes. */
export function useLocation(): Where {
  const [where, setWhere] = useState(here);
  useEffect(() => {
    const update = () => setWhere(here());
    window.addEventListener('popstate', update);
    window.addEventListener(CHANGED, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(CHANGED, update);
    };
  }, []);
  return where;
}

/** An `<a>` whose plain clicks `navigate` (modified clicks open a tab as usual). */
export function Link({ href, children, class: className, title }: { href: string; children: ComponentChildren; class?: string; title?: string }) {
  return (
    <a
      class={className}
      title={title}
      href={href}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey || e.defaultPrevented) return;
        e.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}
