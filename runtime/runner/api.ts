/**
 * The world's own endpoints, `{world_api}/…`: history, the clock, the map and timeline,
 * twins' status and scenarios, checks, and the request report — one route table
 * (`WORLD_API`), each route's method, path, scope and handler. The host has already
 * authenticated the caller and refused what its scope does not open; it reads the scopes
 * from the same table (`worldApiScope`).
 */
import { KitError } from '../errors.js';
import type { DiffQuery, Entry, TimelineQuery } from '../world/types.js';
import { parseQueryString } from '../router/index.js';
import { jsonResponse, noContent } from './answers.js';
import { readJsonBody, readTextBody } from './request.js';
import { matchRoute, pathSegments, routeTable, type Endpoint } from './routes.js';
import { redactEntry } from './secrets.js';
import type { WorldApiServices } from './services.js';
import type { ServedTwin } from './twins.js';
import { exportTwinFiles } from './transfer.js';
import type { Scope, WorldRequest, WorldResponse } from './types.js';

type Query = Record<string, string | string[]>;

/** What a handler is given: the runner's services, the request, the path's parameters and the parsed query. */
interface Call {
  services: WorldApiServices;
  req: WorldRequest;
  params: Record<string, string>;
  query: Query;
}

interface WorldApiRoute extends Endpoint {
  readonly handler: (call: Call) => WorldResponse | Promise<WorldResponse>;
}

function one(query: Query, name: string): string | undefined {
  const v = query[name];
  if (Array.isArray(v)) throw new KitError('bad_request', `Give '${name}' once.`, { param: name });
  return v;
}

function integer(query: Query, name: string, code: 'invalid_position' | 'invalid_limit' | 'bad_request', min: number): number | undefined {
  const raw = one(query, name);
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d{1,15}$/.test(raw) || Number(raw) < min) {
    throw new KitError(code, `'${name}' must be a whole number of at least ${min}, not '${raw}'.`, { param: name });
  }
  return Number(raw);
}

function objectBody(req: WorldRequest): Record<string, unknown> {
  const body = readJsonBody(req);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new KitError('bad_request', 'Send a JSON object.');
  }
  return body as Record<string, unknown>;
}

/** How a twin's records are shown to this caller: its secrets hidden when it may only read. */
function readerRedact(services: WorldApiServices, req: WorldRequest, twin: string): ((type: string, value: unknown) => unknown) | undefined {
  return req.scope === 'read' ? services.twins.get(twin)?.redact : undefined;
}

/** A timeline or diff item as a caller that may only read sees it. */
function hideSecrets<T extends { twin: string; entry: Entry }>(services: WorldApiServices, req: WorldRequest, item: T): T {
  const entry = redactEntry(item.entry, readerRedact(services, req, item.twin));
  return entry === item.entry ? item : { ...item, entry };
}

// ------------------------------------------------------------ handlers

function log({ services, req, params, query }: Call): WorldResponse {
  const twin = params['twin']!;
  const options: { after?: number; limit?: number } = {};
  const after = integer(query, 'after', 'invalid_position', 0);
  const limit = integer(query, 'limit', 'invalid_limit', 1);
  if (after !== undefined) options.after = after;
  if (limit !== undefined) options.limit = limit;
  const page = services.world.log(twin, options);
  if (req.scope === 'read') {
    const redact = readerRedact(services, req, twin);
    page.entries = page.entries.map((e) => redactEntry(e, redact));
  }
  return jsonResponse(200, { twin, ...page });
}

function checkpoint({ services, req, params, query }: Call): WorldResponse {
  const twin = params['twin']!;
  const at = integer(query, 'at', 'invalid_position', 0);
  const bytes = services.world.checkpoint(twin, at, readerRedact(services, req, twin));
  return { status: 200, headers: { 'content-type': 'application/json' }, body: bytes };
}

function timeline({ services, req, query }: Call): WorldResponse {
  const q: TimelineQuery = {};
  const limit = integer(query, 'limit', 'invalid_limit', 1);
  if (limit !== undefined) q.limit = limit;
  const before = one(query, 'before');
  if (before) q.before = before;
  const twin = one(query, 'twin');
  if (twin) q.twin = twin;
  const trace = one(query, 'trace');
  if (trace) q.trace = trace;
  const page = services.world.timeline(q);
  if (req.scope === 'read') page.entries = page.entries.map((e) => hideSecrets(services, req, e));
  return jsonResponse(200, page);
}

function diff({ services, req, query }: Call): WorldResponse {
  const q: DiffQuery = {};
  const limit = integer(query, 'limit', 'invalid_limit', 1);
  if (limit !== undefined) q.limit = limit;
  const after = one(query, 'after');
  if (after) q.after = after;
  const changes = services.world.diff(q);
  if (req.scope === 'read') changes.changes = changes.changes.map((c) => hideSecrets(services, req, c));
  return jsonResponse(200, changes);
}

function setClock({ services, req }: Call): WorldResponse {
  const at = objectBody(req)['at'];
  if (typeof at !== 'string') throw new KitError('invalid_instant', "Send { \"at\": \"<ISO 8601 instant>\" }.", { param: 'at' });
  return jsonResponse(200, services.world.setClock(at));
}

function advanceClock({ services, req }: Call): WorldResponse {
  const by = objectBody(req)['by'];
  if (typeof by !== 'string') throw new KitError('invalid_duration', 'Send { "by": "<N><unit>" } with unit s, m, h or d.', { param: 'by' });
  return jsonResponse(200, services.world.advanceClock(by));
}

function history({ services, query }: Call): WorldResponse {
  const at = one(query, 'at');
  if (!at) throw new KitError('invalid_instant', "Give the instant: history?at=<ISO 8601 instant>.", { param: 'at' });
  return jsonResponse(200, services.world.historyCut(at));
}

function getScenario({ services, params }: Call): WorldResponse {
  const twin = services.twin(params['vendor']!);
  const stored = services.scenarios.get(twin);
  return { status: 200, headers: { 'content-type': stored.format === 'json' ? 'application/json' : 'application/yaml' }, body: stored.source };
}

// A scenario is changed between the twin's requests, never under one (runner `exclusive`).
async function putScenario({ services, req, params }: Call): Promise<WorldResponse> {
  const twin = services.twin(params['vendor']!);
  const source = readTextBody(req);
  const slot = await services.exclusive(twin.vendor, () => services.scenarios.put(twin, source, req.headers['content-type']));
  return jsonResponse(200, { twin: twin.vendor, format: slot.stored.format, handlers: slot.scenario.handlers.length, updatedAt: slot.stored.updatedAt });
}

async function deleteScenario({ services, params }: Call): Promise<WorldResponse> {
  const twin = services.twin(params['vendor']!);
  await services.exclusive(twin.vendor, () => services.scenarios.delete(twin));
  return noContent();
}

/** The twin's state as the files of an export (docs/export.md): what `kit world export` reads from a world being served. */
function exportTwin({ services, params }: Call): WorldResponse {
  const twin = services.twin(params['vendor']!);
  return jsonResponse(200, exportTwinFiles(services.storage, services.world, twin.vendor));
}

function requests({ services, query }: Call): WorldResponse {
  const hours = one(query, 'hours');
  let h = 24;
  if (hours !== undefined) {
    h = Number(hours);
    if (!/^\d+(\.\d+)?$/.test(hours) || !(h > 0) || h > 24 * 366) throw new KitError('bad_request', "'hours' is a positive number of hours (at most a year).", { param: 'hours' });
  }
  return jsonResponse(200, services.requests.report([...services.twins.keys()], h, services.wallClock()));
}

/** The types the twin SDK keeps for itself (`__due` schedules, `__root` markers): no resource of the vendor's. */
function vendorResources(counts: { type: string; count: number }[]): { type: string; count: number }[] {
  return counts.filter((c) => !c.type.startsWith('__'));
}

/** The map: each twin's position, its root (the host adds its mirror) and its resources. */
function worldMap(services: WorldApiServices): unknown {
  const map = services.world.map();
  return { ...map, twins: map.twins.map((t) => ({ ...t, root: services.twins.has(t.twin) ? services.roots.root(t.twin) : null, resources: vendorResources(t.resources) })) };
}

// ------------------------------------------------------------ roots, credentials, links

function getRoot({ services, params }: Call): WorldResponse {
  const twin = services.twin(params['vendor']!);
  return jsonResponse(200, services.roots.root(twin.vendor));
}

function putRoot({ services, req, params }: Call): WorldResponse {
  const twin = services.twin(params['vendor']!);
  return jsonResponse(200, services.roots.putRoot(twin.vendor, readJsonBody(req)));
}

async function putCredential({ services, req, params }: Call): Promise<WorldResponse> {
  const name = params['vendor']!;
  const text = readTextBody(req);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    // The text may be the secret itself: never repeated.
    throw new KitError('invalid_json', 'Send the credential as JSON: { headers?, bearer?, signingSecret? }.');
  }
  return jsonResponse(200, await services.roots.putCredential(name, text, body, (n) => services.links.has(n)));
}

async function refresh({ services, params, query }: Call): Promise<WorldResponse> {
  const twin = services.twin(params['vendor']!);
  const force = one(query, 'force');
  if (force !== undefined && force !== '1' && force !== 'true' && force !== '0' && force !== 'false') throw new KitError('bad_request', "'force' is 1 or absent.", { param: 'force' });
  return jsonResponse(200, { twin: twin.vendor, refresh: await services.roots.refresh(twin.vendor, force === '1' || force === 'true') });
}

async function ingest({ services, req, params }: Call): Promise<WorldResponse> {
  const twin = services.twin(params['vendor']!);
  return jsonResponse(200, await services.roots.ingest(twin.vendor, req.headers, req.body ?? new Uint8Array()));
}

// ------------------------------------------------------------ changesets and the origin

async function pushChangeset({ services, req }: Call): Promise<WorldResponse> {
  const r = await services.changesets.receive(readJsonBody(req));
  return jsonResponse(r.status, r.body);
}

function deployBody(req: WorldRequest): unknown {
  const body = readJsonBody(req);
  if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) throw new KitError('bad_request', 'Send nothing, or { "confirm": "<name>" }.');
  return body;
}

/** Branches are made by the multi-world host, in its own core; the runner never makes one. */
function noBranches({ services, req }: Call): never {
  throw services.branchesServed ? notFound(req) : noBranchesError();
}

function noBranchesError(): KitError {
  return new KitError('not_found', 'This server makes no branches; the multi-world host does.');
}

function notFound(req: WorldRequest): KitError {
  return new KitError('not_found', `No world endpoint ${req.method} ${req.path}.`);
}

/**
 * Every world endpoint. Where the read token opens one, its scope is `read` (the spec's
 * "read" column); a twin's status and scenario and the checks are not read endpoints.
 * A path's `allow` lists its methods in this order.
 */
const WORLD_API = routeTable<WorldApiRoute>([
  { method: 'GET', path: '/log/:twin', scope: 'read', handler: log },
  { method: 'GET', path: '/checkpoint/:twin', scope: 'read', handler: checkpoint },
  { method: 'GET', path: '/map', scope: 'read', handler: ({ services }) => jsonResponse(200, worldMap(services)) },
  { method: 'GET', path: '/timeline', scope: 'read', handler: timeline },
  { method: 'GET', path: '/diff', scope: 'read', handler: diff },
  { method: 'GET', path: '/clock', scope: 'read', handler: ({ services }) => jsonResponse(200, services.world.clock()) },
  { method: 'PUT', path: '/clock', scope: 'write', handler: setClock },
  { method: 'POST', path: '/clock/advance', scope: 'write', handler: advanceClock },
  { method: 'GET', path: '/history', scope: 'read', handler: history },
  { method: 'GET', path: '/twins', scope: 'read', handler: ({ services }) => jsonResponse(200, { twins: [...services.twins.values()].map((t) => twinStatus(services, t.vendor)) }) },
  { method: 'GET', path: '/twins/:vendor/status', scope: 'write', handler: ({ services, params }) => jsonResponse(200, twinStatus(services, services.twin(params['vendor']!).vendor)) },
  { method: 'GET', path: '/twins/:vendor/scenario', scope: 'write', handler: getScenario },
  { method: 'PUT', path: '/twins/:vendor/scenario', scope: 'write', handler: putScenario },
  { method: 'DELETE', path: '/twins/:vendor/scenario', scope: 'write', handler: deleteScenario },
  { method: 'GET', path: '/twins/:vendor/export', scope: 'write', handler: exportTwin },
  { method: 'GET', path: '/twins/:vendor/root', scope: 'write', handler: getRoot },
  { method: 'PUT', path: '/twins/:vendor/root', scope: 'write', handler: putRoot },
  { method: 'GET', path: '/twins/:vendor/credential', scope: 'write', handler: ({ services, params }) => jsonResponse(200, services.roots.credential(params['vendor']!, (n) => services.links.has(n))) },
  { method: 'PUT', path: '/twins/:vendor/credential', scope: 'write', handler: putCredential },
  {
    method: 'DELETE',
    path: '/twins/:vendor/credential',
    scope: 'write',
    handler: ({ services, params }) => {
      services.roots.deleteCredential(params['vendor']!, (n) => services.links.has(n));
      return noContent();
    },
  },
  { method: 'POST', path: '/twins/:vendor/refresh', scope: 'write', handler: refresh },
  { method: 'POST', path: '/twins/:vendor/ingest', scope: 'write', keyless: true, handler: ingest },
  { method: 'GET', path: '/links', scope: 'write', handler: ({ services }) => jsonResponse(200, services.links.list()) },
  { method: 'PUT', path: '/links/:name', scope: 'write', handler: ({ services, req, params }) => jsonResponse(200, services.links.put(params['name']!, readJsonBody(req))) },
  {
    method: 'DELETE',
    path: '/links/:name',
    scope: 'write',
    handler: ({ services, params }) => {
      services.links.delete(params['name']!);
      return noContent();
    },
  },
  { method: 'GET', path: '/checks', scope: 'write', handler: ({ services }) => jsonResponse(200, { checks: services.checks.list() }) },
  { method: 'GET', path: '/checks/:name', scope: 'write', handler: ({ services, params }) => ({ status: 200, headers: { 'content-type': 'text/javascript' }, body: services.checks.get(params['name']!).source }) },
  { method: 'PUT', path: '/checks/:name', scope: 'write', handler: async ({ services, req, params }) => jsonResponse(200, await services.checks.put(params['name']!, readTextBody(req))) },
  {
    method: 'DELETE',
    path: '/checks/:name',
    scope: 'write',
    handler: async ({ services, params }) => {
      await services.checks.delete(params['name']!);
      return noContent();
    },
  },
  { method: 'GET', path: '/changesets', scope: 'read', handler: ({ services }) => jsonResponse(200, services.changesets.list()) },
  { method: 'POST', path: '/changesets', scope: 'write', handler: async ({ services, req }) => jsonResponse(201, await services.changesets.cut(readJsonBody(req) ?? {})) },
  {
    method: 'GET',
    path: '/changesets/:name',
    scope: 'read',
    handler: ({ services, req, params }) => jsonResponse(200, services.changesets.show(params['name']!, req.scope === 'read' ? (twin) => readerRedact(services, req, twin) : undefined)),
  },
  { method: 'POST', path: '/changesets/:name/verify', scope: 'write', handler: async ({ services, params }) => jsonResponse(200, await services.changesets.verify(params['name']!)) },
  {
    method: 'POST',
    path: '/changesets/:name/approve',
    scope: 'write',
    handler: async ({ services, req, params }) => jsonResponse(201, await services.changesets.approve(params['name']!, readJsonBody(req) ?? {}, req.credential === 'session' ? (req.who ?? 'a browser session') : undefined)),
  },
  { method: 'POST', path: '/push', scope: 'write', handler: pushChangeset },
  { method: 'POST', path: '/deploy', scope: 'write', handler: async ({ services, req }) => jsonResponse(200, await services.changesets.deploy(null, deployBody(req), req.credential)) },
  { method: 'POST', path: '/deploy/:name', scope: 'write', handler: async ({ services, req, params }) => jsonResponse(200, await services.changesets.deploy(params['name']!, deployBody(req), req.credential)) },
  { method: 'GET', path: '/origin', scope: 'write', handler: ({ services }) => jsonResponse(200, services.changesets.origin()) },
  { method: 'PUT', path: '/origin', scope: 'write', handler: async ({ services, req }) => jsonResponse(200, await services.changesets.putOrigin(readJsonBody(req))) },
  { method: 'POST', path: '/origin/pull', scope: 'write', handler: async ({ services, req }) => jsonResponse(200, await services.changesets.pull(readJsonBody(req))) },
  { method: 'POST', path: '/origin/push', scope: 'write', handler: async ({ services }) => jsonResponse(200, await services.changesets.pushToOrigin()) },
  { method: 'GET', path: '/requests', scope: 'read', handler: requests },
  { method: 'GET', path: '/branches', scope: 'read', handler: noBranches },
  { method: 'POST', path: '/branches', scope: 'write', handler: noBranches },
  { method: 'DELETE', path: '/branches/:org/:world', scope: 'write', handler: noBranches },
]);

/** Every world endpoint, its method, path pattern and scope, in the table's order. */
export const WORLD_API_ENDPOINTS: readonly Endpoint[] = WORLD_API.routes.map(({ method, path, scope, keyless }) => Object.freeze({ method, path, scope, ...(keyless ? { keyless } : {}) }));

/**
 * The endpoint `method path` names on `{world_api}`, with its path parameters; else the
 * methods the path takes (it answers 405), or null (404). `path` is below the world API's
 * prefix, without the query, percent-encoding intact; HEAD is taken as GET.
 */
export function matchWorldApi(method: string, path: string): { endpoint: Endpoint; params: Record<string, string> } | { allow: string[] } | null {
  let segments: string[];
  try {
    segments = pathSegments(path);
  } catch {
    return null;
  }
  const match = matchRoute(WORLD_API, method, segments);
  if (match.kind === 'route') return { endpoint: WORLD_API_ENDPOINTS[WORLD_API.routes.indexOf(match.route)]!, params: match.params };
  return match.kind === 'method_not_allowed' ? { allow: match.allow } : null;
}

/**
 * The token scope that opens `method path` on `{world_api}`: `read` when the read token
 * does, `write` when only the world's token does, null when the runner has no such
 * endpoint (it answers 404 or 405). For a host's scope check, from the same table.
 */
export function worldApiScope(method: string, path: string): Scope | null {
  const match = matchWorldApi(method, path);
  return match !== null && 'endpoint' in match ? match.endpoint.scope : null;
}

/** Whether `method path` on `{world_api}` opens with no credential (webhook ingest: the vendor's signature is its credential). */
export function worldApiKeyless(method: string, path: string): boolean {
  const match = matchWorldApi(method, path);
  return match !== null && 'endpoint' in match && match.endpoint.keyless === true;
}

export async function handleWorldApi(services: WorldApiServices, req: WorldRequest): Promise<WorldResponse> {
  const segments = pathSegments(req.path);
  const query = parseQueryString(req.query);
  const match = matchRoute(WORLD_API, req.method, segments);
  if (match.kind === 'route') return match.route.handler({ services, req, params: match.params, query });
  // A runner that makes no branches has none of their paths, whatever the method.
  if (segments[0] === 'branches' && !services.branchesServed) throw noBranchesError();
  if (match.kind === 'method_not_allowed') {
    const allow = match.allow.join(', ');
    throw new KitError('method_not_allowed', `${req.path} answers ${allow}, not ${req.method}.`, { allow });
  }
  throw notFound(req);
}

/** `scenarioFile` of a twin's status, for a twin whose scenario lives in a file of the app's (a local world's world file). */
function scenarioFileOf(services: WorldApiServices, t: ServedTwin): { scenarioFile?: unknown } {
  const file = services.scenarios.file(t);
  return file === null ? {} : { scenarioFile: file };
}

/** A twin's status, as `…/twins/<vendor>/status` answers it. */
export function twinStatus(services: WorldApiServices, vendor: string): Record<string, unknown> {
  const t = services.twin(vendor);
  return {
    vendor,
    version: t.manifest.version,
    protocol: t.manifest.protocol,
    ...services.roots.status(vendor),
    position: services.world.head(vendor),
    lastReceipt: services.changesets.lastReceipt(vendor),
    scenario: services.scenarios.inForce(t),
    ...scenarioFileOf(services, t),
    source: services.twinSource(vendor),
    resources: vendorResources(services.world.counts(vendor)),
  };
}
