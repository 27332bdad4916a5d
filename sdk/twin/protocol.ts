/**
 * Reading what a guest answered from `__kit_invoke`. The guest runtime always answers the
 * right shape, but the script in a context is twin or scenario code, which can redefine
 * `__kit_invoke` itself: the host checks the shape before it commits anything. Pure (no
 * Node APIs), so any host can use it.
 */
import type { TwinResponse } from './types.js';

export interface GuestRecordWrite {
  type: string;
  id: string;
  /** null deletes the record. */
  value: unknown;
}

export interface GuestEvent {
  type: string;
  data: unknown;
}

/** A response as it crossed: with `readGuestOutput(text, { rawBody: true })`, a JSON body stays text in `bodyJson`. */
export type GuestResponse = TwinResponse & { bodyJson?: string };

/** `__kit_invoke`'s answer, checked. */
export interface GuestOutput {
  response?: GuestResponse;
  writes: GuestRecordWrite[];
  events: GuestEvent[];
  thrown?: { message: string; stack?: string };
}

export type GuestOutputResult = { ok: GuestOutput } | { error: string };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function nonEmpty(v: unknown): v is string {
  return typeof v === 'string' && v !== '';
}

/**
 * Parses and checks `__kit_invoke`'s answer; an error names what is wrong, never throws.
 *
 * The answer is JSON; when `response.bodyFollows` is set, a newline and the response body's own
 * JSON text come after it (JSON text holds no raw newline). With `rawBody` that body is kept as
 * text in `response.bodyJson`, for a host that only sends it on; otherwise it is parsed into
 * `response.body`.
 */
export function readGuestOutput(text: unknown, options?: { rawBody?: boolean }): GuestOutputResult {
  if (typeof text !== 'string') return { error: '__kit_invoke answered no string' };
  const newline = text.indexOf('\n');
  const bodyText = newline === -1 ? undefined : text.slice(newline + 1);
  let v: unknown;
  try {
    v = JSON.parse(newline === -1 ? text : text.slice(0, newline));
  } catch {
    return { error: '__kit_invoke answered text that is not JSON' };
  }
  if (!isRecord(v)) return { error: '__kit_invoke answered no object' };
  const out: GuestOutput = { writes: [], events: [] };

  if (v['response'] !== undefined) {
    const response = checkResponse(v['response'], bodyText, options);
    if ('error' in response) return response;
    out.response = response.ok;
  }
  if (bodyText !== undefined && out.response?.body === undefined && out.response?.bodyJson === undefined) {
    return { error: '__kit_invoke answered text after its JSON' };
  }

  const writes = checkWrites(v['writes']);
  if ('error' in writes) return writes;
  out.writes = writes.ok;
  const events = checkEvents(v['events']);
  if ('error' in events) return events;
  out.events = events.ok;

  if (v['thrown'] !== undefined) {
    const t = v['thrown'];
    if (!isRecord(t) || typeof t['message'] !== 'string' || (t['stack'] !== undefined && typeof t['stack'] !== 'string')) return { error: 'thrown is not { message, stack? }' };
    out.thrown = t['stack'] === undefined ? { message: t['message'] } : { message: t['message'], stack: t['stack'] as string };
  }
  return { ok: out };
}

/**
 * Checks a response a guest answered: in its JSON, or (from an engine sharing the host's heap)
 * as a value, with the body's JSON text beside it when `bodyFollows` is set.
 */
export function checkResponse(r: unknown, bodyText: string | undefined, options?: { rawBody?: boolean }): { ok: GuestResponse } | { error: string } {
  if (!isRecord(r)) return { error: 'response is not an object' };
  const response: GuestResponse = {};
  if (r['status'] !== undefined) {
    const status = r['status'];
    if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599) return { error: 'response.status is not an integer 100..599' };
    response.status = status;
  }
  if (r['headers'] !== undefined) {
    const headers = r['headers'];
    if (!isRecord(headers) || !Object.values(headers).every((h) => typeof h === 'string')) return { error: 'response.headers is not an object of strings' };
    response.headers = headers as Record<string, string>;
  }
  if (r['bodyBase64'] !== undefined) {
    if (typeof r['bodyBase64'] !== 'string') return { error: 'response.bodyBase64 is not a string' };
    response.bodyBase64 = r['bodyBase64'];
  }
  if (r['body'] !== undefined) response.body = r['body'];
  if (r['bodyFollows'] === true) {
    if (bodyText === undefined) return { error: 'response.bodyFollows, but no body follows the answer' };
    if (options?.rawBody === true) response.bodyJson = bodyText;
    else {
      try {
        response.body = JSON.parse(bodyText);
      } catch {
        return { error: 'the response body that follows the answer is not JSON' };
      }
    }
  }
  return { ok: response };
}

/** `readGuestOutput` for tests and tools: the checked answer, or an Error naming what is wrong. */
export function parseGuestOutput(text: unknown): GuestOutput {
  const read = readGuestOutput(text);
  if ('error' in read) throw new Error(read.error);
  return read.ok;
}

/** Checks the writes a guest answered (in its JSON, or as values beside it). */
export function checkWrites(writes: unknown): { ok: GuestRecordWrite[] } | { error: string } {
  if (!Array.isArray(writes)) return { error: 'writes is not an array' };
  const out: GuestRecordWrite[] = [];
  for (let i = 0; i < writes.length; i++) {
    const w: unknown = writes[i];
    if (!isRecord(w) || !nonEmpty(w['type']) || !nonEmpty(w['id']) || !('value' in w) || w['value'] === undefined) {
      return { error: `writes[${i}] is not { type, id, value }` };
    }
    out.push({ type: w['type'], id: w['id'], value: w['value'] });
  }
  return { ok: out };
}

/** Checks the events a guest answered (in its JSON, or as values beside it). */
export function checkEvents(events: unknown): { ok: GuestEvent[] } | { error: string } {
  if (!Array.isArray(events)) return { error: 'events is not an array' };
  const out: GuestEvent[] = [];
  for (let i = 0; i < events.length; i++) {
    const e: unknown = events[i];
    if (!isRecord(e) || !nonEmpty(e['type'])) return { error: `events[${i}] is not { type, data }` };
    out.push({ type: e['type'], data: e['data'] === undefined ? null : e['data'] });
  }
  return { ok: out };
}
