/**
 * The world's pages as the host serves them: the world page at the world's origin and a
 * mirror per twin (spec: World attach and vendor wire). The bundles are built at `make build`
 * (pages/build.mjs) and handed to the core as `PageFiles`; the host writes each page's HTML
 * shell itself, with the page's config in it (pages/ui/config.ts reads it).
 */
import type { HttpAnswer } from './types.js';

/** One built file of a page. */
export interface PageAsset {
  readonly body: Uint8Array;
  readonly type: string;
}

/** The built pages: `world` for the world page, a vendor for its mirror. */
export interface PageFiles {
  asset(page: string, file: string): PageAsset | null;
  /** Whether `page` was built (`world`, or a vendor with a mirror). */
  has(page: string): boolean;
}

const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  woff2: 'font/woff2',
  json: 'application/json',
  map: 'application/json',
};

/** A file name a page may have: one segment, no dot first. */
export const PAGE_FILE = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

/** `PageFiles` over files in memory: `{ world: { 'app.js': … }, stripe: { 'app.js': …, 'app.css': … } }`. */
export function pageFilesOf(files: Readonly<Record<string, Readonly<Record<string, Uint8Array | string>>>>): PageFiles {
  const encoder = new TextEncoder();
  const pages = new Map<string, Map<string, PageAsset>>();
  for (const [page, entries] of Object.entries(files)) {
    const assets = new Map<string, PageAsset>();
    for (const [file, content] of Object.entries(entries)) {
      if (!PAGE_FILE.test(file)) continue;
      const ext = file.slice(file.lastIndexOf('.') + 1);
      assets.set(file, { body: typeof content === 'string' ? encoder.encode(content) : content, type: TYPES[ext] ?? 'application/octet-stream' });
    }
    if (assets.has('app.js')) pages.set(page, assets);
  }
  return {
    asset: (page, file) => pages.get(page)?.get(file) ?? null,
    has: (page) => pages.has(page),
  };
}

/** No pages: a host built without them (unit tests). */
export const NO_PAGES: PageFiles = { asset: () => null, has: () => false };

/**
 * What the shell tells its page (pages/ui/config.ts reads it; the two are kept alike by hand, as
 * a browser bundle imports nothing of the host's).
 */
export interface PageConfig {
  page: 'world' | 'mirror';
  org: string;
  world: string;
  worldUrl: string;
  worldApi: string;
  base: string | null;
  origin: string | null;
  loopback: boolean;
  vendor: string | null;
  assets: string;
  twins: { vendor: string; mirror: boolean }[];
  branches: boolean;
}

/**
 * The pages talk to this origin only, run only their own files, and are framed only by
 * themselves (the world page may show a mirror; a mail's HTML is shown in a sandboxed frame).
 */
const PAGE_CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-src 'self'; frame-ancestors 'self'; base-uri 'none'; form-action 'self'; object-src 'none'";

/**
 * A shell runs scripts from its own files only, not from any path of its origin: a twin's answer
 * there (a stored file, a mail's attachment) is not a script the page may load.
 */
function shellCsp(selfOrigin: string | null, assets: string): string {
  return selfOrigin === null ? PAGE_CSP : `${PAGE_CSP}; script-src ${selfOrigin}${assets}/`;
}

/** JSON safe inside a `<script>` element: no `<`, `>`, `&` or line separators as themselves. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const pageHeaders = (code: string, type: string): Record<string, string> => ({
  'content-type': type,
  'cache-control': 'no-cache',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'content-security-policy': PAGE_CSP,
  'x-kit-world-code': code,
});

/**
 * The HTML shell of a page: its files, its config, and the element it renders into. `selfOrigin`
 * is the origin it is served at (`http://shop--acme.localhost:4440`), null when the request did
 * not say it in a usable `Host`.
 */
export function pageShell(files: PageFiles, config: PageConfig, title: string, code: string, selfOrigin: string | null): HttpAnswer {
  const page = config.page === 'world' ? 'world' : config.vendor!;
  const css = files.asset(page, 'app.css') !== null ? `<link rel="stylesheet" href="${escapeHtml(config.assets)}/app.css">` : '';
  const body = [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    '<link rel="icon" href="data:,">',
    css,
    `<script type="module" src="${escapeHtml(config.assets)}/app.js"></script>`,
    `<script type="application/json" id="kit-page">${scriptJson(config)}</script>`,
    '</head><body><div id="app"><noscript>This page needs JavaScript.</noscript></div></body></html>',
  ].join('');
  const headers = pageHeaders(code, 'text/html; charset=utf-8');
  headers['content-security-policy'] = shellCsp(selfOrigin, config.assets);
  return { status: 200, headers, body };
}

/** One built file of a page, or null when there is none of that name. */
export function pageAssetAnswer(files: PageFiles, page: string, file: string, code: string): HttpAnswer | null {
  if (!PAGE_FILE.test(file)) return null;
  const asset = files.asset(page, file);
  if (asset === null) return null;
  return { status: 200, headers: pageHeaders(code, asset.type), body: asset.body };
}
