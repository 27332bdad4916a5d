/**
 * The SMTP twin's mirror: its mailbox as Mailpit shows one. Built by pages/build.mjs into
 * dist/pages/mirrors/smtp/; shaped as the hello mirror is (twins/hello/README.md, "Its
 * mirror"): its addresses are the mailbox API's paths after `{world_url}/smtp` (routes.ts), it
 * reads with the browser's session and writes nothing.
 */
import '../../../pages/ui/base.css';
import './app.css';
import { useEffect, useState } from 'preact/hooks';
import { navigate, SideNav, startPage, TopBar, useLocation, type PageContext } from '../../../pages/ui/index.js';
import { Inbox } from './inbox.js';
import { MessageView } from './message.js';
import { inboxPath, viewOf } from './routes.js';

function SmtpMirror({ config, world, session, signOut }: PageContext) {
  const twinPath = `${config.worldUrl}/smtp`;
  const href = (vendorPath: string) => `${twinPath}${vendorPath}`;
  const { path, query } = useLocation();
  // The fragment names a message's tab; `navigate` re-renders this on every change of address.
  const view = viewOf(path.startsWith(twinPath) ? path.slice(twinPath.length) : path, query.toString(), location.hash);
  const [total, setTotal] = useState<number | undefined>(undefined);
  // Opened at a message, the side navigation still says how many the inbox holds (the inbox tells it afterwards).
  useEffect(() => {
    world.store<{ count: number }>('smtp', 'messages', 'limit=1').then(
      (page) => setTotal((shown) => shown ?? page.count),
      () => undefined,
    );
  }, [world]);
  // From `/mirror/` (where the host serves the page) to the inbox, replacing the address.
  useEffect(() => {
    if (view.kind === 'home') navigate(href(inboxPath({})), { replace: true });
  }, [view.kind]);

  return (
    <>
      <TopBar
        title="Mailbox"
        world={`${config.org}/${config.world}`}
        session={session}
        onSignOut={signOut}
        brand={
          <span class="top-name mail-brand">
            <span aria-hidden="true">✉</span> Mailbox
          </span>
        }
      >
        {config.origin !== null && <a href="/">World page</a>}
      </TopBar>
      <div class="layout">
        <aside class="layout-nav">
          <SideNav
            label="Mailbox"
            groups={[{ items: [{ id: 'inbox', label: 'Inbox', href: href(inboxPath({})), count: total }] }]}
            current={view.kind === 'inbox' && Object.keys(view.filters).length === 0 ? 'inbox' : ''}
            onSelect={() => navigate(href(inboxPath({})))}
          />
          <p class="hint mail-side">SMTP twin · read-only</p>
        </aside>
        <main class="layout-main">
          {view.kind === 'inbox' && <Inbox world={world} href={href} filters={view.filters} startingAfter={view.startingAfter} endingBefore={view.endingBefore} onCount={setTotal} />}
          {view.kind === 'message' && <MessageView world={world} href={href} id={view.id} tab={view.tab} attachment={view.attachment} />}
          {view.kind === 'unknown' && (
            <p>
              The mailbox has no page for <code>{view.path}</code>. <a href={href(inboxPath({}))}>Open the inbox</a>.
            </p>
          )}
        </main>
      </div>
    </>
  );
}

startPage((page) => <SmtpMirror {...page} />);
