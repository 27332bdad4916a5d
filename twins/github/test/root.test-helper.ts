/**
 * Two GitHub twins in one process for the root's tests: one plays api.github.com (the "real"
 * repository, seeded through its API), the other keeps a copy of it (`TwinRoot`). Octokit talks
 * to either through a fetch that hands its requests to the guest harness, as a world would
 * route them; a refresh's reads are answered by the real one's API, as the host would perform them.
 */
import { createHash } from 'node:crypto';
import { Octokit } from '@octokit/rest';
import type { GuestHarness } from '../../../sdk/twin/testing.js';
import type { RootRead } from '../../../sdk/twin/types.js';

/** What the twin is told about the world token: the host marks it, and the twin acts as the site admin. */
const AS_ADMIN = { 'x-kit-auth': 'authorization', authorization: 'token world' };

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/**
 * Octokit against a harness: `base` is the address the twin is reached at (`{world_url}/github`),
 * which its `Link` URLs are written under. With `token`, a user's token instead of the world's.
 */
export function octokitOver(h: GuestHarness, base: string, token?: string): Octokit {
  const fetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = String(input instanceof Request ? input.url : input);
    if (!url.startsWith(base + '/')) throw new Error(`${url} is not under ${base}`);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => (headers[k] = v));
    Object.assign(headers, token === undefined ? AS_ADMIN : { authorization: `token ${token}` }, { 'x-kit-twin-url': base });
    const body = typeof init.body === 'string' ? JSON.parse(init.body) as unknown : undefined;
    const res = h.request(init.method ?? 'GET', url.slice(base.length), { headers, ...(body === undefined ? {} : { body, contentType: 'application/json' }) });
    const text = res.body === undefined || res.status === 204 || res.status === 304 ? null : typeof res.body === 'string' ? res.body : JSON.stringify(res.body);
    return new Response(text, { status: res.status, headers: res.headers });
  };
  return new Octokit({ baseUrl: base, ...(token === undefined ? {} : { auth: token }), log: quiet, request: { fetch } });
}

export interface VendorAnswer { status: number; headers: Record<string, string>; body: unknown }

/**
 * The real GitHub, as the host performs a refresh's reads: a read's path below the root's URL
 * (or an absolute URL on its origin: a `Link`'s next page), its query added, sent with the
 * credential (here the world token of the real one). `tamper` may change an answer.
 */
export function vendorOver(real: GuestHarness, base: string, rootUrl: string, tamper?: (read: RootRead, answer: VendorAnswer) => VendorAnswer) {
  const reads: string[] = [];
  const answer = (read: RootRead): VendorAnswer => {
    let url = /^https?:\/\//.test(read.path) ? read.path : rootUrl + read.path;
    const query = new URLSearchParams(read.query ?? {}).toString();
    if (query !== '') url += (url.includes('?') ? '&' : '?') + query;
    if (!url.startsWith(base + '/') && url !== base) throw new Error(`the refresh read ${url}, outside ${base}`);
    reads.push(url.slice(base.length));
    const res = real.request('GET', url.slice(base.length), { headers: { ...AS_ADMIN, 'x-kit-twin-url': base, ...(read.headers ?? {}) } });
    const out: VendorAnswer = { status: res.status, headers: res.headers, body: typeof res.body === 'string' ? JSON.parse(res.body) : res.body };
    return tamper === undefined ? out : tamper(read, out);
  };
  return { answer, reads };
}

/** A git object's id as git computes it. */
export function gitId(type: string, content: Buffer): string {
  return createHash('sha1').update(Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content])).digest('hex');
}

/** A stored tree's raw form (git's `<mode> <name>\0<20 bytes>` per entry). */
export function rawTree(entries: { mode: string; name: string; sha: string }[]): Buffer {
  return Buffer.concat(entries.flatMap((e) => [Buffer.from(`${e.mode === '040000' ? '40000' : e.mode} ${e.name}\0`), Buffer.from(e.sha, 'hex')]));
}

/** A stored commit's raw form, as the twin writes commits (`lib/git.ts` rawContent). */
export function rawCommit(c: { tree: string; parents: string[]; author: { name: string; email: string; date: string }; committer: { name: string; email: string; date: string }; message: string; tz?: [string, string] }): Buffer {
  const line = (p: { name: string; email: string; date: string }, tz: string) => `${p.name} <${p.email}> ${Math.floor(Date.parse(p.date) / 1000)} ${tz}`;
  let text = `tree ${c.tree}\n`;
  for (const p of c.parents) text += `parent ${p}\n`;
  text += `author ${line(c.author, c.tz?.[0] ?? '+0000')}\ncommitter ${line(c.committer, c.tz?.[1] ?? '+0000')}\n\n${c.message}`;
  return Buffer.from(text, 'utf8');
}

/** `o` without the named fields (what the twin computes from state a copy does not hold). */
export function without<T extends Record<string, unknown>>(o: T, ...keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { ...o };
  for (const k of keys) delete out[k];
  return out;
}
