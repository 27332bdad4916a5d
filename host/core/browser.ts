/**
 * What a browser reaches on a world (spec: World attach and vendor wire; Authentication 6–8):
 * the world page at the world's own origin, a twin's mirror (keyless shell and files), and the
 * mirror's shell in place of a twin's error or non-HTML answer to a browser navigation.
 */
import { hostAnswer } from './answers.js';
import type { MountedWorld } from './core.js';
import { worldOriginOf, type WorldOriginRule } from './access/origins.js';
import { pageAssetAnswer, pageShell, type PageConfig, type PageFiles } from './pages.js';
import type { HttpAnswer, HttpHead } from './types.js';

/** The world page's files below its origin: a path no org can take (names start with [a-z0-9]). */
export const WORLD_PAGE_ASSETS = '/.kit/world';

export interface BrowserWorld {
  org: string;
  name: string;
  mounted: MountedWorld;
  rule: WorldOriginRule | null;
  pages: PageFiles;
  /** The origin the request came to (`http://shop--acme.localhost:4440`), for the shell's policy; null: unknown. */
  selfOrigin: string | null;
  /** `{base_url}` as published; null before the host listens. */
  base: string | null;
}

export function originOfWorld(rule: WorldOriginRule | null, org: string, name: string): string | null {
  return rule === null ? null : worldOriginOf(rule, org, name);
}

function configOf(w: BrowserWorld, page: 'world' | 'mirror', vendor: string | null): PageConfig {
  const worldUrl = `/${w.org}/${w.name}`;
  return {
    page,
    org: w.org,
    world: w.name,
    worldUrl,
    worldApi: `/-/${w.org}/${w.name}`,
    base: w.base,
    origin: originOfWorld(w.rule, w.org, w.name),
    loopback: w.rule?.loopback === true,
    vendor,
    assets: page === 'world' ? WORLD_PAGE_ASSETS : `${worldUrl}/${vendor}/mirror/assets`,
    twins: w.mounted.twins.map((t) => ({ vendor: t.vendor, mirror: w.pages.has(t.vendor) })),
    branches: w.mounted.hostEndpoint !== undefined,
  };
}

const readMethod = (method: string): boolean => method === 'GET' || method === 'HEAD';

/** `GET /` and `/.kit/world/<file>` at the world's origin; undefined for any other path. */
export function worldOriginPage(w: BrowserWorld, head: HttpHead): HttpAnswer | undefined {
  const path = head.path;
  const code = w.mounted.code;
  const isShell = path === '/' || path === '/index.html';
  const isAsset = path.startsWith(`${WORLD_PAGE_ASSETS}/`);
  if (!isShell && !isAsset) return undefined;
  if (!readMethod(head.method)) return hostAnswer('method_not_allowed', 'the world page answers GET', code, { allow: 'GET, HEAD' });
  if (!w.pages.has('world')) return hostAnswer('not_found', 'the world page is not built beside this host (make build builds it)', code);
  if (isShell) return pageShell(w.pages, configOf(w, 'world', null), `${w.org}/${w.name} · twinkit`, code, w.selfOrigin);
  return pageAssetAnswer(w.pages, 'world', path.slice(WORLD_PAGE_ASSETS.length + 1), code) ?? hostAnswer('not_found', `no file ${path}`, code);
}

/**
 * `{world_url}/<vendor>/mirror/` and `…/mirror/assets/<file>`, keyless; undefined for a path that is
 * not a mirror's. `sub` is the vendor-wire path (`/stripe/mirror/`).
 */
export function mirrorPage(w: BrowserWorld, head: HttpHead, sub: string): HttpAnswer | undefined {
  const slash = sub.indexOf('/', 1);
  if (slash < 0) return undefined;
  const vendor = sub.slice(1, slash);
  const rest = sub.slice(slash);
  const isShell = rest === '/mirror' || rest === '/mirror/';
  const isAsset = rest.startsWith('/mirror/assets/');
  if (!isShell && !isAsset) return undefined;
  if (!w.mounted.twins.some((t) => t.vendor === vendor)) return undefined;
  const code = w.mounted.code;
  if (!w.pages.has(vendor)) return hostAnswer('no_mirror', `the ${vendor} twin has no mirror`, code);
  if (!readMethod(head.method)) return hostAnswer('method_not_allowed', 'a mirror answers GET', code, { allow: 'GET, HEAD' });
  if (isShell) return mirrorShell(w, vendor);
  return pageAssetAnswer(w.pages, vendor, rest.slice('/mirror/assets/'.length), code) ?? hostAnswer('not_found', `no file ${rest} in the ${vendor} mirror`, code);
}

export function mirrorShell(w: BrowserWorld, vendor: string): HttpAnswer {
  return pageShell(w.pages, configOf(w, 'mirror', vendor), `${vendor} · ${w.org}/${w.name} · twinkit`, w.mounted.code, w.selfOrigin);
}

/**
 * The twin whose mirror a browser navigation to `sub` would show instead of an error or a
 * non-HTML answer (`Sec-Fetch-Dest` of `document` or `iframe`, `GET`); null when none would.
 */
export function navigationMirror(w: BrowserWorld, head: HttpHead, sub: string): string | null {
  if (head.method !== 'GET') return null;
  const dest = head.headers['sec-fetch-dest'];
  if (dest !== 'document' && dest !== 'iframe') return null;
  const slash = sub.indexOf('/', 1);
  const vendor = slash < 0 ? sub.slice(1) : sub.slice(1, slash);
  return w.pages.has(vendor) && w.mounted.twins.some((t) => t.vendor === vendor) ? vendor : null;
}

/** Whether a twin's answer stands for a navigation: an HTML page it serves itself, or a redirect. */
export function servesItsOwnPage(answer: HttpAnswer): boolean {
  // A redirect is followed; a 304 would show the browser's cached JSON as the page.
  if (answer.status >= 300 && answer.status < 400 && answer.status !== 304) return true;
  return answer.status < 300 && (answer.headers['content-type'] ?? '').toLowerCase().startsWith('text/html');
}

/**
 * The world's map with each twin's `mirror` named (`{world_url}/<vendor>/mirror/`) where the host
 * serves one: the runtime knows twins, the host knows their pages.
 */
export function withMirrors(answer: HttpAnswer, w: BrowserWorld): HttpAnswer {
  // `{world_url}` where the client addressed the host (its own origin, or the world's).
  const worldUrl = `${w.selfOrigin ?? w.base ?? ''}/${w.org}/${w.name}`;
  if (answer.status !== 200) return answer;
  let map: { twins?: { twin: string; mirror: string | null }[] };
  try {
    map = JSON.parse(typeof answer.body === 'string' ? answer.body : new TextDecoder().decode(answer.body)) as typeof map;
  } catch {
    return answer;
  }
  if (!Array.isArray(map.twins)) return answer;
  for (const t of map.twins) if (w.pages.has(t.twin)) t.mirror = `${worldUrl}/${t.twin}/mirror/`;
  const headers = Object.assign({}, answer.headers);
  delete headers['content-length'];
  return { ...answer, headers, body: JSON.stringify(map) };
}
