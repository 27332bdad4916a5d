/**
 * Performing a change on the root: where it goes, and the twin's ids in it replaced by the
 * root's. A created object's real id is learnt from the root's answer, laid beside the twin's
 * own answer to the same request: wherever both carry an `id` (or GitHub's `number`) at the
 * same place and they differ, the twin's id maps to the real one, and every later change that
 * names the twin's id names the real one.
 *
 * An id of letters (Stripe's `prod_…`) names one object wherever it appears, and maps as it
 * is. A counted id (GitHub's label, hook, issue numbers: each kind counted on its own) names
 * an object only within its collection, so it maps under the path segment that names the
 * collection, `labels/3`: label 3 of the twin being label 4 of the repository says nothing
 * of issue 3.
 */
import type { Change, ChangeRequest } from './types.js';

/** The ids the answers are read for: every vendor's `id`, and GitHub's issue `number`. */
const ID_FIELDS = ['id', 'number'];
const MAX_DEPTH = 6;
const COUNTED = /^\d+$/;

/** The map's key of a counted id: its collection and the id (`labels/3`). */
function countedKey(collection: string, id: string): string {
  return `${collection}/${id}`;
}

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
  let previous = '';
  return path
    .split('/')
    .map((segment) => {
      let decoded: string;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        previous = segment;
        return segment;
      }
      const real = COUNTED.test(decoded) ? ids.get(countedKey(previous, decoded)) : ids.get(decoded);
      previous = decoded;
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
    const real = COUNTED.test(v) ? undefined : ids.get(v);
    if (real !== undefined) changed = true;
    out.append(k, real ?? v);
  }
  return changed ? out.toString() : text;
}

/**
 * A string id maps as it is; a counted one only under a field that names its collection
 * (`"milestone": 3` → `milestones/3`, `"hook_id": 7` → `hooks/7`, GitHub's convention), never
 * as any number of the body.
 */
function mapJson(value: unknown, ids: ReadonlyMap<string, string>, field = '', depth = 0): unknown {
  if (depth > 32) return value;
  if ((typeof value === 'string' && COUNTED.test(value)) || typeof value === 'number') {
    const kind = field.endsWith('_id') ? field.slice(0, -3) : field;
    const real = ids.get(countedKey(`${kind}s`, String(value))) ?? ids.get(countedKey(kind, String(value)));
    return real === undefined ? value : typeof value === 'number' && COUNTED.test(real) ? Number(real) : real;
  }
  if (typeof value === 'string') return ids.get(value) ?? value;
  if (Array.isArray(value)) return value.map((v) => mapJson(v, ids, field, depth + 1));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = mapJson(v, ids, k, depth + 1);
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

/** A field whose value is a secret the root answers once (Stripe's webhook signing secret, a client secret). */
const SECRET_FIELD = /(^|_)secret$/;

/** Whether a field is named as a secret (`secret`, `client_secret`); a form's key by its last part (`webhook[secret]`). */
export function isSecretField(name: string): boolean {
  const last = /\[([^\]]*)\]$/.exec(name);
  return SECRET_FIELD.test(last === null ? name : last[1]!);
}

/**
 * The root's answer as a receipt keeps it: every string under a secret's field name replaced.
 * Receipts are read with a read token, and pushed on to other worlds; a webhook endpoint's
 * signing secret in them would let their readers sign webhooks as the vendor.
 */
export function withheldSecrets(value: unknown, depth = 0): unknown {
  if (depth > 32 || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((v) => withheldSecrets(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = isSecretField(k) && typeof v === 'string' && v !== '' ? '[withheld]' : withheldSecrets(v, depth + 1);
  return out;
}

/**
 * The twin's ids that the root's answer names otherwise, found where both answers carry them:
 * string ids at any depth; counted ids only of what a POST made (the answer itself, or each
 * object of an answered list), under the collection its path names (`POST …/labels` → `labels`),
 * an answer's `number` before its `id` (GitHub's paths name an issue by its number).
 */
export function idsLearnt(request: Pick<ChangeRequest, 'method' | 'path'>, twinAnswer: unknown, realAnswer: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  walk(twinAnswer, realAnswer, 0, out);
  const collection = request.method === 'POST' ? request.path.split('/').filter((s) => s !== '' && !COUNTED.test(s)).pop() : undefined;
  if (collection !== undefined) {
    const pairs = Array.isArray(twinAnswer) && Array.isArray(realAnswer) ? twinAnswer.slice(0, 100).map((a, i) => [a, realAnswer[i]]) : [[twinAnswer, realAnswer]];
    for (const [a, b] of pairs) {
      if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) continue;
      const x = a as Record<string, unknown>;
      const y = b as Record<string, unknown>;
      const field = counted(x['number']) !== null ? 'number' : 'id';
      const mine = counted(x[field]);
      const real = counted(y[field]);
      if (mine !== null && real !== null && mine !== real) out[countedKey(collection, mine)] = real;
    }
  }
  return out;
}

function counted(v: unknown): string | null {
  return (typeof v === 'number' || typeof v === 'string') && COUNTED.test(String(v)) ? String(v) : null;
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
    if (typeof mine === 'string' && !COUNTED.test(mine) && (typeof real === 'string' || typeof real === 'number') && mine !== String(real)) {
      out[mine] = String(real);
    }
  }
  for (const k of Object.keys(x)) if (k in y) walk(x[k], y[k], depth + 1, out);
}
