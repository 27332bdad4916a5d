/**
 * The world's pages as the host serves them: the world page at the world's origin and a
 * mirror per twin (spec: World attach and vendor wire). The bundles are built at `make build`
 * (pages/build.mjs) and handed to the core as `PageFiles`; the host writes each page's HTML
 * shell itself, with the page's config in it (pages/ui/config.ts reads it).
 */

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
