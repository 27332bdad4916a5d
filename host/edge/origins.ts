/**
 * Each world's own origin on the edge variant (host/core/access/origins.ts): hosted, from
 * `WORLD_ORIGIN_SUFFIX`; under `kit edge dev`, `<world>--<org>.localhost` at the port the
 * request came to.
 */
import { hostedOriginRule, type WorldOriginRule } from '../core/access/origins.js';
import type { EdgeEnv } from './env.js';

export function edgeOriginRule(env: EdgeEnv, url: URL): WorldOriginRule | null {
  if (typeof env.WORLD_ORIGIN_SUFFIX === 'string' && env.WORLD_ORIGIN_SUFFIX !== '') return hostedOriginRule(env.WORLD_ORIGIN_SUFFIX);
  const port = url.port === '' ? null : Number(url.port);
  return { scheme: url.protocol === 'https:' ? 'https' : 'http', suffix: '.localhost', port, loopback: env.LOOPBACK_SESSIONS === '1' };
}
