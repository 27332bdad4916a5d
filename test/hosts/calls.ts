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
