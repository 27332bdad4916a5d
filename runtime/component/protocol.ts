/**
 * The kit:twin world's typed records (as jco lifts and lowers them: records as objects with
 * camelCase fields, `option` as the value or undefined, variants as `{ tag, val }`, u64/s64 as
 * BigInt) ↔ the JSON protocol of a JavaScript twin bundle (`__kit_manifest`, `__kit_invoke`;
 * sdk/twin/README.md). What comes from the component is guest data: checked, with errors that
 * say which field. Pure.
 */
import type { TwinManifestJson } from '../runner/types.js';
import type { Matcher } from '../../sdk/twin/types.js';

type Wit = Record<string, unknown>;

/** A component's answer that is not what the world promises: the message names the field. */
export class ComponentAnswerError extends Error {}

function fail(what: string): never {
  throw new ComponentAnswerError(`the component answered ${what}`);
}

function str(v: unknown, field: string): string {
  if (typeof v !== 'string') fail(`a ${field} that is not a string`);
  return v;
}

function list(v: unknown, field: string): unknown[] {
  if (!Array.isArray(v)) fail(`a ${field} that is not a list`);
  return v;
}

function rec(v: unknown, field: string): Wit {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(`a ${field} that is not a record`);
  return v as Wit;
}

function json(v: unknown, field: string): unknown {
  const text = str(v, field);
  try {
    return JSON.parse(text);
  } catch {
    fail(`a ${field} that is not JSON text`);
  }
}

function namedMatches(v: unknown, field: string): Record<string, string | true> | undefined {
  const out: Record<string, string | true> = {};
  const items = list(v, field);
  for (const item of items) {
    const m = rec(item, field);
    out[str(m['name'], `${field} name`)] = m['equals'] === undefined ? true : str(m['equals'], `${field} value`);
  }
  return items.length === 0 ? undefined : out;
}

/** `manifest()`'s record as the manifest JSON a bundle's `__kit_manifest` answers. */
export function manifestOfWit(value: unknown): TwinManifestJson {
  const m = rec(value, 'manifest');
  const models = rec(m['models'], 'manifest models');
  const routes = list(m['routes'], 'manifest routes').map((r, i) => {
    const route = rec(r, `route ${i}`);
    const w = rec(route['match'], `route ${i} match`);
    const match: Matcher = { path: str(w['path'], `route ${i} path`) };
    if (w['methods'] !== undefined) match.method = list(w['methods'], `route ${i} methods`).map((x) => str(x, `route ${i} method`));
    const query = namedMatches(w['query'], `route ${i} query`);
    if (query) match.query = query;
    const headers = namedMatches(w['headers'], `route ${i} headers`);
    if (headers) match.headers = headers;
    const body = list(w['body'], `route ${i} body`);
    if (body.length > 0) {
      match.body = {};
      for (const b of body) {
        const part = rec(b, `route ${i} body`);
        match.body[str(part['path'], `route ${i} body path`)] = part['equals'] === undefined ? true : json(part['equals'], `route ${i} body value`);
      }
    }
    return { name: str(route['name'], `route ${i} name`), match };
  });
  return {
    vendor: str(m['vendor'], 'vendor'),
    version: str(m['version'], 'version'),
    protocol: str(m['protocol'], 'protocol'),
    models: {
      hosts: list(models['hosts'], 'models hosts').map((h) => str(h, 'host')),
      resources: list(models['resources'], 'models resources').map((h) => str(h, 'resource')),
      endpointEnv: list(models['endpointEnv'], 'models endpoint-env').map((h) => str(h, 'endpoint-env')),
    },
    requestScopes: list(m['requestScopes'], 'request-scopes').map((s) => (s === 'read' ? 'read' : fail('a request scope other than read'))),
    routes,
    stores: list(m['stores'], 'stores').map((s) => str(s, 'store')),
    moves: list(m['moves'], 'moves').map((s) => str(s, 'move')),
    scenarios: m['scenarios'] === true,
  };
}

function entries(v: unknown): [string, unknown][] {
  return typeof v === 'object' && v !== null ? Object.entries(v) : [];
}

function queryOf(v: unknown): { name: string; values: string[] }[] {
  return entries(v).map(([name, value]) => ({ name, values: Array.isArray(value) ? value.map(String) : [String(value)] }));
}

function base64Bytes(text: string): Uint8Array {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

function bytesBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** The call-context and invocation for `invoke`, from `__kit_invoke`'s input; null for a kind a component has no entry for. */
export function witCallOf(input: Wit): { context: Wit; invocation: Wit } | { unsupported: string } {
  const context = { world: String(input['world']), twin: String(input['twin']), position: BigInt(Number(input['position']) || 0), nowMs: BigInt(Math.trunc(Number(input['nowMs']) || 0)) };
  switch (input['kind']) {
    case 'route': {
      const r = rec(input['request'], 'request');
      const request: Wit = {
        method: String(r['method']),
        path: String(r['path']),
        params: entries(r['params']).map(([name, value]) => ({ name, value: String(value) })),
        query: queryOf(r['query']),
        headers: entries(r['headers']).map(([name, value]) => ({ name, value: String(value) })),
        body: r['body'] === undefined ? undefined : JSON.stringify(r['body']),
        bodyText: typeof r['bodyText'] === 'string' ? r['bodyText'] : undefined,
        bodyBytes: typeof r['bodyBase64'] === 'string' ? base64Bytes(r['bodyBase64']) : undefined,
        requestId: String(r['requestId'] ?? ''),
        readOnly: r['readOnly'] === true,
      };
      return { context, invocation: { tag: 'route', val: { index: Number(input['index']), request } } };
    }
    case 'move':
      return { context, invocation: { tag: 'move', val: { move: String(input['move']), id: String(input['id']), data: JSON.stringify(input['data'] ?? null), dueAt: String(input['dueAt']) } } };
    case 'store':
      return { context, invocation: { tag: 'store', val: { name: String(input['name']), query: queryOf(input['query']) } } };
    default:
      return { unsupported: `a component twin has no entry for '${String(input['kind'])}' calls` };
  }
}

/** `invoke`'s record as `__kit_invoke`'s JSON answer. */
export function guestOutputOfWit(value: unknown): string {
  const o = rec(value, 'invoke-output');
  const out: Wit = {
    writes: list(o['writes'], 'writes').map((w) => {
      const write = rec(w, 'write');
      return { type: str(write['type'], 'write type'), id: str(write['id'], 'write id'), value: write['value'] === undefined ? null : json(write['value'], 'write value') };
    }),
    events: list(o['events'], 'events').map((e) => {
      const event = rec(e, 'event');
      return { type: str(event['type'], 'event type'), data: json(event['data'], 'event data') };
    }),
  };
  if (o['response'] !== undefined) {
    const r = rec(o['response'], 'response');
    const headers: Record<string, string> = {};
    for (const h of list(r['headers'], 'response headers')) {
      const header = rec(h, 'response header');
      headers[str(header['name'], 'header name')] = str(header['value'], 'header value');
    }
    const response: Wit = { status: Number(r['status']), headers };
    if (r['bodyBytes'] instanceof Uint8Array) response['bodyBase64'] = bytesBase64(r['bodyBytes']);
    else if (r['body'] !== undefined) response['body'] = json(r['body'], 'response body');
    out['response'] = response;
  }
  if (o['thrown'] !== undefined) {
    const t = rec(o['thrown'], 'thrown');
    const message = str(t['message'], 'thrown message');
    out['thrown'] = { message, ...(t['stack'] !== undefined ? { stack: str(t['stack'], 'thrown stack') } : {}) };
    // A failure is answered 500 even when the component gave no response.
    out['response'] ??= { status: 500, body: { error: { code: 'handler_error', message } } };
  }
  return JSON.stringify(out);
}
