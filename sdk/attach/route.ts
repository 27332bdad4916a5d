/**
 * Where an attached app's request goes. Pure: the Node entry (`node.ts`) asks it for each
 * request it sees, whatever client sent it.
 *
 * - A twinned vendor host (`api.stripe.com`, any scheme, any port) → the twin's URL in the
 *   world, with the world's token in `x-twins-key` (the app's `Authorization` untouched).
 * - The world's own paths (`{world_url}/…`, `{world_api}/…`) → unchanged, with the token
 *   added in `x-twins-key` when the app sent none (spec Authentication 3).
 * - Anything else → untouched.
 */
import { isLoopbackHost as isLoopback } from './manifest.js';
import type { AttachManifest } from './manifest.js';

export interface TwinTarget {
  /** `http:` or `https:`: the world's, not the vendor's. */
  protocol: string;
  hostname: string;
  /** The world's port, always explicit. */
  port: number;
  /** `http://127.0.0.1:4440`. */
  origin: string;
  /** Prepended to the app's path: `/local/shop/stripe`. */
  prefix: string;
}

export type Decision = { kind: 'twin'; target: TwinTarget } | { kind: 'world' } | { kind: 'pass' };

export interface AttachRouter {
  /** The token sent in `x-twins-key`. */
  readonly token: string;
  /** Decides for a request to `hostname` (any case; IPv6 with or without brackets), `port`, `path`. */
  decide(hostname: string, port: number, path: string): Decision;
}

function portOf(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

function bare(hostname: string): string {
  const h = hostname.toLowerCase();
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h.endsWith('.') ? h.slice(0, -1) : h;
}

/** A router for one manifest, fetched from `worldUrl` with `token`. */
export function createRouter(manifest: AttachManifest, worldUrl: string, token: string): AttachRouter {
  const world = new URL(worldUrl);
  const worldHost = bare(world.hostname);
  const worldPort = portOf(world);
  const worldPath = world.pathname.replace(/\/+$/, '');
  // `{world_url}` is `{base}/<org>/<world>`; `{world_api}` is `{base}/-/<org>/<world>`.
  const segments = worldPath.split('/').filter((s) => s !== '');
  const apiPath = segments.length >= 2 ? `${segments.slice(0, -2).map((s) => `/${s}`).join('')}/-/${segments.slice(-2).join('/')}` : null;
  const underWorld = (path: string): boolean => {
    const p = path.split('?')[0] as string;
    const under = (prefix: string): boolean => p === prefix || p.startsWith(`${prefix}/`);
    return (worldPath !== '' && under(worldPath)) || (apiPath !== null && under(apiPath));
  };

  const targets = new Map<string, TwinTarget>();
  for (const [host, vendor] of Object.entries(manifest.hosts)) {
    const url = manifest.vendors[vendor];
    if (url === undefined) continue;
    const u = new URL(url);
    const port = portOf(u);
    targets.set(bare(host), {
      protocol: u.protocol,
      hostname: bare(u.hostname),
      port,
      origin: `${u.protocol}//${u.host}`,
      prefix: u.pathname.replace(/\/+$/, ''),
    });
  }

  return {
    token,
    decide(hostname, port, path) {
      const host = bare(hostname);
      const target = targets.get(host);
      if (target !== undefined) return { kind: 'twin', target };
      if (host === worldHost && port === worldPort && underWorld(path)) return { kind: 'world' };
      // `localhost` and the loopback address are the same world when the app names it either way.
      if (port === worldPort && underWorld(path) && isLoopback(host) && isLoopback(worldHost)) return { kind: 'world' };
      return { kind: 'pass' };
    },
  };
}

/** The path a twin target receives: the world's prefix, then the app's path (query kept). */
export function twinPath(target: TwinTarget, path: string): string {
  return `${target.prefix}${path.startsWith('/') ? path : `/${path}`}`;
}
