/**
 * What the read token opens on the world API: the endpoints the spec marks "read", as the
 * runtime's route table says (runtime/runner/api.ts `WORLD_API`), plus the host's own.
 * Anything else needs the world's token.
 */
import { worldApiKeyless, worldApiScope } from '../../runtime/runner/api.js';

/**
 * Whether the read token opens `method path` on `{world_api}`. `path` is normalized
 * (no double or trailing slash), e.g. `/log/stripe`.
 */
export function readTokenOpens(method: string, path: string): boolean {
  // A browser session is opened, looked at or ended with either token (Authentication 5); the host serves it.
  if (path === '/session') return true;
  return worldApiScope(method, path) === 'read';
}

/** Whether `method path` on `{world_api}` opens with no credential at all (webhook ingest, Authentication 12). */
export function opensKeyless(method: string, path: string): boolean {
  return worldApiKeyless(method, path);
}
