/**
 * Performing a change on the root: where it goes, and the twin's ids in it replaced by the
 * root's. A created object's real id is learnt from the root's answer, laid beside the twin's
 * own answer to the same request: wherever both carry an `id` (or GitHub's `number`) at the
 * same place and they differ, the twin's id maps to the real one, and every later change that
 * names the twin's id names the real one.
 */
import type { Change } from './types.js';

/** The ids the answers are read for: every vendor's `id`, and GitHub's issue `number`. */
const ID_FIELDS = ['id', 'number'];
const MAX_DEPTH = 6;

/**
 * The URL a change is sent to. A root's URL may name a place below the vendor's API (GitHub's
 * `https://api.github.com/repos/acme/shop`, whose changes' paths start `/repos/acme/shop/…`):
 * the part of the root's path that the change's path begins with is not repeated.
 */
export function targetUrl(rootUrl: string, change: Pick<Change, 'request'>, ids: ReadonlyMap<string, string>): string {
  const root = new URL(rootUrl);
  const rootSegments = root.pathname.split('/').filter((s) => s !== '');
  const path = mapPath(change.request.path, ids);
  const segments = path.split('/').filter((s) => s !== '');
  let overlap = 0;
  for (let k = Math.min(rootSegments.length, segments.length); k > 0; k--) {
    if (rootSegments.slice(rootSegments.length - k).join('/') === segments.slice(0, k).join('/')) {
      overlap = k;
      break;
    }
  }
  const prefix = rootSegments.slice(0, rootSegments.length - overlap);
  const url = new URL(root.origin);
  url.pathname = `/${[...prefix, ...segments].join('/')}`;
  const query = mapQuery(change.request.query, ids);
  return url.href.replace(/\?$/, '') + (query === '' ? '' : `?${query}`);
}

function mapPath(path: string, ids: ReadonlyMap<string, string>): string {
  if (ids.size === 0) return path;
  return path
    .split('/')
    .map((segment) => {
      let decoded: string;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        return segment;
      }
      const real = ids.get(decoded);
      return real === undefined ? segment : encodeURIComponent(real);
    })
    .join('/');
}

function mapQuery(query: string, ids: ReadonlyMap<string, string>): string {
  if (query === '' || ids.size === 0) return query;
  return mapForm(query, ids);
}

function mapForm(text: string, ids: ReadonlyMap<string, string>): string {
  const params = new URLSearchParams(text);
  let changed = false;
  const out = new URLSearchParams();
  for (const [k, v] of params) {
    const real = ids.get(v);
    if (real !== undefined) changed = true;
    out.append(k, real ?? v);
  }
  return changed ? out.toString() : text;
}

function mapJson(value: unknown, ids: ReadonlyMap<string, string>, depth = 0): unknown {
  if (depth > 32) return value;
  if (typeof value === 'string') return ids.get(value) ?? value;
  if (typeof value === 'number') {
    const real = ids.get(String(value));
    return real === undefined ? value : /^\d+$/.test(real) ? Number(real) : real;
  }
  if (Array.isArray(value)) return value.map((v) => mapJson(v, ids, depth + 1));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = mapJson(v, ids, depth + 1);
    return out;
  }
  return value;
}

/** The request's body with the twin's ids replaced (form or JSON; anything else as it is). */
export function mappedBody(change: Pick<Change, 'request'>, ids: ReadonlyMap<string, string>): string {
  const { body, contentType } = change.request;
  if (body === '' || ids.size === 0) return body;
  const type = (contentType ?? '').toLowerCase();
  if (type.includes('application/x-www-form-urlencoded')) return mapForm(body, ids);
  if (type.includes('json')) {
    try {
      return JSON.stringify(mapJson(JSON.parse(body), ids));
    } catch {
      return body;
    }
  }
  return body;
}

/** The twin's ids that the root's answer names otherwise, found where both answers carry them. */
export function idsLearnt(twinAnswer: unknown, realAnswer: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  walk(twinAnswer, realAnswer, 0, out);
  return out;
}

function walk(a: unknown, b: unknown, depth: number, out: Record<string, string>): void {
  if (depth > MAX_DEPTH || typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b)) return;
    for (let i = 0; i < Math.min(a.length, b.length, 100); i++) walk(a[i], b[i], depth + 1, out);
    return;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  for (const field of ID_FIELDS) {
    const mine = x[field];
    const real = y[field];
    if ((typeof mine === 'string' || typeof mine === 'number') && (typeof real === 'string' || typeof real === 'number') && String(mine) !== String(real)) {
      out[String(mine)] = String(real);
    }
  }
  for (const k of Object.keys(x)) if (k in y) walk(x[k], y[k], depth + 1, out);
}
