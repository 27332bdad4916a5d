/**
 * Parsing and validating a handlers document (JSON or YAML). Everything is checked up
 * front, so a stored scenario cannot fail later on a typo: unknown fields, bad
 * matchers, bad templates, states no handler can reach. The first problem is refused
 * with KitError `invalid_scenario` naming the handler and the field.
 */

import { isMap, isScalar, parseDocument, visit } from 'yaml';
import { KitError } from '../errors.js';
import { checkJsonValue, isPlainObject, normalizeMatcher } from '../router/matcher.js';
import { parsePattern } from '../router/pattern.js';
import { compileRouter } from '../router/router.js';
import type { CompiledRouter } from '../router/types.js';
import { compileTemplate, TemplateError, type Template } from './template.js';
import type { HandlerAction, Scenario, ScenarioFault, ScenarioHandler } from './types.js';

export const MAX_DOCUMENT_BYTES = 4 * 1024 * 1024;
/**
 * The largest YAML document. The yaml library reads about 0.5 MB a second of small flow items
 * (`[{},{},…]`: 600 KB took 1.7 s on the world's thread, 1.2 MB reached the 5 s watchdog);
 * JSON reads ten times faster, so a larger document goes as JSON.
 */
export const MAX_YAML_DOCUMENT_BYTES = 512 * 1024;
export const MAX_HANDLERS = 1000;
export const MAX_DELAY_MS = 60_000;
export const MAX_JS_SOURCE = 64 * 1024;
export const MAX_NAME = 100;
export const DEFAULT_STATE = 'started';

/** A value with its templates compiled: strings holding `{{…}}` become templates. */
export type TemplatedValue =
  | { t: 'lit'; v: unknown }
  | { t: 'tpl'; tpl: Template }
  | { t: 'arr'; items: TemplatedValue[] }
  | { t: 'obj'; entries: [string, TemplatedValue][] };

export interface CompiledResponse {
  status: number;
  headers: [string, Template | string][];
  body: TemplatedValue | undefined;
}

/** What `ScenarioState` needs beyond the public shape. */
export interface CompiledScenario {
  router: CompiledRouter<number>;
  responses: (CompiledResponse | null)[];
}

const compiledOf = new WeakMap<Scenario, CompiledScenario>();

export function compiledScenario(s: Scenario): CompiledScenario {
  const c = compiledOf.get(s);
  if (!c) throw new TypeError('not a Scenario made by parseScenario');
  return c;
}

interface Where {
  index: number;
  name: string | null;
}

function fail(field: string, problem: string, where?: Where): never {
  const who = where ? ` (handler ${where.name !== null ? `"${where.name}"` : `at index ${where.index}`})` : '';
  throw new KitError('invalid_scenario', `${field === '' ? '' : `${field}: `}${problem}${who}`, {
    field,
    problem,
    ...(where ? { handler: { index: where.index, name: where.name } } : {}),
  });
}

const TOP_KEYS = ['state', 'description', 'handlers'];
const HANDLER_KEYS = ['name', 'description', 'match', 'when', 'then', 'times', 'delay', 'respond', 'js', 'fault'];
const RESPOND_KEYS = ['status', 'headers', 'body'];
const FAULT_KEYS = ['status', 'headers', 'body'];
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const DURATION = /^(\d{1,6}(?:\.\d{1,3})?)\s?(ms|s|m)$/;
const STATE_NAME = /^[A-Za-z0-9_.:-]{1,100}$/;

/** Reads a duration such as `250ms`, `2s`, `1.5s` or `1m` into milliseconds, or answers why not. */
export function parseDuration(v: unknown): number | string {
  if (typeof v !== 'string') return 'must be a duration such as 250ms, 2s or 1m';
  const m = DURATION.exec(v.trim());
  if (!m) return `"${v.slice(0, 40)}" is not a duration such as 250ms, 2s or 1m`;
  const n = Number(m[1]);
  const ms = Math.round(m[2] === 'ms' ? n : m[2] === 's' ? n * 1000 : n * 60_000);
  if (ms > MAX_DELAY_MS) return `must be at most 60s`;
  return ms;
}

/**
 * Parses and validates a handlers document. JSON when `contentType` says JSON
 * (`application/json`, `…+json`), YAML otherwise (YAML also reads JSON).
 *
 * @example parseScenario('handlers:\n  - match: POST /v1/charges\n    fault: reset\n')
 */
export function parseScenario(text: string, contentType?: string): Scenario {
  if (typeof text !== 'string') throw new TypeError('parseScenario takes the document as a string');
  if (text.length > MAX_DOCUMENT_BYTES) throw new KitError('body_too_large', `a scenario is at most ${MAX_DOCUMENT_BYTES} bytes`);
  const format = formatOf(contentType);
  if (format === 'yaml' && text.length > MAX_YAML_DOCUMENT_BYTES) {
    throw new KitError('body_too_large', `a YAML scenario is at most ${MAX_YAML_DOCUMENT_BYTES} bytes; send a larger one as JSON (Content-Type: application/json, up to ${MAX_DOCUMENT_BYTES} bytes)`);
  }
  const doc = format === 'json' ? readJson(text) : readYaml(text);
  return build(doc, format);
}

function formatOf(contentType: string | undefined): 'json' | 'yaml' {
  if (contentType === undefined || contentType.trim() === '') return 'yaml';
  const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  if (type === 'application/json' || type.endsWith('+json')) return 'json';
  if (type.includes('yaml') || type === 'text/plain' || type === 'application/octet-stream') return 'yaml';
  throw new KitError('unsupported_media_type', `a scenario is JSON (application/json) or YAML (application/yaml), not ${type.slice(0, 80)}`);
}

function readJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    const msg = e instanceof RangeError ? 'the document nests too deeply' : (e as Error).message;
    throw new KitError('invalid_scenario', `the document is not JSON: ${msg}`, { field: '', problem: 'not JSON' });
  }
}

/** The first key that a map of the document holds twice (compared as the text it becomes), or null. */
function repeatedKey(doc: ReturnType<typeof parseDocument>): string | null {
  let found: string | null = null;
  visit(doc, {
    Map(_, map) {
      if (!isMap(map)) return undefined;
      const seen = new Set<string>();
      for (const pair of map.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        if (seen.has(key)) {
          found = key;
          return visit.BREAK;
        }
        seen.add(key);
      }
      return undefined;
    },
  });
  return found;
}

function readYaml(text: string): unknown {
  try {
    // A repeated key is a typo, not an override. yaml's own uniqueKeys compares every key with
    // every other of its map: 60,000 keys (589 KB) took 36 s. A set per map is linear.
    const doc = parseDocument(text, { uniqueKeys: false, prettyErrors: true, version: '1.2' });
    const first = doc.errors[0];
    if (first) throw new KitError('invalid_scenario', `the document is not YAML: ${first.message.split('\n')[0]}`, { field: '', problem: 'not YAML' });
    const repeated = repeatedKey(doc);
    if (repeated !== null) throw new KitError('invalid_scenario', `the document is not YAML: the key ${JSON.stringify(repeated.slice(0, 80))} appears twice in one map`, { field: '', problem: 'not YAML' });
    // maxAliasCount stops alias bombs.
    return doc.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (e) {
    if (e instanceof KitError) throw e;
    const msg = e instanceof RangeError ? 'the document nests too deeply' : (e as Error).message.split('\n')[0];
    throw new KitError('invalid_scenario', `the document is not YAML: ${msg}`, { field: '', problem: 'not YAML' });
  }
}

function unknownKeys(obj: Record<string, unknown>, allowed: string[], field: (k: string) => string, where?: Where): void {
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k)) fail(field(k), `unknown field (allowed: ${allowed.join(', ')})`, where);
  }
}

function build(doc: unknown, format: 'json' | 'yaml'): Scenario {
  if (doc === null || doc === undefined) fail('handlers', 'the document is empty; it needs a list of handlers');
  if (!isPlainObject(doc)) fail('', 'the document must be an object with a list of handlers');
  unknownKeys(doc, TOP_KEYS, (k) => k);
  let initialState = DEFAULT_STATE;
  if (doc['state'] !== undefined) initialState = stateName(doc['state'], 'state');
  if (doc['description'] !== undefined && typeof doc['description'] !== 'string') fail('description', 'must be a string');
  const list = doc['handlers'];
  if (!Array.isArray(list)) fail('handlers', 'must be a list of handlers');
  if (list.length > MAX_HANDLERS) fail('handlers', `at most ${MAX_HANDLERS} handlers`);

  const handlers: ScenarioHandler[] = [];
  const responses: (CompiledResponse | null)[] = [];
  const names = new Map<string, number>();
  list.forEach((raw: unknown, index: number) => {
    const { handler, response } = buildHandler(raw, index);
    const prior = names.get(handler.name);
    if (prior !== undefined) fail(`handlers[${index}].name`, `"${handler.name}" is already the name of handlers[${prior}]`, { index, name: handler.name });
    names.set(handler.name, index);
    handlers.push(handler);
    responses.push(response);
  });

  // A `when` state that nothing moves to is a typo that would silently never match.
  const reachable = new Set([initialState, ...handlers.flatMap((h) => (h.then ? [h.then.state] : []))]);
  for (const h of handlers) {
    if (h.when && !reachable.has(h.when.state)) {
      fail(`handlers[${h.index}].when.state`, `no handler moves to "${h.when.state}" and the scenario starts in "${initialState}" (states: ${[...reachable].join(', ')})`, { index: h.index, name: h.name });
    }
  }

  const router = compileRouter(handlers.map((h) => ({ name: h.name, match: h.match, value: h.index })));
  const scenario: Scenario = Object.freeze({ initialState, handlers: Object.freeze(handlers), format });
  compiledOf.set(scenario, { router, responses });
  return scenario;
}

function stateName(v: unknown, field: string, where?: Where): string {
  if (typeof v !== 'string' || !STATE_NAME.test(v)) fail(field, 'must be a state name (letters, digits, _ . : -, at most 100)', where);
  return v;
}

function buildHandler(raw: unknown, index: number): { handler: ScenarioHandler; response: CompiledResponse | null } {
  const at = `handlers[${index}]`;
  if (!isPlainObject(raw)) fail(at, 'a handler must be an object with a match', { index, name: null });
  let name: string | null = null;
  if (raw['name'] !== undefined) {
    if (typeof raw['name'] !== 'string' || raw['name'].trim() === '' || raw['name'].length > MAX_NAME) fail(`${at}.name`, `must be a non-empty string of at most ${MAX_NAME} characters`, { index, name: null });
    name = raw['name'];
  }
  const where: Where = { index, name };
  unknownKeys(raw, HANDLER_KEYS, (k) => `${at}.${k}`, where);

  if (raw['description'] !== undefined && typeof raw['description'] !== 'string') fail(`${at}.description`, 'must be a string', where);
  if (raw['match'] === undefined) fail(`${at}.match`, 'is required: { method, path, query, headers, body }, or "POST /v1/charges"', where);
  const matchInput = typeof raw['match'] === 'string' ? shorthand(raw['match'], `${at}.match`, where) : raw['match'];
  const norm = normalizeMatcher(matchInput);
  if (!norm.ok) fail(norm.field === '' ? `${at}.match` : `${at}.match.${norm.field}`, norm.problem, where);
  const pattern = parsePattern(norm.value.matcher.path);
  const paramNames = new Set<string>();
  if (pattern.ok) for (const s of pattern.segments) if (s.kind !== 'literal' && s.name !== null) paramNames.add(s.name);

  const handler: ScenarioHandler = {
    index,
    name: name ?? `handlers[${index}]`,
    match: norm.value.matcher,
    times: null,
    delayMs: 0,
    action: { kind: 'pass' },
  };
  if (typeof raw['description'] === 'string') handler.description = raw['description'];

  for (const key of ['when', 'then'] as const) {
    const v = raw[key];
    if (v === undefined) continue;
    if (!isPlainObject(v)) fail(`${at}.${key}`, 'must be { state: <name> }', where);
    unknownKeys(v, ['state'], (k) => `${at}.${key}.${k}`, where);
    handler[key] = { state: stateName(v['state'], `${at}.${key}.state`, where) };
  }

  if (raw['times'] !== undefined) {
    const t = raw['times'];
    if (typeof t !== 'number' || !Number.isInteger(t) || t < 1 || t > 1_000_000_000) fail(`${at}.times`, 'must be a whole number from 1 (leave it out for no limit)', where);
    handler.times = t;
  }
  if (raw['delay'] !== undefined) {
    const d = parseDuration(raw['delay']);
    if (typeof d === 'string') fail(`${at}.delay`, d, where);
    handler.delayMs = d;
  }

  const actions = (['respond', 'js', 'fault'] as const).filter((k) => raw[k] !== undefined);
  if (actions.length > 1) fail(`${at}.${actions[1]}`, `a handler does one of respond, js or fault (it already has ${actions[0]})`, where);
  let response: CompiledResponse | null = null;
  let action: HandlerAction = { kind: 'pass' };
  if (raw['respond'] !== undefined) {
    const r = buildResponse(raw['respond'], `${at}.respond`, where, paramNames, RESPOND_KEYS, false);
    response = r.compiled;
    action = { kind: 'respond', status: r.status, headers: r.headers, ...(r.body !== undefined ? { body: r.body } : {}) };
  } else if (raw['js'] !== undefined) {
    const src = raw['js'];
    if (typeof src !== 'string' || src.trim() === '') fail(`${at}.js`, 'must be the body of a function of (request, ctx) that returns a response', where);
    if (src.length > MAX_JS_SOURCE) fail(`${at}.js`, `must be at most ${MAX_JS_SOURCE} characters`, where);
    action = { kind: 'js', source: src };
  } else if (raw['fault'] !== undefined) {
    const f = raw['fault'];
    let fault: ScenarioFault;
    if (f === 'reset') fault = { type: 'reset' };
    else if (isPlainObject(f)) {
      const r = buildResponse(f, `${at}.fault`, where, paramNames, FAULT_KEYS, true);
      response = r.compiled;
      fault = { type: 'status', status: r.status, headers: r.headers, ...(r.body !== undefined ? { body: r.body } : {}) };
    } else fail(`${at}.fault`, 'must be reset, or { status: 5xx, headers?, body? }', where);
    action = { kind: 'fault', fault };
  } else if (handler.delayMs === 0 && handler.then === undefined) {
    fail(at, 'does nothing: give it respond, js, fault, delay or then', where);
  }
  handler.action = action;
  return { handler, response };
}

/** `"POST /v1/charges"`, `"GET,HEAD /v1/x"` or `"/v1/x"` (any method). */
function shorthand(text: string, field: string, where: Where): Record<string, unknown> {
  const parts = text.trim().split(/\s+/);
  if (parts.length === 1) return { path: parts[0] };
  if (parts.length === 2) {
    const methods = (parts[0] as string).split(',');
    return { method: methods.length === 1 ? methods[0] : methods, path: parts[1] };
  }
  fail(field, 'as a string it is "<METHOD> <path>" or "<path>", e.g. "POST /v1/charges"', where);
}

function buildResponse(
  raw: unknown,
  field: string,
  where: Where,
  paramNames: ReadonlySet<string>,
  keys: string[],
  isFault: boolean,
): { status: number; headers: Record<string, string>; body: unknown; compiled: CompiledResponse } {
  if (!isPlainObject(raw)) fail(field, 'must be { status, headers, body }', where);
  unknownKeys(raw, keys, (k) => `${field}.${k}`, where);
  let status = 200;
  if (raw['status'] !== undefined || isFault) {
    const s = raw['status'];
    const [lo, hi] = isFault ? [500, 599] : [100, 599];
    if (typeof s !== 'number' || !Number.isInteger(s) || s < lo || s > hi) fail(`${field}.status`, `must be an integer ${lo}-${hi}`, where);
    status = s;
  }
  const headers: Record<string, string> = {};
  const compiledHeaders: [string, Template | string][] = [];
  if (raw['headers'] !== undefined) {
    const h = raw['headers'];
    if (!isPlainObject(h)) fail(`${field}.headers`, 'must be an object of header names to values', where);
    for (const [k, v] of Object.entries(h)) {
      if (!HEADER_NAME.test(k) || k === '__proto__') fail(`${field}.headers.${k}`, 'is not a valid header name', where);
      if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') fail(`${field}.headers.${k}`, 'must be a string (or a number)', where);
      const text = String(v);
      if (/[\r\n\0]/.test(text)) fail(`${field}.headers.${k}`, 'must not contain line breaks', where);
      headers[k] = text;
      compiledHeaders.push([k, templateOf(text, `${field}.headers.${k}`, where, paramNames) ?? text]);
    }
  }
  let body: TemplatedValue | undefined;
  if (raw['body'] !== undefined) {
    const bad = checkJsonValue(raw['body'], 0);
    if (bad !== null) fail(`${field}.body`, bad, where);
    body = templated(raw['body'], `${field}.body`, where, paramNames);
  }
  return { status, headers, body: raw['body'], compiled: { status, headers: compiledHeaders, body } };
}

function templateOf(text: string, field: string, where: Where, paramNames: ReadonlySet<string>): Template | null {
  try {
    return compileTemplate(text, paramNames);
  } catch (e) {
    if (e instanceof TemplateError) fail(field, e.message, where);
    throw e;
  }
}

function templated(v: unknown, field: string, where: Where, paramNames: ReadonlySet<string>): TemplatedValue {
  if (typeof v === 'string') {
    const t = templateOf(v, field, where, paramNames);
    return t ? { t: 'tpl', tpl: t } : { t: 'lit', v };
  }
  if (Array.isArray(v)) {
    const items = v.map((x, i) => templated(x, `${field}[${i}]`, where, paramNames));
    return items.every((x) => x.t === 'lit') ? { t: 'lit', v } : { t: 'arr', items };
  }
  if (isPlainObject(v)) {
    for (const [k, x] of Object.entries(v)) {
      // YAML reads an unquoted {{request.id}} as a mapping whose key is a mapping; its
      // text form is "{ request.id }". Say so rather than answer that object.
      if (x === null && k.startsWith('{') && k.endsWith('}')) fail(field, `holds a mapping "${k.slice(0, 60)}": a template must be quoted, e.g. "{{request.body.amount}}"`, where);
    }
    const entries = Object.entries(v).map(([k, x]): [string, TemplatedValue] => [k, templated(x, `${field}.${k}`, where, paramNames)]);
    return entries.every(([, x]) => x.t === 'lit') ? { t: 'lit', v } : { t: 'obj', entries };
  }
  return { t: 'lit', v };
}
