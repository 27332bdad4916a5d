/**
 * The GitHub mirror's entry (bundled by pages/build.mjs into dist/pages/mirrors/github/).
 * Reads the host's page config, opens the browser's session for the world, renders the mirror.
 */
import './app.css';
import { render } from 'preact';
import { call, ApiError } from '../../../pages/ui/api.js';
import { readPageConfig, type PageConfig } from '../../../pages/ui/config.js';
import { ErrorNote } from '../../../pages/ui/ui.js';
import { Mirror } from './app.js';

interface Session {
  scope: 'read' | 'write';
}

/** The session: one already open, or the loopback one the host opens for a world on this machine. */
async function openSession(config: PageConfig): Promise<Session> {
  if (config.origin !== null && location.origin !== config.origin) {
    location.replace(`${config.origin}${location.pathname}${location.search}${location.hash}`);
    return new Promise(() => undefined);
  }
  try {
    return await call<Session>(`${config.worldApi}/session`);
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 401 || !config.loopback) throw e;
  }
  return call<Session>(`${config.worldApi}/session`, { method: 'POST' });
}

const root = document.getElementById('app');
if (root !== null) {
  try {
    const config = readPageConfig();
    openSession(config).then(
      (session) => render(<Mirror config={config} readOnly={session.scope === 'read'} />, root),
      (e: unknown) => render(<ErrorNote error={e} what="No session for this world" />, root),
    );
  } catch (e) {
    render(<ErrorNote error={e} what="This page cannot start" />, root);
  }
}
