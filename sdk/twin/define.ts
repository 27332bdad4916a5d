/**
 * `defineTwin()`: the one call a twin's entry file makes. It checks the definition the way a
 * reviewer would (so a mistake shows up when the twin is built, not on the first request) and
 * returns it unchanged. Misuse is a TypeError naming the field at fault.
 */
import type { Matcher, Route, TwinDefinition } from './types.js';

/**
 * What a manifest's names may be. Exported: a host reads an untrusted twin's manifest with the
 * same rules (runtime/runner/twin-check.ts), and the CLI and hosts check a vendor id with them.
 */
export const VENDOR_ID = /^[a-z][a-z0-9-]{1,39}$/;
export const PROTOCOL_NAME = /^[a-z][a-z0-9-]{0,31}$/;
const METHOD = /^[A-Z][A-Z-]{0,19}$/;
/** Store names become a URL segment (`/twin/store/<name>`). */
export const STORE_NAME = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
export const MOVE_NAME = /^[A-Za-z_$][A-Za-z0-9_$.-]{0,63}$/;
/** As the host-side router reads patterns (runtime/router/pattern.ts): refuse here what it would refuse there. */
const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MAX_PATTERN_LENGTH = 2048;
const MAX_PATTERN_SEGMENTS = 64;

function fail(where: string, what: string): never {
  throw new TypeError(`defineTwin: ${where} ${what}`);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function stringList(v: unknown, where: string, optional: boolean): void {
  if (v === undefined && optional) return;
  if (!Array.isArray(v)) fail(where, 'must be an array of strings');
  for (const [i, s] of v.entries()) {
    if (typeof s !== 'string' || s === '') fail(`${where}[${i}]`, 'must be a non-empty string');
  }
}

/** Throws a TypeError when a path pattern could never match or is ambiguous. */
export function checkPathPattern(path: unknown, where: string): void {
  if (typeof path !== 'string' || !path.startsWith('/')) fail(where, "must be a string starting with '/'");
  if (path.length > MAX_PATTERN_LENGTH) fail(where, `must be at most ${MAX_PATTERN_LENGTH} characters`);
  if (/[\s?#\u0000-\u001f\u007f]/.test(path)) fail(where, 'must not contain a query, a fragment, white space or control characters');
  const segments = path.split('/').slice(1);
  if (segments.length > MAX_PATTERN_SEGMENTS) fail(where, `must have at most ${MAX_PATTERN_SEGMENTS} segments`);
  const seen = new Set<string>();
  segments.forEach((segment, i) => {
    if (segment.startsWith(':') || segment.startsWith('*')) {
      const name = segment.slice(1);
      const rest = segment.startsWith('*');
      if (!(rest && name === '') && !PARAM_NAME.test(name)) fail(where, `has a parameter without a valid name (letters, digits, '_'): '${segment}'`);
      if (seen.has(name)) fail(where, `names the parameter '${name}' twice`);
      seen.add(name);
      if (rest && i !== segments.length - 1) fail(where, `may have '${segment}' only as its last segment`);
    } else {
      try {
        decodeURIComponent(segment);
      } catch {
        fail(where, `has a malformed percent escape in '${segment}'`);
      }
    }
  });
}

function checkJsonData(v: unknown, where: string): void {
  let text: string | undefined;
  try {
    text = JSON.stringify(v);
  } catch {
    fail(where, 'must be plain JSON data');
  }
  if (text === undefined) fail(where, 'must be plain JSON data');
}

function checkMatcher(match: unknown, where: string): void {
  if (!isRecord(match)) fail(where, 'must be an object');
  const m = match as Partial<Matcher> & Record<string, unknown>;
  for (const key of Object.keys(m)) {
    if (!['method', 'path', 'query', 'headers', 'body'].includes(key)) fail(`${where}.${key}`, 'is not a matcher field (method, path, query, headers, body)');
  }
  checkPathPattern(m.path, `${where}.path`);
  if (m.method !== undefined) {
    const methods = Array.isArray(m.method) ? m.method : [m.method];
    if (methods.length === 0) fail(`${where}.method`, 'must not be an empty array');
    for (const method of methods) {
      if (typeof method !== 'string' || !METHOD.test(method)) fail(`${where}.method`, `must be upper-case method names, got ${JSON.stringify(method)}`);
    }
  }
  for (const part of ['query', 'headers'] as const) {
    const value = m[part];
    if (value === undefined) continue;
    if (!isRecord(value)) fail(`${where}.${part}`, 'must be an object');
    for (const [name, want] of Object.entries(value)) {
      if (name === '') fail(`${where}.${part}`, 'must not have an empty name');
      if (want !== true && typeof want !== 'string') fail(`${where}.${part}.${name}`, 'must be a string or true');
      if (part === 'headers' && name !== name.toLowerCase()) fail(`${where}.headers.${name}`, 'must be a lower-case header name');
    }
  }
  if (m.body !== undefined) {
    if (!isRecord(m.body)) fail(`${where}.body`, 'must be an object of dotted paths');
    checkJsonData(m.body, `${where}.body`);
    for (const dotted of Object.keys(m.body)) {
      const path = dotted.split('.');
      if (path.some((p) => p === '')) fail(`${where}.body.${dotted}`, 'must be names or indexes joined by "." (card.number, items.0.price)');
      if (path.some((p) => p === '__proto__' || p === 'constructor' || p === 'prototype')) fail(`${where}.body.${dotted}`, 'cannot match __proto__, constructor or prototype');
    }
  }
}

/** `secrets`: record type → `true` (the whole value) or dotted field paths (`config.secret`). */
function checkSecrets(v: unknown): void {
  if (v === undefined) return;
  if (!isRecord(v)) fail('secrets', "must be an object { <record type>: true | ['field.path', …] }");
  for (const [type, spec] of Object.entries(v)) {
    const where = `secrets[${JSON.stringify(type)}]`;
    if (type === '' || type.length > 256) fail(where, 'names no record type');
    if (spec === true) continue;
    if (!Array.isArray(spec) || spec.length === 0) fail(where, "must be true or a non-empty array of field paths like 'config.secret'");
    for (const path of spec) {
      if (typeof path !== 'string' || path.split('.').some((part) => part === '')) fail(where, `holds ${JSON.stringify(path)}, not a dotted field path`);
    }
  }
}

function checkFunctions(v: unknown, where: string, namePattern: RegExp): void {
  if (v === undefined) return;
  if (!isRecord(v)) fail(where, 'must be an object of functions');
  for (const [name, fn] of Object.entries(v)) {
    if (!namePattern.test(name)) fail(`${where}.${name}`, `is not a valid name (${namePattern.source})`);
    if (typeof fn !== 'function') fail(`${where}.${name}`, 'must be a function');
  }
}

/**
 * Declares a twin. Use as the default export of the twin's entry file:
 *
 * ```ts
 * export default defineTwin({ vendor: 'hello', version: '1.0.0', protocol: 'http',
 *   models: { hosts: ['api.hello.test'], resources: ['greeting'] }, routes: [...] });
 * ```
 */
export function defineTwin<T extends TwinDefinition>(def: T): T {
  if (!isRecord(def)) fail('the definition', 'must be an object');
  if (typeof def.vendor !== 'string' || !VENDOR_ID.test(def.vendor)) {
    fail('vendor', `must match ${VENDOR_ID.source} (got ${JSON.stringify(def.vendor)})`);
  }
  if (typeof def.version !== 'string' || def.version.trim() === '') fail('version', 'must be a non-empty string');
  if (typeof def.protocol !== 'string' || !PROTOCOL_NAME.test(def.protocol)) fail('protocol', `must match ${PROTOCOL_NAME.source}, e.g. 'http'`);
  if (!isRecord(def.models)) fail('models', 'must be an object { hosts, resources, endpointEnv? }');
  stringList(def.models.hosts, 'models.hosts', false);
  stringList(def.models.resources, 'models.resources', false);
  stringList(def.models.endpointEnv, 'models.endpointEnv', true);
  if (def.requestScopes !== undefined) {
    if (!Array.isArray(def.requestScopes) || def.requestScopes.some((s) => s !== 'read')) fail('requestScopes', "may only hold 'read'");
  }
  if (!Array.isArray(def.routes)) fail('routes', 'must be an array');
  const names = new Set<string>();
  def.routes.forEach((route: Route, i: number) => {
    const where = `routes[${i}]`;
    if (!isRecord(route)) fail(where, 'must be an object { name, match, handle }');
    if (typeof route.name !== 'string' || route.name.trim() === '') fail(`${where}.name`, 'must be a non-empty string');
    if (names.has(route.name)) fail(`${where}.name`, `repeats the route name '${route.name}'`);
    names.add(route.name);
    checkMatcher(route.match, `${where}.match`);
    if (typeof route.handle !== 'function') fail(`${where}.handle`, 'must be a function');
  });
  checkFunctions(def.stores, 'stores', STORE_NAME);
  checkFunctions(def.moves, 'moves', MOVE_NAME);
  if (def.errorBody !== undefined && typeof def.errorBody !== 'function') fail('errorBody', 'must be a function');
  if (def.scenarios !== undefined && typeof def.scenarios !== 'boolean') fail('scenarios', 'must be a boolean');
  checkSecrets(def.secrets);
  if (def.stream !== undefined) {
    const stream: unknown = def.stream;
    if (!isRecord(stream)) fail('stream', 'must be an object { open?, data, close? }');
    if (def.protocol === 'http') fail('stream', "belongs to a twin whose protocol is not 'http' (its clients speak TCP: smtp, mysql)");
    for (const key of Object.keys(stream)) {
      if (!['open', 'data', 'close'].includes(key)) fail(`stream.${key}`, 'is not a stream handler (open, data, close)');
    }
    if (typeof stream['data'] !== 'function') fail('stream.data', 'must be a function');
    for (const key of ['open', 'close']) {
      if (stream[key] !== undefined && typeof stream[key] !== 'function') fail(`stream.${key}`, 'must be a function');
    }
  }
  checkRoot(def.root);
  return def;
}

export const REFRESH_DURATION = /^[1-9][0-9]{0,8}[smhd]$/;

function checkRoot(root: unknown): void {
  if (root === undefined) return;
  if (!isRecord(root)) fail('root', 'must be an object { refresh?, start, read, ingest? }');
  for (const key of Object.keys(root)) {
    if (!['refresh', 'start', 'read', 'ingest'].includes(key)) fail(`root.${key}`, 'is not a root field (refresh, start, read, ingest)');
  }
  if (typeof root['start'] !== 'function') fail('root.start', 'must be a function');
  if (typeof root['read'] !== 'function') fail('root.read', 'must be a function');
  const refresh = root['refresh'];
  if (refresh !== undefined) {
    if (!isRecord(refresh)) fail('root.refresh', 'must be an object { atMost?, every? }');
    for (const [key, value] of Object.entries(refresh)) {
      if (key !== 'atMost' && key !== 'every') fail(`root.refresh.${key}`, 'is not a refresh field (atMost, every)');
      if (typeof value !== 'string' || !REFRESH_DURATION.test(value)) fail(`root.refresh.${key}`, "must be a duration like '30s', '5m', '1h' or '1d'");
    }
  }
  const ingest = root['ingest'];
  if (ingest !== undefined) {
    if (!isRecord(ingest)) fail('root.ingest', "must be an object { scheme: 'stripe' | 'github', event }");
    if (ingest['scheme'] !== 'stripe' && ingest['scheme'] !== 'github') fail('root.ingest.scheme', "must be 'stripe' or 'github'");
    if (typeof ingest['event'] !== 'function') fail('root.ingest.event', 'must be a function');
  }
}
