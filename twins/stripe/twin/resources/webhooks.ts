/**
 * Webhook endpoints: create (the `whsec_` secret is answered once), list, retrieve, update,
 * delete. The secret is kept apart from the endpoint (record type `webhook_secret`) so
 * delivery can sign with it while the API never shows it again.
 */
import type { Route } from '../../../../sdk/twin/types.js';
import { route } from '../lib/call.js';
import type { Call } from '../lib/request.js';
import { invalid, paramMissing } from '../errors.js';
import { applyMetadata } from '../lib/metadata.js';
import { insert, mustLoad, save, unlist } from '../lib/store.js';
import { listOf } from '../lib/lists.js';
import { countHooks } from '../lib/account.js';
import { clone, type Obj } from '../lib/util.js';

const MAX_ENDPOINTS = 16;

function checkUrl(url: string, param: string): void {
  if (!/^https?:\/\/[^\s/$.?#][^\s]*$/i.test(url) || url.length > 2048) throw invalid('Invalid URL: URL must be a valid http(s) URL.', param, 'url_invalid');
}

function enabledEvents(c: Call, required: boolean): string[] | undefined {
  const events = c.p.strings('enabled_events');
  if (events === undefined) {
    if (required) throw paramMissing('enabled_events');
    return undefined;
  }
  if (events.length === 0) throw invalid('You must specify at least one event type in enabled_events.', 'enabled_events');
  events.forEach((e, i) => {
    // `*` alone means every event; otherwise whole event types (no `customer.*` patterns).
    if (e !== '*' && !/^[a-z_]+(\.[a-z_]+)+$/.test(e)) throw invalid(`Invalid event type: ${e}`, `enabled_events[${i}]`);
  });
  return events;
}

export function webhookSecret(c: Call, endpointId: string): string | undefined {
  return c.tree.get<string>('webhook_secret', `${c.acct}/${endpointId}`);
}

function createEndpoint(c: Call): Obj {
  const url = c.p.reqStr('url');
  checkUrl(url, 'url');
  const events = enabledEvents(c, true) as string[];
  if (c.tree.count(`ix.webhook_endpoint.${c.acct}`) >= MAX_ENDPOINTS) {
    throw invalid(`You have reached the maximum of ${MAX_ENDPOINTS} test webhook endpoints.`);
  }
  const id = c.ctx.id('we_', 24);
  const secret = c.ctx.id('whsec_', 32);
  const endpoint: Obj = {
    id, object: 'webhook_endpoint', api_version: c.p.str('api_version') ?? null, application: null, created: c.now,
    description: c.p.nullableStr('description') ?? null, enabled_events: events, livemode: false,
    metadata: applyMetadata(undefined, c.p.get('metadata')), status: 'enabled', url,
  };
  insert(c, 'webhook_endpoint', endpoint);
  c.tree.put('webhook_secret', `${c.acct}/${id}`, secret);
  countHooks(c, 1);
  return { ...endpoint, secret };
}

function updateEndpoint(c: Call): Obj {
  const id = c.req.params.id as string;
  const ep = clone(mustLoad(c, 'webhook_endpoint', id, 'webhook endpoint'));
  const url = c.p.str('url');
  if (url !== undefined) {
    checkUrl(url, 'url');
    ep.url = url;
  }
  const events = enabledEvents(c, false);
  if (events !== undefined) ep.enabled_events = events;
  if (c.p.has('description')) ep.description = c.p.nullableStr('description') ?? null;
  const disabled = c.p.bool('disabled');
  if (disabled !== undefined) ep.status = disabled ? 'disabled' : 'enabled';
  ep.metadata = applyMetadata(ep.metadata as Obj, c.p.get('metadata'));
  save(c, 'webhook_endpoint', ep);
  return ep;
}

function deleteEndpoint(c: Call): Obj {
  const id = c.req.params.id as string;
  mustLoad(c, 'webhook_endpoint', id, 'webhook endpoint');
  unlist(c, 'webhook_endpoint', id);
  c.tree.delete('webhook_secret', `${c.acct}/${id}`);
  countHooks(c, -1);
  return { id, object: 'webhook_endpoint', deleted: true };
}

export const webhookRoutes: Route[] = [
  route('webhook_endpoints.create', 'POST', '/v1/webhook_endpoints', createEndpoint),
  route('webhook_endpoints.list', 'GET', '/v1/webhook_endpoints', (c) => listOf(c, 'webhook_endpoint', '/v1/webhook_endpoints')),
  route('webhook_endpoints.retrieve', 'GET', '/v1/webhook_endpoints/:id', (c) => mustLoad(c, 'webhook_endpoint', c.req.params.id as string, 'webhook endpoint')),
  route('webhook_endpoints.update', 'POST', '/v1/webhook_endpoints/:id', updateEndpoint),
  route('webhook_endpoints.del', 'DELETE', '/v1/webhook_endpoints/:id', deleteEndpoint),
];

