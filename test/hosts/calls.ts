/**
 * The calls the shared cases (world-endpoints.cases.ts) make of a world, over `send`
 * (fixture.ts), and the checks they make of its answers.
 */
import { expect } from 'vitest';
import type { Answered } from './endpoints.js';
import { errorCode, send, type Answer, type HostWorld } from './fixture.js';

export const at = (iso: string, plusMs: number): string => new Date(Date.parse(iso) + plusMs).toISOString();

export const bearer = (t: string): Record<string, string> => ({ authorization: `Bearer ${t}` });
export const kit = (t: string): Record<string, string> => ({ 'x-kit-token': t });

/** The world API of `w` with `token` (the world's token unless given). */
export function api(w: HostWorld, method: string, path: string, body?: string | object, token = w.token, headers: Record<string, string> = {}): Promise<Answer> {
  return send(method, `${w.api}${path}`, { headers: { ...kit(token), ...headers }, ...(body !== undefined ? { body } : {}) });
}

/** The vendor wire of `w` (`/hello/v1/…`) with the world's token as the app's API key. */
export function vendor(w: HostWorld, method: string, path: string, body?: string | object, headers: Record<string, string> = bearer(w.token)): Promise<Answer> {
  return send(method, `${w.url}${path}`, { headers, ...(body !== undefined ? { body } : {}) });
}

/** Requests each twin has answered, by the world's request report. */
export async function answeredByTwin(w: HostWorld): Promise<Record<string, number>> {
  const report = (await api(w, 'GET', '/requests')).json() as { twins: { twin: string; total: number }[] };
  return Object.fromEntries(report.twins.map((t) => [t.twin, t.total]));
}

export function expectAnswered(a: Answer, expected: Answered, what: string): void {
  expect([what, a.status, expected.code === undefined ? undefined : errorCode(a)]).toEqual([what, expected.status, expected.code]);
}

export function expectRefused(a: Answer, status: number, code: string, what = ''): void {
  expect([what, a.status, errorCode(a)]).toEqual([what, status, code]);
}

export async function createGreeting(w: HostWorld, name: string, headers?: Record<string, string>): Promise<string> {
  const a = await vendor(w, 'POST', '/hello/v1/greetings', { name }, headers);
  expect(a.status).toBe(200);
  return (a.json() as { id: string }).id;
}

export async function setClock(w: HostWorld, instant: string): Promise<void> {
  expect((await api(w, 'PUT', '/clock', { at: instant })).json()).toEqual({ at: instant, frozen: true });
}

export interface MadeBranch {
  name: string;
  token: string;
  readToken: string;
  expiresAt: string | null;
  url: string;
  api: string;
}

/** A branch made over HTTP, as a `HostWorld` its tokens open. */
export async function makeBranch(w: HostWorld, options: object = {}): Promise<HostWorld & { made: MadeBranch }> {
  const a = await api(w, 'POST', '/branches', options);
  expect([a.status, a.text.slice(0, 200)]).toEqual([201, expect.any(String)]);
  const made = a.json() as MadeBranch;
  const [org, world] = made.name.split('/') as [string, string];
  return { name: made.name, org, world, base: w.base, url: made.url, api: made.api, token: made.token, readToken: made.readToken, made };
}

/** `<world>--<org>.localhost:<port>`: the `Host` of the world's own origin on a host on this machine. */
export function originHost(w: HostWorld): string {
  return `${w.world}--${w.org}.localhost:${new URL(w.base).port}`;
}

/** The world's own origin, as its page's `Origin` says it. */
export function worldOrigin(w: HostWorld): string {
  return `http://${originHost(w)}`;
}

/**
 * A request to the world's own origin: sent to the host's address with the origin's `Host` (as a
 * browser resolving `*.localhost` to loopback sends it). `path` is from the root (`/-/acme/shop/clock`).
 */
export function atOrigin(w: HostWorld, method: string, path: string, options: { headers?: Record<string, string>; body?: string | object } = {}): Promise<Answer> {
  return send(method, `${w.base}${path}`, { ...options, headers: { host: originHost(w), ...options.headers } });
}

/** The `kit_session=<id>` pair of an answer's `Set-Cookie`, to send back as `Cookie`. */
export function sessionCookieOf(a: Answer): string {
  const set = a.headers['set-cookie'] ?? '';
  const m = /(?:^|,\s*)(kit_session=[^;]*)/.exec(set);
  if (m === null) throw new Error(`no kit_session cookie in ${JSON.stringify(set)} (${a.status} ${a.text.slice(0, 200)})`);
  return m[1]!;
}

/** Headers of a page's own request at the world's origin: its cookie, and the browser's same-origin marks. */
export function fromPage(w: HostWorld, cookie: string): Record<string, string> {
  return { cookie, origin: worldOrigin(w), 'sec-fetch-site': 'same-origin' };
}

/** A session opened with `token` (the world's token by default) at the world's origin; answers its cookie. */
export async function tokenSession(w: HostWorld, token = w.token, scope?: 'read' | 'write'): Promise<string> {
  const a = await atOrigin(w, 'POST', `/-/${w.name}/session`, { headers: kit(token), body: { world: w.name, ...(scope !== undefined ? { scope } : {}) } });
  expect([a.status, a.text.slice(0, 300)]).toEqual([200, expect.any(String)]);
  return sessionCookieOf(a);
}

/** The loopback write session the world's own page opens without a token (Authentication 7). */
export async function loopbackSession(w: HostWorld): Promise<string> {
  const a = await atOrigin(w, 'POST', `/-/${w.name}/session`, { headers: { origin: worldOrigin(w), 'sec-fetch-site': 'same-origin' } });
  expect([a.status, a.text.slice(0, 300)]).toEqual([200, expect.any(String)]);
  return sessionCookieOf(a);
}
