/**
 * Opening a page: getting the browser a session for this world, the only credential a page
 * uses (an HttpOnly cookie the page never sees). In order (docs/browser.md):
 *
 * 1. at an origin that is not the world's own, move there (the session lives only there);
 * 2. a session already open: go (`GET {world_api}/session` answers 200);
 * 3. a pass in the address (`#pass=<jwt>`, from a platform): take it out of the address first
 *    (it must not stay in history or be copied with the link), then `POST …/session` with
 *    `x-kit-pass`;
 * 4. a world on this machine's loopback: `POST …/session` with nothing (Authentication 7);
 * 5. otherwise the person pastes the world's token or a read key (`SignIn`), sent once in
 *    `x-kit-token` and never kept by the page.
 */
import { ApiError, call } from './api.js';
import type { PageConfig } from './config.js';

/** What `GET`/`POST {world_api}/session` answer. */
export interface SessionInfo {
  /** `org/world`. */
  world: string;
  scope: 'read' | 'write';
  origin?: string | null;
  /** A loopback write session opened without a token. */
  local?: boolean;
  /** The person a pass was signed for (the platform's id of them), their name when it gave one, and the platform that signed it. */
  who?: string;
  name?: string;
  issuer?: string;
  expiresAt?: string;
}

/** Where opening ended: a session, a move to the world's origin (the page is going away), or a sign-in to ask for. */
export type Opening =
  | { kind: 'open'; session: SessionInfo }
  | { kind: 'moving'; to: string }
  /** `error`: why the automatic ways failed (a refused pass, a refused loopback session), to show above the form. */
  | { kind: 'sign-in'; error: unknown };

/** What opening touches of the browser, so a test can give its own. */
export interface Browser {
  location: Pick<Location, 'origin' | 'pathname' | 'search' | 'hash' | 'replace'>;
  history: Pick<History, 'replaceState'>;
}

function sessionUrl(config: PageConfig): string {
  return `${config.worldApi}/session`;
}

/** The pass in a fragment such as `#pass=<jwt>` or `#pass=<jwt>&tab=keys`, and the fragment left without it. */
export function passOf(hash: string): { pass: string; rest: string } | null {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const pass = params.get('pass');
  if (pass === null || pass === '') return null;
  params.delete('pass');
  const rest = params.toString();
  return { pass, rest: rest === '' ? '' : `#${rest}` };
}

/** The world's origin a refusal names (409 `wrong_origin` answers `{ origin }`), if it names one. */
function originOf(e: unknown): string | null {
  if (!(e instanceof ApiError) || e.status !== 409) return null;
  const origin = e.details['origin'];
  return typeof origin === 'string' && /^https?:\/\//.test(origin) ? origin : null;
}

/** Runs steps 1–4; a page shows its content on `open`, nothing on `moving`, the sign-in form on `sign-in`. */
export async function openSession(config: PageConfig, browser: Browser = { location, history }): Promise<Opening> {
  const { location: loc, history: hist } = browser;
  const move = (origin: string): Opening => {
    const to = `${origin}${loc.pathname}${loc.search}${loc.hash}`;
    loc.replace(to);
    return { kind: 'moving', to };
  };
  if (config.origin !== null && loc.origin !== config.origin) return move(config.origin);

  try {
    return { kind: 'open', session: await call<SessionInfo>(sessionUrl(config)) };
  } catch (e) {
    // 401: no session yet. Anything else (the host unreachable) is said above the form.
    if (!(e instanceof ApiError) || e.status !== 401) return { kind: 'sign-in', error: e };
  }

  const pass = passOf(loc.hash);
  if (pass !== null) {
    // Out of the address before it is used: a pass is spent once and must not linger in history.
    hist.replaceState(null, '', `${loc.pathname}${loc.search}${pass.rest}`);
    try {
      return { kind: 'open', session: await call<SessionInfo>(sessionUrl(config), { method: 'POST', headers: { 'x-kit-pass': pass.pass } }) };
    } catch (e) {
      const origin = originOf(e);
      if (origin !== null && origin !== loc.origin) return move(origin);
      return { kind: 'sign-in', error: e };
    }
  }

  if (config.loopback) {
    try {
      return { kind: 'open', session: await call<SessionInfo>(sessionUrl(config), { method: 'POST' }) };
    } catch (e) {
      return { kind: 'sign-in', error: e };
    }
  }
  return { kind: 'sign-in', error: null };
}

/**
 * Step 5: a session from the world's token, its read token, or a read-only key. Asked for
 * `scope` (write unless said); a credential that may only read is refused write (403), so it
 * is asked again for read and the answer says which it got.
 */
export async function signInWithToken(config: PageConfig, token: string, scope: 'read' | 'write' = 'write'): Promise<SessionInfo> {
  const ask = (s: 'read' | 'write') =>
    call<SessionInfo>(sessionUrl(config), {
      method: 'POST',
      headers: { 'x-kit-token': token },
      body: { world: `${config.org}/${config.world}`, scope: s, ...(config.origin === null ? {} : { origin: config.origin }) },
    });
  try {
    return await ask(scope);
  } catch (e) {
    if (scope === 'write' && e instanceof ApiError && e.status === 403) return ask('read');
    throw e;
  }
}

/** Ends this browser's session for the world (`DELETE …/session`). */
export async function signOut(config: PageConfig): Promise<void> {
  await call<void>(sessionUrl(config), { method: 'DELETE' });
}
