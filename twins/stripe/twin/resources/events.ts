/** Events: list (by type, types, created) and retrieve. */
import type { Route } from '../../../../sdk/twin/types.js';
import { route } from '../lib/call.js';
import { invalid } from '../errors.js';
import { mustLoad } from '../lib/store.js';
import { listOf } from '../lib/lists.js';

/**
 * Whether `text` matches a `*` pattern, given as its parts between the stars. Leftmost-first
 * matching of each middle part is exact for a pattern whose only operator is `*`, and takes
 * linear passes; a regular expression of `.*`s backtracked exponentially (`type=**…*z`).
 */
function globMatches(parts: string[], text: string): boolean {
  const first = parts[0] as string;
  if (parts.length === 1) return text === first;
  const last = parts[parts.length - 1] as string;
  if (!text.startsWith(first) || text.length < first.length + last.length) return false;
  let at = first.length;
  const end = text.length - last.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const part = parts[i] as string;
    const found = text.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return text.endsWith(last);
}

export const eventRoutes: Route[] = [
  route('events.list', 'GET', '/v1/events', (c) => {
    const type = c.p.str('type');
    const types = c.p.strings('types');
    if (type !== undefined && types !== undefined) throw invalid('You may only specify one of these parameters: type, types.', 'types');
    // `type` takes a `*` wildcard: `customer.*`.
    const pattern = type === undefined ? undefined : type.split('*');
    return listOf(c, 'event', '/v1/events', [
      pattern === undefined ? undefined : (o) => globMatches(pattern, o.type as string),
      types === undefined ? undefined : (o) => types.includes(o.type as string),
    ]);
  }),
  route('events.retrieve', 'GET', '/v1/events/:id', (c) => mustLoad(c, 'event', c.req.params.id as string, 'event')),
];
