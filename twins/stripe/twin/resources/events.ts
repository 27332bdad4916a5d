/** Events: list (by type, types, created) and retrieve. */
import type { Route } from '../../../../sdk/twin/types.js';
import { route } from '../core/call.js';
import { invalid } from '../core/errors.js';
import { listOf, mustLoad } from '../core/store.js';

export const eventRoutes: Route[] = [
  route('events.list', 'GET', '/v1/events', (c) => {
    const type = c.p.str('type');
    const types = c.p.strings('types');
    if (type !== undefined && types !== undefined) throw invalid('You may only specify one of these parameters: type, types.', 'types');
    // `type` takes a `*` wildcard: `customer.*`.
    const pattern = type === undefined ? undefined : new RegExp('^' + type.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*') + '$');
    return listOf(c, 'event', '/v1/events', [
      pattern === undefined ? undefined : (o) => pattern.test(o.type as string),
      types === undefined ? undefined : (o) => types.includes(o.type as string),
    ]);
  }),
  route('events.retrieve', 'GET', '/v1/events/:id', (c) => mustLoad(c, 'event', c.req.params.id as string, 'event')),
];
