/**
 * Starting a page: read the host's config, open the session (session.ts), ask for a token when
 * it must, then render the page's own component with what it needs. A mirror's `main.tsx`:
 *
 *     import { startPage } from '../../../pages/ui/index.js';
 *     import { Mirror } from './mirror.js';
 *     startPage((page) => <Mirror {...page} />);
 */
import { render } from 'preact';
import type { VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { World } from './api.js';
import { readPageConfig, type PageConfig } from './config.js';
import { TopBar } from './layout.js';
import { openSession, signOut, type Opening, type SessionInfo } from './session.js';
import { SignIn } from './signin.js';
import { Loading } from './states.js';
import { ErrorNote } from './ui.js';

/** What a page's component is given once a session is open. */
export interface PageContext {
  config: PageConfig;
  /** The world's endpoints and its twins' vendor APIs, with the session. */
  world: World;
  session: SessionInfo;
  /** Ends the session; the page shows the sign-in form after. */
  signOut: () => void;
}

/** The top bar's name before a session opens: the mirror's vendor, or the product on the world page. */
function title(config: PageConfig): string {
  return config.page === 'mirror' && config.vendor !== null ? config.vendor : 'twinkit';
}

function PageRoot({ config, app }: { config: PageConfig; app: (page: PageContext) => VNode }) {
  const [opening, setOpening] = useState<Opening | null>(null);
  const [world] = useState(() => new World(config));
  const [signOutError, setSignOutError] = useState<unknown>(null);

  useEffect(() => {
    openSession(config).then(setOpening, (e: unknown) => setOpening({ kind: 'sign-in', error: e }));
  }, [config]);

  const name = `${config.org}/${config.world}`;
  if (opening === null) return <Loading what={name} />;
  if (opening.kind === 'moving') return <Loading what={`${name} at its own address`} />;
  if (opening.kind === 'sign-in') {
    return (
      <>
        <TopBar title={title(config)} world={name} />
        <main class="narrow">
          <ErrorNote error={signOutError} what="Signing out failed" />
          <SignIn config={config} error={opening.error} onSession={(session) => setOpening({ kind: 'open', session })} />
        </main>
      </>
    );
  }
  return app({
    config,
    world,
    session: opening.session,
    signOut: () => {
      setSignOutError(null);
      signOut(config).then(
        () => setOpening({ kind: 'sign-in', error: null }),
        (e: unknown) => {
          setSignOutError(e);
          setOpening({ kind: 'sign-in', error: null });
        },
      );
    },
  });
}

/** Renders the page into `#app`: `app` once a session is open, the sign-in form before. */
export function startPage(app: (page: PageContext) => VNode, root: HTMLElement | null = document.getElementById('app')): void {
  if (root === null) throw new Error('this page has no #app element');
  let config: PageConfig;
  try {
    config = readPageConfig();
  } catch (e) {
    render(
      <main class="narrow">
        <ErrorNote error={e} what="This page cannot start" />
      </main>,
      root,
    );
    return;
  }
  render(<PageRoot config={config} app={app} />, root);
}
