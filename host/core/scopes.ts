/**
 * What the read token opens on the world API: the endpoints the spec marks "read".
 * Anything not named here needs the world's token.
 */

/** First path segments whose GET (and HEAD) the read token opens. */
const READ_GET = new Set(['log', 'checkpoint', 'changesets', 'requests', 'map', 'timeline', 'diff', 'clock', 'history', 'branches']);

/**
 * Whether the read token opens `method path` on `{world_api}`. `path` is normalized
 * (no double or trailing slash), e.g. `/log/stripe`. `twins` opens only as the list:
 * a twin's status, root, credential and scenario are not read endpoints.
 */
export function readTokenOpens(method: string, path: string): boolean {
  const second = path.indexOf('/', 1);
  const first = second < 0 ? path.slice(1) : path.slice(1, second);
  if (method === 'GET' || method === 'HEAD') {
    if (first === 'twins') return second < 0;
    // `clock/advance` is a POST; a GET there is not a read of anything.
    if (first === 'clock') return second < 0;
    return READ_GET.has(first);
  }
  // A browser session is opened or ended with either token (Authentication 5).
  if (first === 'session' && second < 0) return method === 'POST' || method === 'DELETE';
  return false;
}
