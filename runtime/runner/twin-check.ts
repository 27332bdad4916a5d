/**
 * A twin the host does not trust (a user's sources, an admin's install) is asked for its
 * manifest inside the sandbox, under the lane's budgets, never in V8: loading it runs its code.
 * What it answers is guest data, checked whole here before anything serves it.
 */
import { MOVE_NAME, PROTOCOL_NAME, REFRESH_DURATION, STORE_NAME, VENDOR_ID } from '../../sdk/twin/define.js';
import { KitError } from '../errors.js';
import { isPlainObject, normalizeMatcher, type NormalMatcher } from '../router/matcher.js';
import type { Segment } from '../router/pattern.js';
import type { UntrustedLane } from '../lane/types.js';
import type { TwinManifestJson } from './types.js';

/** A vendor id (defineTwin's pattern), for hosts and the CLI, which do not import the twin SDK. */
export { VENDOR_ID };

export interface UntrustedTwinCheck {
  /** Names the twin in errors: a path, or `installed twin acme`. */
  label: string;
  /** Vendor ids already served beside it: claiming one is refused. */
  served?: readonly string[];
}

/** Bounds on what a manifest may list, so a hostile one cannot make the host's router huge. */
const MAX_ROUTES = 2000;
const MAX_LIST = 256;
const MAX_TEXT = 256;

let checks = 0;

function refused(check: UntrustedTwinCheck, field: string, problem: string): KitError {
  const where = field === '' ? '' : ` ${field}`;
  return new KitError('invalid_twin', `${check.label}:${where} ${problem}`, { label: check.label, field });
}

/**
 * Loads `source` into `lane`, reads its manifest there, checks it and unloads it. Throws
 * KitError `invalid_twin` naming the label and the field (`details: { label, field }`).
 */
export async function checkUntrustedTwin(lane: UntrustedLane, source: string, check: UntrustedTwinCheck): Promise<TwinManifestJson> {
  if (typeof source !== 'string' || source.trim() === '') throw refused(check, '', 'is empty: a twin is a script defining __kit_manifest and __kit_invoke');
  const name = `twin-check-${++checks}`;
  try {
    const loaded = await lane.load(name, source, { hostCall: true });
    if ('error' in loaded) throw refused(check, '', `failed to load (${loaded.error.code}): ${loaded.error.message}`);
    return await manifestInLane(lane, name, check);
  } finally {
    await lane.unload(name);
  }
}

/** The checked manifest of a twin already loaded as context `name` in `lane` (a world serving it). */
export async function manifestInLane(lane: UntrustedLane, name: string, check: UntrustedTwinCheck): Promise<TwinManifestJson> {
  const answered = await lane.call(name, '__kit_manifest', '');
  if ('error' in answered) {
    const none = /not a function|not defined|undefined/.test(answered.error.message);
    throw refused(check, '', none
      ? 'exports no twin: the entry must `export default defineTwin({...})` (the script defines no __kit_manifest)'
      : `failed to answer its manifest (${answered.error.code}): ${answered.error.message}`);
  }
  let manifest: unknown;
  try {
    manifest = JSON.parse(answered.ok);
  } catch {
    throw refused(check, '', '__kit_manifest() did not answer JSON');
  }
  return checkManifest(manifest, check);
}

function textList(v: unknown, field: string, check: UntrustedTwinCheck, optional = false, pattern?: RegExp): string[] {
  if (v === undefined && optional) return [];
  if (!Array.isArray(v) || v.length > MAX_LIST) throw refused(check, field, `must be an array of at most ${MAX_LIST} strings`);
  return v.map((s, i) => {
    if (typeof s !== 'string' || s === '' || s.length > MAX_TEXT) throw refused(check, `${field}[${i}]`, `must be a non-empty string of at most ${MAX_TEXT} characters`);
    if (pattern !== undefined && !pattern.test(s)) throw refused(check, `${field}[${i}]`, `must match ${pattern.source} (got ${JSON.stringify(s)})`);
    return s;
  });
}

/** Checks a manifest a guest answered; exported for hosts that read one another way (a component). */
export function checkManifest(input: unknown, check: UntrustedTwinCheck): TwinManifestJson {
  if (!isPlainObject(input)) throw refused(check, '', 'answered a manifest that is not an object');
  const m = input;
  const vendor = m['vendor'];
  if (typeof vendor !== 'string' || !VENDOR_ID.test(vendor)) throw refused(check, 'vendor', `must match ${VENDOR_ID.source} (got ${JSON.stringify(vendor)})`);
  if (check.served?.includes(vendor)) throw refused(check, 'vendor', `'${vendor}' is already served here: a twin may not claim another twin's vendor id`);
  const version = m['version'];
  if (typeof version !== 'string' || version.trim() === '' || version.length > 64) throw refused(check, 'version', 'must be a non-empty string of at most 64 characters');
  const protocol = m['protocol'];
  if (typeof protocol !== 'string' || !PROTOCOL_NAME.test(protocol)) throw refused(check, 'protocol', `must match ${PROTOCOL_NAME.source}`);
  const models = m['models'];
  if (!isPlainObject(models)) throw refused(check, 'models', 'must be an object { hosts, resources, endpointEnv? }');
  const hosts = textList(models['hosts'], 'models.hosts', check);
  const resources = textList(models['resources'], 'models.resources', check);
  const endpointEnv = textList(models['endpointEnv'], 'models.endpointEnv', check, true);
  const requestScopes = m['requestScopes'] ?? [];
  if (!Array.isArray(requestScopes) || requestScopes.some((s) => s !== 'read')) throw refused(check, 'requestScopes', "may only hold 'read'");
  const routes = checkRoutes(m['routes'], check);
  const stores = textList(m['stores'] ?? [], 'stores', check, false, STORE_NAME);
  const moves = textList(m['moves'] ?? [], 'moves', check, false, MOVE_NAME);
  const scenarios = m['scenarios'] ?? false;
  if (typeof scenarios !== 'boolean') throw refused(check, 'scenarios', 'must be a boolean');
  const manifest: TwinManifestJson = {
    vendor,
    version,
    protocol,
    models: { hosts, resources, ...(models['endpointEnv'] !== undefined ? { endpointEnv } : {}) },
    requestScopes: requestScopes as 'read'[],
    routes,
    stores,
    moves,
    scenarios,
  };
  if (m['stream'] !== undefined) {
    if (typeof m['stream'] !== 'boolean') throw refused(check, 'stream', 'must be a boolean');
    if (m['stream'] && protocol === 'http') throw refused(check, 'stream', "belongs to a twin whose protocol is not 'http'");
    manifest.stream = m['stream'];
  }
  if (m['secrets'] !== undefined) manifest.secrets = checkSecrets(m['secrets'], check);
  if (m['root'] !== undefined) manifest.root = checkRoot(m['root'], check);
  return manifest;
}

function checkRoutes(input: unknown, check: UntrustedTwinCheck): TwinManifestJson['routes'] {
  if (!Array.isArray(input) || input.length > MAX_ROUTES) throw refused(check, 'routes', `must be an array of at most ${MAX_ROUTES} routes`);
  const names = new Set<string>();
  const normal: NormalMatcher[] = [];
  const routes = input.map((route: unknown, i) => {
    const field = `routes[${i}]`;
    if (!isPlainObject(route)) throw refused(check, field, 'must be an object { name, match }');
    const name = route['name'];
    if (typeof name !== 'string' || name.trim() === '' || name.length > MAX_TEXT) throw refused(check, `${field}.name`, 'must be a non-empty string');
    if (names.has(name)) throw refused(check, `${field}.name`, `repeats the route name '${name}'`);
    names.add(name);
    const matcher = normalizeMatcher(route['match']);
    if (!matcher.ok) throw refused(check, `${field}.match${matcher.field === '' ? '' : `.${matcher.field}`}`, matcher.problem);
    normal.push(matcher.value);
    return { name, match: matcher.value.matcher };
  });
  for (let later = 1; later < normal.length; later++) {
    for (let earlier = 0; earlier < later; earlier++) {
      if (shadows(normal[earlier] as NormalMatcher, normal[later] as NormalMatcher)) {
        const a = routes[earlier] as { name: string };
        const b = routes[later] as { name: string };
        throw refused(check, `routes[${later}]`, `('${b.name}') clashes with routes[${earlier}] ('${a.name}'): every request it matches, '${a.name}' takes first (${describe(normal[later] as NormalMatcher)})`);
      }
    }
  }
  return routes;
}

function sameShape(a: readonly Segment[], b: readonly Segment[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((s, i) => {
    const t = b[i] as Segment;
    return s.kind === t.kind && (s.kind !== 'literal' || s.value === (t as { value: string }).value);
  });
}

/**
 * Whether `first`, declared earlier, takes every request `later` matches: the router tries routes
 * ending at one node in declaration order, so `later` could never answer.
 */
function shadows(first: NormalMatcher, later: NormalMatcher): boolean {
  if (!sameShape(first.segments, later.segments)) return false;
  if (first.methods !== null && (later.methods === null || later.methods.some((m) => !first.methods!.includes(m)))) return false;
  const has = (list: readonly unknown[], item: unknown): boolean => list.some((x) => JSON.stringify(x) === JSON.stringify(item));
  return first.query.every((c) => has(later.query, c)) && first.headers.every((c) => has(later.headers, c)) && first.body.every((c) => has(later.body, c));
}

function describe(m: NormalMatcher): string {
  return `${m.methods === null ? 'any method' : m.methods.join('|')} ${m.matcher.path}`;
}

function checkSecrets(v: unknown, check: UntrustedTwinCheck): Record<string, true | string[]> {
  if (!isPlainObject(v)) throw refused(check, 'secrets', "must be an object { <record type>: true | ['field.path', …] }");
  const out: Record<string, true | string[]> = {};
  for (const [type, spec] of Object.entries(v)) {
    const field = `secrets[${JSON.stringify(type)}]`;
    if (type === '' || type.length > MAX_TEXT) throw refused(check, field, 'names no record type');
    if (spec === true) {
      out[type] = true;
      continue;
    }
    const paths = textList(spec, field, check);
    if (paths.length === 0 || paths.some((p) => p.split('.').some((part) => part === ''))) throw refused(check, field, "must be true or a non-empty array of field paths like 'config.secret'");
    out[type] = paths;
  }
  return out;
}

function checkRoot(v: unknown, check: UntrustedTwinCheck): NonNullable<TwinManifestJson['root']> {
  if (!isPlainObject(v)) throw refused(check, 'root', 'must be an object { refresh, ingest? }');
  const refresh = v['refresh'] ?? {};
  if (!isPlainObject(refresh)) throw refused(check, 'root.refresh', 'must be an object { atMost?, every? }');
  const out: NonNullable<TwinManifestJson['root']> = { refresh: {} };
  for (const [key, value] of Object.entries(refresh)) {
    if (key !== 'atMost' && key !== 'every') throw refused(check, `root.refresh.${key}`, 'is not a refresh field (atMost, every)');
    if (typeof value !== 'string' || !REFRESH_DURATION.test(value)) throw refused(check, `root.refresh.${key}`, "must be a duration like '30s' or '5m'");
    out.refresh[key] = value;
  }
  const ingest = v['ingest'];
  if (ingest !== undefined) {
    if (ingest !== 'stripe' && ingest !== 'github') throw refused(check, 'root.ingest', "must be 'stripe' or 'github'");
    out.ingest = ingest;
  }
  return out;
}
