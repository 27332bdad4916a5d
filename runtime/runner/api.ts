/**
 * The world's own endpoints, `{world_api}/…`: history, the clock, the map and timeline,
 * twins' status and scenarios, checks, and the request report. The host has already
 * authenticated the caller and refused what its scope does not open.
 */
import { KitError } from '../errors.js';
import type { DiffQuery, Entry, TimelineQuery } from '../world/types.js';
import { parseQueryString } from '../router/index.js';
import { decodeSegment, readJsonBody, readTextBody } from './request.js';
import { redactEntry } from './secrets.js';
import { jsonResponse, noContent } from './answers.js';
import type { WorldApiServices } from './services.js';
import type { WorldRequest, WorldResponse } from './types.js';

type Query = Record<string, string | string[]>;

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

function allow(req: WorldRequest, ...methods: string[]): void {
  const method = req.method === 'HEAD' ? 'GET' : req.method;
  if (!methods.includes(method)) {
    throw new KitError('method_not_allowed', `${req.path} answers ${methods.join(', ')}, not ${req.method}.`, { allow: methods.join(', ') });
  }
}

function objectBody(req: WorldRequest): Record<string, unknown> {
  const body = readJsonBody(req);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new KitError('bad_request', 'Send a JSON object.');
  }
  return body as Record<string, unknown>;
}

/** How a twin's records are shown to this caller: its secrets hidden when it may only read. */
function readerRedact(runner: WorldApiServices, req: WorldRequest, twin: string): ((type: string, value: unknown) => unknown) | undefined {
  return req.scope === 'read' ? runner.twins.get(twin)?.redact : undefined;
}

/** A timeline or diff item as a caller that may only read sees it. */
function hideSecrets<T extends { twin: string; entry: Entry }>(runner: WorldApiServices, req: WorldRequest, item: T): T {
  const entry = redactEntry(item.entry, readerRedact(runner, req, item.twin));
  return entry === item.entry ? item : { ...item, entry };
}

export async function handleWorldApi(runner: WorldApiServices, req: WorldRequest): Promise<WorldResponse> {
  const segments = req.path.split('/').filter((s) => s !== '').map(decodeSegment);
  const query = parseQueryString(req.query);
  const world = runner.world;
  const [head, a, b, c] = segments;

  switch (head) {
    case 'log': {
      allow(req, 'GET');
      if (!a || b !== undefined) break;
      const options: { after?: number; limit?: number } = {};
      const after = integer(query, 'after', 'invalid_position', 0);
      const limit = integer(query, 'limit', 'invalid_limit', 1);
      if (after !== undefined) options.after = after;
      if (limit !== undefined) options.limit = limit;
      const page = world.log(a, options);
      if (req.scope === 'read') {
        const redact = readerRedact(runner, req, a);
        page.entries = page.entries.map((e) => redactEntry(e, redact));
      }
      return jsonResponse(200, { twin: a, ...page });
    }
    case 'checkpoint': {
      allow(req, 'GET');
      if (!a || b !== undefined) break;
      const at = integer(query, 'at', 'invalid_position', 0);
      const bytes = world.checkpoint(a, at, readerRedact(runner, req, a));
      return { status: 200, headers: { 'content-type': 'application/json' }, body: bytes };
    }
    case 'map':
      allow(req, 'GET');
      if (a !== undefined) break;
      return jsonResponse(200, world.map());
    case 'timeline': {
      allow(req, 'GET');
      if (a !== undefined) break;
      const q: TimelineQuery = {};
      const limit = integer(query, 'limit', 'invalid_limit', 1);
      if (limit !== undefined) q.limit = limit;
      const before = one(query, 'before');
      if (before) q.before = before;
      const twin = one(query, 'twin');
      if (twin) q.twin = twin;
      const trace = one(query, 'trace');
      if (trace) q.trace = trace;
      const page = world.timeline(q);
      if (req.scope === 'read') page.entries = page.entries.map((e) => hideSecrets(runner, req, e));
      return jsonResponse(200, page);
    }
    case 'diff': {
      allow(req, 'GET');
      if (a !== undefined) break;
      const q: DiffQuery = {};
      const limit = integer(query, 'limit', 'invalid_limit', 1);
      if (limit !== undefined) q.limit = limit;
      const after = one(query, 'after');
      if (after) q.after = after;
      const diff = world.diff(q);
      if (req.scope === 'read') diff.changes = diff.changes.map((c) => hideSecrets(runner, req, c));
      return jsonResponse(200, diff);
    }
    case 'clock': {
      if (a === undefined) {
        allow(req, 'GET', 'PUT');
        if (req.method === 'PUT') {
          const at = objectBody(req)['at'];
          if (typeof at !== 'string') throw new KitError('invalid_instant', "Send { \"at\": \"<ISO 8601 instant>\" }.", { param: 'at' });
          return jsonResponse(200, world.setClock(at));
        }
        return jsonResponse(200, world.clock());
      }
      if (a === 'advance' && b === undefined) {
        allow(req, 'POST');
        const by = objectBody(req)['by'];
        if (typeof by !== 'string') throw new KitError('invalid_duration', 'Send { "by": "<N><unit>" } with unit s, m, h or d.', { param: 'by' });
        return jsonResponse(200, world.advanceClock(by));
      }
      break;
    }
    case 'history': {
      allow(req, 'GET');
      if (a !== undefined) break;
      const at = one(query, 'at');
      if (!at) throw new KitError('invalid_instant', "Give the instant: history?at=<ISO 8601 instant>.", { param: 'at' });
      return jsonResponse(200, world.historyCut(at));
    }
    case 'twins': {
      if (a === undefined) {
        allow(req, 'GET');
        return jsonResponse(200, { twins: [...runner.twins.values()].map((t) => twinStatus(runner, t.vendor)) });
      }
      const twin = runner.twin(a);
      if (b === 'status' && c === undefined) {
        allow(req, 'GET');
        return jsonResponse(200, twinStatus(runner, twin.vendor));
      }
      if (b === 'scenario' && c === undefined) {
        allow(req, 'GET', 'PUT', 'DELETE');
        // Changed between the twin's requests, never under one (runner `exclusive`).
        if (req.method === 'PUT') {
          const source = readTextBody(req);
          const slot = await runner.exclusive(twin.vendor, () => runner.scenarios.put(twin, source, req.headers['content-type']));
          return jsonResponse(200, { twin: twin.vendor, format: slot.stored.format, handlers: slot.scenario.handlers.length, updatedAt: slot.stored.updatedAt });
        }
        if (req.method === 'DELETE') {
          await runner.exclusive(twin.vendor, () => runner.scenarios.delete(twin));
          return noContent();
        }
        const stored = runner.scenarios.get(twin);
        return { status: 200, headers: { 'content-type': stored.format === 'json' ? 'application/json' : 'application/yaml' }, body: stored.source };
      }
      break;
    }
    case 'checks': {
      if (a === undefined) {
        allow(req, 'GET');
        return jsonResponse(200, { checks: runner.checks.list() });
      }
      if (b !== undefined) break;
      allow(req, 'GET', 'PUT', 'DELETE');
      if (req.method === 'PUT') return jsonResponse(200, await runner.checks.put(a, readTextBody(req)));
      if (req.method === 'DELETE') {
        await runner.checks.delete(a);
        return noContent();
      }
      return { status: 200, headers: { 'content-type': 'text/javascript' }, body: runner.checks.get(a).source };
    }
    case 'requests': {
      allow(req, 'GET');
      if (a !== undefined) break;
      const hours = one(query, 'hours');
      let h = 24;
      if (hours !== undefined) {
        h = Number(hours);
        if (!/^\d+(\.\d+)?$/.test(hours) || !(h > 0) || h > 24 * 366) throw new KitError('bad_request', "'hours' is a positive number of hours (at most a year).", { param: 'hours' });
      }
      return jsonResponse(200, runner.requests.report([...runner.twins.keys()], h, runner.wallClock()));
    }
    case 'branches': {
      if (!runner.branchesServed) throw new KitError('not_found', 'This server makes no branches; the multi-world host does.');
      break;
    }
    default:
      break;
  }
  throw new KitError('not_found', `No world endpoint ${req.method} ${req.path}.`);
}

/** A twin's status, as `…/twins/<vendor>/status` answers it. */
export function twinStatus(runner: WorldApiServices, vendor: string): Record<string, unknown> {
  const t = runner.twin(vendor);
  return {
    vendor,
    version: t.manifest.version,
    protocol: t.manifest.protocol,
    root: null,
    credential: { sealed: false, sealedAt: null },
    lastRefresh: null,
    position: runner.world.head(vendor),
    lastReceipt: null,
    scenario: runner.scenarios.inForce(t),
    resources: runner.world.counts(vendor),
  };
}
