/**
 * The hello twin's mirror: the page a person opens to see what the twin holds, shaped like the
 * vendor's own dashboard. It is the reference every twin's mirror copies (twins/hello/README.md,
 * "Its mirror"). `pages/build.mjs` bundles this entry, with what it imports, into
 * dist/pages/mirrors/hello/app.js (and app.css); the host serves it in an HTML shell of its own.
 *
 * The shape:
 * 1. The host puts the page's config in the shell (pages/ui/config.ts): the world's paths on this
 *    origin, among them `worldUrl` (`/acme/shop`), under which the twin's vendor API lives.
 * 2. The mirror's addresses ARE the vendor API's paths: the list is `{worldUrl}/hello/v1/greetings`,
 *    a greeting `{worldUrl}/hello/v1/greetings/grt_…`. The host answers a browser that opens one
 *    of them with this page (the twin itself answers JSON), so a link can be copied, reloaded,
 *    opened in a new tab. Moving between views is `history.pushState` (`navigate`, `Link`).
 * 3. The host serves the page itself at `{worldUrl}/hello/mirror/`: from there the mirror moves
 *    to its first view with `history.replaceState` (so Back does not return to `/mirror/`).
 * 4. It reads the twin with the browser's session (`World.vendor`, `World.store`: same-origin
 *    fetches carrying the session cookie) and writes nothing.
 */
import '../../../pages/ui/base.css';
import './app.css';
import { useEffect } from 'preact/hooks';
import { navigate, SideNav, startPage, TopBar, useLocation, type PageContext } from '../../../pages/ui/index.js';
import { GreetingPage, GreetingsList } from './greetings.js';

/** The list's vendor path, after `{worldUrl}/hello`: the mirror's first view. */
const LIST = '/v1/greetings';

/** What an address after `{worldUrl}/hello` shows. */
type View = { kind: 'home' } | { kind: 'list' } | { kind: 'greeting'; id: string } | { kind: 'unknown'; path: string };

function viewOf(path: string): View {
  // `/mirror/` is where the host serves the page; the bare twin path has no page of its own.
  if (path === '' || path === '/' || path.startsWith('/mirror')) return { kind: 'home' };
  if (path === LIST || path === `${LIST}/`) return { kind: 'list' };
  // `/v1/greetings/<id>`, and any path below it, shows that greeting; `search` is the twin's
  // search route (a literal wins over `:id` there too), which this mirror has no page for.
  const m = /^\/v1\/greetings\/([^/]+)/.exec(path);
  if (m === null || m[1] === 'search') return { kind: 'unknown', path };
  try {
    return { kind: 'greeting', id: decodeURIComponent(m[1]!) };
  } catch {
    return { kind: 'unknown', path }; // a malformed %-escape: an address nobody made
  }
}

function HelloMirror({ config, world, session, signOut }: PageContext) {
  /** Every vendor path of the twin starts here: `/acme/shop/hello`. */
  const twinPath = `${config.worldUrl}/hello`;
  const href = (vendorPath: string) => `${twinPath}${vendorPath}`;
  // Renders again on every navigation (a link, Back, Forward).
  const { path } = useLocation();
  const view = viewOf(path.startsWith(twinPath) ? path.slice(twinPath.length) : path);
  // From `/mirror/` to the list, replacing the address: Back then leaves the mirror.
  useEffect(() => {
    if (view.kind === 'home') navigate(href(LIST), { replace: true });
  }, [view.kind]);

  return (
    <>
      <TopBar title="hello" world={`${config.org}/${config.world}`} session={session} onSignOut={signOut}>
        {config.origin !== null && <a href="/">World page</a>}
      </TopBar>
      <div class="layout">
        <aside class="layout-nav">
          <SideNav groups={[{ items: [{ id: 'greetings', label: 'Greetings', href: href(LIST) }] }]} current="greetings" onSelect={() => navigate(href(LIST))} />
        </aside>
        <main class="layout-main">
          {view.kind === 'list' && <GreetingsList world={world} href={href} />}
          {view.kind === 'greeting' && <GreetingPage world={world} id={view.id} href={href} />}
          {view.kind === 'unknown' && (
            <p>
              The hello mirror has no page for <code>{view.path}</code>. <a href={href(LIST)}>See the greetings</a>.
            </p>
          )}
        </main>
      </div>
    </>
  );
}

startPage((page) => <HelloMirror {...page} />);
