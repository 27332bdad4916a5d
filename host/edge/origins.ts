/**
 * Each world's own origin on the edge variant (host/core/access/origins.ts): hosted, from
 * `WORLD_ORIGIN_SUFFIX`; under `kit edge dev`, `<world>--<org>.localhost` at the port the
 * request came to; and the world a request names there (`requestWorld`), which the Worker
 * routes by and the family object serves.
 */
import { hostedOriginRule, worldAtHost, type WorldOriginRule } from '../core/access/origins.js';
import { locate, NAME_PATTERN, type Located } from '../core/paths.js';
import type { HttpHead } from '../core/types.js';
import { ADMIN_NAMES } from '../multi-world/admin.js';
import type { EdgeEnv } from './env.js';

export function edgeOriginRule(env: EdgeEnv, url: URL): WorldOriginRule | null {
  if (typeof env.WORLD_ORIGIN_SUFFIX === 'string' && env.WORLD_ORIGIN_SUFFIX !== '') return hostedOriginRule(env.WORLD_ORIGIN_SUFFIX);
  const port = url.port === '' ? null : Number(url.port);
  return { scheme: url.protocol === 'https:' ? 'https' : 'http', suffix: '.localhost', port, loopback: env.LOOPBACK_SESSIONS === '1' };
}

/** The world a request names, as the Worker routes it and its family serves it. */
export interface RequestWorld {
  rule: WorldOriginRule | null;
  /** The world whose own origin the `Host` names; null at the host's address. */
  at: { org: string; world: string } | null;
  where: Located;
  /** The world's `<org>/<world>`: its origin's, else its path's; null when neither names one. */
  name: string | null;
}

export function requestWorld(env: EdgeEnv, url: URL, head: HttpHead): RequestWorld {
  const rule = edgeOriginRule(env, url);
  // A world's own origin names the world, whatever the path (its page is at `/`; the core refuses another world's path there).
  const at = rule === null ? null : worldAtHost(rule, head.headers['host']);
  const where = locate(head.path, ADMIN_NAMES);
  const named = at ?? (where.kind === 'world' && NAME_PATTERN.test(where.org) && NAME_PATTERN.test(where.world) ? where : null);
  return { rule, at, where, name: named === null ? null : `${named.org}/${named.world}` };
}
