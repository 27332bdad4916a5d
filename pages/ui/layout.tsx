/**
 * The frame of a page: a top bar (what this is, which world, who is signed in), a side
 * navigation beside the content, and cards that group a part of the content.
 */
import type { ComponentChildren } from 'preact';
import { Badge } from './badge.js';
import type { SessionInfo } from './session.js';

/** How a session reads in the top bar: `write · this machine`, `read · ada@example.com`. */
export function sessionLabel(session: SessionInfo): string {
  const who = session.local === true ? 'this machine' : session.name ?? session.who ?? null;
  return who === null ? session.scope : `${session.scope} · ${who}`;
}

/**
 * `<TopBar title="Stripe" world="acme/shop" session={session} onSignOut={…} />`; `brand` replaces
 * the title with a mark of its own (a mirror's vendor look), `children` go on the right.
 */
export function TopBar({
  title,
  world,
  session,
  onSignOut,
  brand,
  children,
}: {
  title: string;
  world?: string;
  session?: SessionInfo | null;
  onSignOut?: () => void;
  brand?: ComponentChildren;
  children?: ComponentChildren;
}) {
  return (
    <header class="top">
      <div class="top-title">
        {brand ?? <span class="top-name">{title}</span>}
        {world !== undefined && <span class="mono top-world">{world}</span>}
      </div>
      <div class="top-right">
        {children}
        {session !== undefined && session !== null && (
          <span class="top-session" title={session.expiresAt === undefined ? undefined : `session ends ${session.expiresAt}`}>
            <Badge tone={session.scope === 'write' ? 'blue' : 'gray'}>{sessionLabel(session)}</Badge>
          </span>
        )}
        {onSignOut !== undefined && (
          <button type="button" class="top-button" onClick={onSignOut}>
            Sign out
          </button>
        )}
      </div>
    </header>
  );
}

/** A side navigation and the content beside it; the navigation stacks above the content on a narrow screen. */
export function Layout({ nav, children }: { nav: ComponentChildren; children: ComponentChildren }) {
  return (
    <div class="layout">
      <aside class="layout-nav">{nav}</aside>
      <main class="layout-main">{children}</main>
    </div>
  );
}

/** A titled card: `<Card title="Clock" actions={<button…/>}>…</Card>`; its heading names the region. */
export function Card({ title, actions, children, id }: { title: ComponentChildren; actions?: ComponentChildren; children: ComponentChildren; id?: string }) {
  // The heading names the region (`getByRole('region', { name: 'Clock' })`).
  const base = id ?? (typeof title === 'string' ? `card-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}` : undefined);
  const headingId = base === undefined ? undefined : `${base}-heading`;
  return (
    <section class="card" id={id} aria-labelledby={headingId}>
      <header class="card-head">
        <h2 id={headingId}>{title}</h2>
        {actions !== undefined && <div class="actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}
