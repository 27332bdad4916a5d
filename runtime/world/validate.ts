import { KitError } from '../errors.js';
import { LONG_ID_UNITS, storableId } from '../../sdk/twin/storable.js';
import type { EntryCause, EntryDraft, RecordWrite } from './types.js';

/** World names: also used in branch names `<world>-<label>-<4 hex>` and in URLs. */
const WORLD_NAME = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,254}$/;
/** Twin names are vendor ids (`stripe`, `s3`); never starting with `#`, which marks internal keys. */
const TWIN_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const LABEL = /^[a-z0-9][a-z0-9-]{0,39}$/;
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** Byte caps keep every storage key under lmdb's 1978-byte limit. */
export const MAX_TYPE_BYTES = 256;
export const MAX_ID_BYTES = 1024;
export const MAX_WRITES = 10_000;

export function checkWorldName(name: unknown): string {
  if (typeof name !== 'string' || !WORLD_NAME.test(name)) {
    throw new KitError('bad_request', `a world name is 1 to 255 of A-Z a-z 0-9 . _ / - starting with a letter or digit`, { param: 'name' });
  }
  return name;
}

export function checkTwinName(twin: unknown): string {
  if (typeof twin !== 'string' || !TWIN_NAME.test(twin)) {
    throw new KitError('invalid_twin', `a twin name is 1 to 64 of a-z 0-9 _ - starting with a letter or digit`, { param: 'twin' });
  }
  return twin;
}

export function checkLabel(label: unknown): string {
  if (typeof label !== 'string' || !LABEL.test(label)) {
    throw new KitError('invalid_label', 'a label matches ^[a-z0-9][a-z0-9-]{0,39}$', { param: 'label' });
  }
  return label;
}

export function checkTtl(ttl: unknown): number {
  if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 60 || ttl > 2_592_000) {
    throw new KitError('invalid_ttl', 'ttl is a whole number of seconds from 60 to 2592000', { param: 'ttl' });
  }
  return ttl;
}

export function checkLimit(limit: unknown, fallback: number, max: number): number {
  if (limit === undefined) return fallback;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > max) {
    throw new KitError('invalid_limit', `limit is a whole number from 1 to ${max}`, { param: 'limit' });
  }
  return limit;
}

/** A position argument: a whole number >= 0. Whether it exists is the caller's check. */
export function checkPosition(position: unknown, param = 'at'): number {
  if (typeof position !== 'number' || !Number.isSafeInteger(position) || position < 0) {
    throw new KitError('invalid_position', 'a position is a whole number >= 0', { param });
  }
  return position;
}

/** What a type or id may not hold (sdk/twin/storable.ts). */
const STORABLE_RULE = `, with no lone surrogate, and one of ${LONG_ID_UNITS} or more UTF-16 units holds no U+0000–U+0004`;

export function checkRecordType(type: unknown): string {
  if (typeof type !== 'string' || type.length === 0 || Buffer.byteLength(type) > MAX_TYPE_BYTES || !storableId(type)) {
    throw new KitError('bad_request', `a record type is a non-empty string of at most ${MAX_TYPE_BYTES} bytes${STORABLE_RULE}`, { param: 'type' });
  }
  return type;
}

/** Whether a string is an id a record can have: not empty, at most MAX_ID_BYTES of UTF-8, storable in a key. */
export function isRecordId(id: string): boolean {
  // Up to MAX_ID_BYTES / 3 UTF-16 units cannot pass the limit; only longer ids are measured.
  return id.length > 0 && (id.length <= MAX_ID_BYTES / 3 || Buffer.byteLength(id) <= MAX_ID_BYTES) && storableId(id);
}

export function checkRecordId(id: unknown, param = 'id'): string {
  if (typeof id !== 'string' || !isRecordId(id)) {
    throw new KitError('bad_request', `a record id is a non-empty string of at most ${MAX_ID_BYTES} bytes${STORABLE_RULE}`, { param });
  }
  return id;
}

/** The trace-id part of a W3C traceparent. */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  return traceparent === undefined ? undefined : traceparent.slice(3, 35);
}

export function checkTraceId(trace: unknown): string {
  if (typeof trace !== 'string' || !/^[0-9a-f]{32}$/.test(trace)) {
    throw new KitError('bad_request', 'trace is a W3C trace id: 32 lower-case hex digits', { param: 'trace' });
  }
  return trace;
}

const CAUSE_KINDS = new Set(['request', 'move', 'ingest', 'refresh', 'push', 'pull', 'system']);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A draft as the engine stores it, or bad_request. Drafts carry what a sandboxed handler
 * wrote, so their shape is checked, not trusted.
 */
export function checkDraft(draft: unknown): EntryDraft {
  const bad = (message: string, param: string): KitError => new KitError('bad_request', message, { param });
  if (!isObject(draft)) throw bad('an entry draft is an object', 'draft');
  const cause = draft.cause;
  if (!isObject(cause) || typeof cause.kind !== 'string' || !CAUSE_KINDS.has(cause.kind)) {
    throw bad('an entry cause has a kind: request, move, ingest, refresh, push, pull or system', 'cause');
  }
  if (!Array.isArray(draft.writes)) throw bad('writes is an array', 'writes');
  if (draft.writes.length > MAX_WRITES) throw bad(`at most ${MAX_WRITES} writes in one entry`, 'writes');
  const writes: RecordWrite[] = [];
  for (const w of draft.writes as unknown[]) {
    if (!isObject(w)) throw bad('a write is { type, id, value }', 'writes');
    const type = checkRecordType(w.type);
    const id = checkRecordId(w.id);
    if (w.value === undefined) throw bad('a write has a value (null deletes)', 'writes');
    writes.push({ type, id, value: w.value });
  }
  const out: EntryDraft = { cause: cause as unknown as EntryCause, writes };
  if (draft.events !== undefined) {
    if (!Array.isArray(draft.events)) throw bad('events is an array', 'events');
    for (const e of draft.events as unknown[]) {
      if (!isObject(e) || typeof e.type !== 'string') throw bad('an event is { type, data }', 'events');
    }
    out.events = draft.events as EntryDraft['events'];
  }
  if (draft.traceparent !== undefined) {
    if (typeof draft.traceparent !== 'string' || !TRACEPARENT.test(draft.traceparent)) {
      throw bad('traceparent is a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>)', 'traceparent');
    }
    out.traceparent = draft.traceparent;
  }
  if (draft.occurredAt !== undefined) {
    if (typeof draft.occurredAt !== 'string') throw new KitError('invalid_instant', 'occurredAt is an ISO 8601 instant', { param: 'occurredAt' });
    out.occurredAt = draft.occurredAt;
  }
  return out;
}
