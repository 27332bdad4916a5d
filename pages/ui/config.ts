/**
 * What the host tells a page about where it is: injected by the host into the shell it serves
 * (host/core/pages.ts) as `<script type="application/json" id="kit-page">`, read once here.
 */

export interface PageConfig {
  /** `world`: the world page at the world's origin; `mirror`: one twin's mirror. */
  page: 'world' | 'mirror';
  org: string;
  world: string;
  /** `{world_url}` as a path on this origin: `/acme/shop`. */
  worldUrl: string;
  /** `{world_api}` as a path on this origin: `/-/acme/shop`. */
  worldApi: string;
  /** `{base_url}`, the host's own address (`http://127.0.0.1:4440`), where apps reach the world; null when unknown. */
  base: string | null;
  /** The world's own origin (`http://shop--acme.localhost:8787`), or null where the host gives it none. */
  origin: string | null;
  /** Whether the host opens a write session with no token for this page (spec Authentication 7). */
  loopback: boolean;
  /** The mirror's twin; null on the world page. */
  vendor: string | null;
  /** The URL path this page's files are served under (`/acme/shop/stripe/mirror/assets`). */
  assets: string;
  /** Every twin of the world, and whether it has a mirror. */
  twins: { vendor: string; mirror: boolean }[];
  /** Whether the host makes branches (`…/branches` answers). */
  branches: boolean;
}

/** The config the host injected, or an error naming what is missing (a shell opened from a file). */
export function readPageConfig(doc: Document = document): PageConfig {
  const el = doc.getElementById('kit-page');
  if (el === null || el.textContent === null) throw new Error('this page was not served by a twinkit host (no #kit-page config)');
  return JSON.parse(el.textContent) as PageConfig;
}
