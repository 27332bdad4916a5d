/**
 * How a page opens its session (pages/ui/session.ts), step by step, with the browser's location,
 * history and fetch given by the test: what it asks the host, in which order, with which
 * headers, and what it leaves in the address bar. The Chromium tests (world-page.test.ts) drive
 * the loopback and sign-in paths against the real hosts; these cover the others too.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openSession, passOf, signInWithToken } from '../../pages/ui/session.js';
import type { Browser } from '../../pages/ui/session.js';
import type { PageConfig } from '../../pages/ui/config.js';

const ORIGIN = 'http://shop--acme.localhost:8787';

function config(over: Partial<PageConfig> = {}): PageConfig {
  return { page: 'world', org: 'acme', world: 'shop', worldUrl: '/acme/shop', worldApi: '/-/acme/shop', base: 'http://127.0.0.1:8787', origin: ORIGIN, loopback: false, vendor: null, assets: '/.kit/world', twins: [], branches: true, ...over };
}

interface Seen {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  /** The address bar when the request was sent. */
  address: string;
}

/** A browser at `href`, whose fetch answers from `answers` (one per call, in order). */
function browserAt(href: string, answers: { status: number; body?: unknown }[]) {
  const url = new URL(href);
  const state = { pathname: url.pathname, search: url.search, hash: url.hash, replacedTo: null as string | null };
  const seen: Seen[] = [];
  const browser: Browser = {
    location: {
      origin: url.origin,
      get pathname() {
        return state.pathname;
      },
      get search() {
        return state.search;
      },
      get hash() {
        return state.hash;
      },
      replace: (to: string) => {
        state.replacedTo = to;
      },
    },
    history: {
      replaceState: (_data: unknown, _unused: string, to?: string | URL | null) => {
        const next = new URL(String(to), url.origin);
        state.pathname = next.pathname;
        state.search = next.search;
        state.hash = next.hash;
      },
    },
  };
  vi.stubGlobal('fetch', async (input: string, init: RequestInit = {}) => {
    seen.push({ url: input, method: init.method ?? 'GET', headers: { ...(init.headers as Record<string, string>) }, body: init.body as string | undefined, address: `${state.pathname}${state.search}${state.hash}` });
    const answer = answers.shift();
    if (answer === undefined) throw new Error(`unexpected ${init.method ?? 'GET'} ${input}`);
    return new Response(answer.body === undefined ? '' : JSON.stringify(answer.body), { status: answer.status, headers: { 'content-type': 'application/json' } });
  });
  return { browser, seen, state };
}

const SESSION = { world: 'acme/shop', scope: 'write', origin: ORIGIN, expiresAt: '2026-06-01T00:00:00.000Z' };
const NO_SESSION = { status: 401, body: { error: { code: 'unauthenticated', message: 'no session' } } };

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('opening a page', () => {
  it('moves to the world origin, keeping the path, query and fragment, and asks nothing where it is', async () => {
    const { browser, seen, state } = browserAt('http://127.0.0.1:8787/acme/shop/stripe/v1/customers/cus_1?x=1#pass=abc', []);
    expect(await openSession(config(), browser)).toEqual({ kind: 'moving', to: `${ORIGIN}/acme/shop/stripe/v1/customers/cus_1?x=1#pass=abc` });
    expect(state.replacedTo).toBe(`${ORIGIN}/acme/shop/stripe/v1/customers/cus_1?x=1#pass=abc`);
    expect(seen).toEqual([]);
  });

  it('goes on with a session already open, without spending a pass in the address', async () => {
    const { browser, seen, state } = browserAt(`${ORIGIN}/#pass=eyJ.pass`, [{ status: 200, body: SESSION }]);
    expect(await openSession(config(), browser)).toEqual({ kind: 'open', session: SESSION });
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual(['GET /-/acme/shop/session']);
    expect(state.hash).toBe('#pass=eyJ.pass');
  });

  it('takes a pass out of the address before sending it in x-kit-pass, keeping the rest of the fragment', async () => {
    const { browser, seen, state } = browserAt(`${ORIGIN}/?a=1#pass=eyJ.pass.sig&tab=keys`, [NO_SESSION, { status: 200, body: { ...SESSION, who: 'Ada', issuer: 'https://platform.example' } }]);
    const opened = await openSession(config({ loopback: true }), browser);
    expect(opened).toMatchObject({ kind: 'open', session: { who: 'Ada' } });
    expect(seen[1]).toMatchObject({ method: 'POST', url: '/-/acme/shop/session', address: '/?a=1#tab=keys' });
    expect(seen[1]!.headers['x-kit-pass']).toBe('eyJ.pass.sig');
    expect(seen[1]!.headers['x-kit-token']).toBeUndefined();
    expect(`${state.pathname}${state.search}${state.hash}`).toBe('/?a=1#tab=keys');
  });

  it('asks for the sign-in with the reason when a pass is refused, and does not fall back to the loopback session', async () => {
    const refused = { status: 401, body: { error: { code: 'pass_expired', message: 'the pass expired' } } };
    const { browser, seen } = browserAt(`${ORIGIN}/#pass=old`, [NO_SESSION, refused]);
    const opened = await openSession(config({ loopback: true }), browser);
    expect(opened.kind).toBe('sign-in');
    expect(opened.kind === 'sign-in' && (opened.error as { code: string }).code).toBe('pass_expired');
    expect(seen).toHaveLength(2);
  });

  it('opens the loopback session with nothing presented on this machine', async () => {
    const { browser, seen } = browserAt(`${ORIGIN}/`, [NO_SESSION, { status: 200, body: { ...SESSION, local: true } }]);
    expect(await openSession(config({ loopback: true }), browser)).toMatchObject({ kind: 'open', session: { local: true } });
    expect(seen[1]).toMatchObject({ method: 'POST', url: '/-/acme/shop/session', body: undefined });
    expect(Object.keys(seen[1]!.headers).filter((h) => h.startsWith('x-kit'))).toEqual([]);
  });

  it('asks for the sign-in, without a call, where the host opens no session by itself', async () => {
    const { browser, seen } = browserAt(`${ORIGIN}/`, [NO_SESSION]);
    expect(await openSession(config(), browser)).toEqual({ kind: 'sign-in', error: null });
    expect(seen).toHaveLength(1);
  });

  it('reads a pass only from its own parameter', () => {
    expect(passOf('#pass=a.b.c')).toEqual({ pass: 'a.b.c', rest: '' });
    expect(passOf('#keys')).toBeNull();
    expect(passOf('#passport=x')).toBeNull();
    expect(passOf('')).toBeNull();
  });
});

describe('signing in with a token', () => {
  it('asks for write, and for read when the credential only reads', async () => {
    const { seen } = browserAt(`${ORIGIN}/`, [{ status: 403, body: { error: { code: 'forbidden', message: 'a read credential opens only a read session' } } }, { status: 200, body: { ...SESSION, scope: 'read' } }]);
    expect(await signInWithToken(config(), 'tok_k_reader')).toMatchObject({ scope: 'read' });
    expect(seen.map((s) => JSON.parse(s.body!))).toEqual([
      { world: 'acme/shop', scope: 'write', origin: ORIGIN },
      { world: 'acme/shop', scope: 'read', origin: ORIGIN },
    ]);
    expect(seen.every((s) => s.headers['x-kit-token'] === 'tok_k_reader')).toBe(true);
  });

  it('says why a token is refused', async () => {
    browserAt(`${ORIGIN}/`, [{ status: 401, body: { error: { code: 'unauthenticated', message: 'the token in x-kit-token does not open acme/shop' } } }]);
    await expect(signInWithToken(config(), 'tok_wrong')).rejects.toMatchObject({ status: 401, code: 'unauthenticated' });
  });
});
