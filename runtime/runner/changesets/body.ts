/**
 * A changeset's hash and a pushed body read back: canonical JSON of what the changes do,
 * hashed with SHA-256; a body from outside checked field by field (it may be anything).
 */
import { createHash } from 'node:crypto';
import { KitError } from '../../errors.js';
import { canonicalJson } from '../../world/canonical.js';
import { replayedHeaders } from './store.js';
import type { Change, ChangeRequest, RecordChange, StoredChangeset } from './types.js';

export const CHANGESET_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
/** A pushed body's size and length: a changeset is reviewed by people, and pushed whole in one transaction. */
export const MAX_CHANGESET_BYTES = 32 * 1024 * 1024;
export const MAX_CHANGES = 20_000;
const MAX_MESSAGE = 2000;
const TWIN = /^[a-z][a-z0-9-]{0,63}$/;

/** What the hash covers. */
export function hashOf(c: Pick<StoredChangeset, 'name' | 'message' | 'from' | 'base' | 'changes'>): string {
  const body = {
    name: c.name,
    message: c.message,
    from: c.from,
    base: c.base,
    changes: c.changes.map((ch) => ({ twin: ch.twin, request: ch.request, status: ch.status, answer: ch.answer, writes: ch.writes })),
  };
  return `sha256:${createHash('sha256').update(canonicalJson(body)).digest('base64url')}`;
}

export function checkMessage(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > MAX_MESSAGE) {
    throw new KitError('invalid_changeset', `A changeset's message is text of 1 to ${MAX_MESSAGE} characters.`, { param: 'message' });
  }
  return value;
}

export function checkName(value: unknown): string {
  if (typeof value !== 'string' || !CHANGESET_NAME.test(value)) {
    throw new KitError('invalid_changeset', "A changeset's name matches ^[a-z0-9][a-z0-9._-]{0,63}$.", { param: 'name' });
  }
  return value;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function bad(message: string, param: string): KitError {
  return new KitError('invalid_changeset', message, { param });
}

function text(v: unknown, param: string, max: number): string {
  if (typeof v !== 'string' || v.length > max) throw bad(`${param} is text of at most ${max} characters`, param);
  return v;
}

function readRequest(v: unknown, at: string): ChangeRequest {
  if (!isObject(v)) throw bad(`${at}.request is { method, path, query, contentType, body }`, `${at}.request`);
  const method = text(v['method'], `${at}.request.method`, 16);
  if (!/^(POST|PUT|PATCH|DELETE)$/.test(method)) throw bad(`${at}.request.method is POST, PUT, PATCH or DELETE`, `${at}.request.method`);
  const path = text(v['path'], `${at}.request.path`, 4096);
  if (!path.startsWith('/') || /[\s#?]/.test(path)) throw bad(`${at}.request.path is a path starting with /, without query or spaces`, `${at}.request.path`);
  const contentType = v['contentType'] === null ? null : text(v['contentType'], `${at}.request.contentType`, 200);
  const out: ChangeRequest = { method, path, query: text(v['query'] ?? '', `${at}.request.query`, 16384), contentType, body: text(v['body'] ?? '', `${at}.request.body`, 4 * 1024 * 1024) };
  if (v['headers'] !== undefined) {
    const given = v['headers'];
    if (!isObject(given) || Object.keys(given).length > 20) throw bad(`${at}.request.headers is at most 20 headers`, `${at}.request.headers`);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(given)) {
      if (!/^[a-z0-9!#$%&'*+.^_`|~-]{1,64}$/.test(name) || typeof value !== 'string' || value.length > 1024 || /[\r\n\0]/.test(value)) throw bad(`${at}.request.headers.${name.slice(0, 40)} is not a header this world replays`, `${at}.request.headers`);
      headers[name] = value;
    }
    // What a deploy never sends again stays out, whoever made the body.
    const kept = replayedHeaders(headers);
    if (kept !== undefined) out.headers = kept;
  }
  return out;
}

function readWrites(v: unknown, at: string): RecordChange[] {
  if (!Array.isArray(v) || v.length > 10_000) throw bad(`${at}.writes is a list of { type, id, before, after }`, `${at}.writes`);
  return v.map((w, i) => {
    if (!isObject(w) || !('after' in w)) throw bad(`${at}.writes[${i}] is { type, id, before, after }`, `${at}.writes`);
    return { type: text(w['type'], `${at}.writes[${i}].type`, 256), id: text(w['id'], `${at}.writes[${i}].id`, 1024), before: w['before'] ?? null, after: w['after'] ?? null };
  });
}

/**
 * A changeset pushed from outside: every field checked, its hash computed again and compared
 * with the one it carries (a body changed on the way, or a forged hash, is refused).
 */
export function readPushedChangeset(body: unknown, twins: ReadonlySet<string>): Omit<StoredChangeset, 'origin' | 'landedAt' | 'pushed' | 'verifications' | 'approvals' | 'receipts' | 'seq'> {
  if (!isObject(body)) throw bad('Send the changeset as a JSON object, as GET …/changesets/<name> answers it.', 'changeset');
  const name = checkName(body['name']);
  const message = checkMessage(body['message']);
  const from = text(body['from'] ?? '', 'from', 300);
  const cutAt = typeof body['cutAt'] === 'string' ? body['cutAt'] : '';
  const base = body['base'];
  if (!isObject(base)) throw bad('base is { <twin>: <position> }', 'base');
  const checkedBase: Record<string, number> = {};
  for (const [twin, position] of Object.entries(base)) {
    if (!TWIN.test(twin)) throw bad(`base names '${twin.slice(0, 64)}', which is no twin name`, 'base');
    if (!Number.isSafeInteger(position) || (position as number) < 0) throw bad(`base.${twin} is a position (a whole number)`, 'base');
    checkedBase[twin] = position as number;
  }
  const changes = body['changes'];
  if (!Array.isArray(changes) || changes.length === 0) throw bad('changes is a non-empty list', 'changes');
  if (changes.length > MAX_CHANGES) throw new KitError('changeset_too_large', `A changeset holds at most ${MAX_CHANGES} changes.`, { limit: MAX_CHANGES });
  const read: Change[] = changes.map((c, index) => {
    const at = `changes[${index}]`;
    if (!isObject(c)) throw bad(`${at} is a change`, at);
    const twin = text(c['twin'], `${at}.twin`, 64);
    if (!twins.has(twin)) throw bad(`${at}.twin '${twin}' is no twin of this world`, `${at}.twin`);
    if (!(twin in checkedBase)) throw bad(`${at}.twin '${twin}' has no base position`, 'base');
    const status = c['status'];
    if (!Number.isInteger(status) || (status as number) < 100 || (status as number) > 599) throw bad(`${at}.status is an HTTP status`, `${at}.status`);
    return {
      index,
      twin,
      request: readRequest(c['request'], at),
      status: status as number,
      answer: c['answer'] ?? null,
      writes: readWrites(c['writes'], at),
      occurredAt: typeof c['occurredAt'] === 'string' ? c['occurredAt'] : '',
      state: 'landed',
      position: null,
    };
  });
  const claimed = body['contentHash'];
  if (typeof claimed !== 'string') throw bad('contentHash is the hash the changeset was cut with', 'contentHash');
  const out = { name, message, from, cutAt, base: checkedBase, changes: read, contentHash: claimed };
  const computed = hashOf(out);
  if (computed !== claimed) {
    throw new KitError('changeset_hash_mismatch', `The changeset's contentHash does not match its body (computed ${computed}); it was changed after it was cut, or its hash was forged.`, { computed, claimed: claimed.slice(0, 100) });
  }
  return out;
}
