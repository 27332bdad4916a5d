/**
 * Matchers as plain data: validation into a normal form, and the checks of the
 * query, header and body parts. Everything here walks own properties only, so a
 * request cannot reach `constructor` or `__proto__` through a matcher.
 */

import type { Matcher } from '../../sdk/twin/types.js';
import { clip, parsePattern, type Segment } from './pattern.js';
import { getOwn } from './query.js';

export const MAX_VALUE_DEPTH = 32;
const METHOD = /^[A-Z][A-Z-]{0,31}$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export type Condition = readonly [name: string, want: string | true];
export type BodyCondition = readonly [path: readonly string[], dotted: string, want: unknown];

/** A matcher checked and put in normal form: upper-case methods, lower-case header names. */
export interface NormalMatcher {
  matcher: Matcher;
  segments: Segment[];
  /** null: any method. */
  methods: string[] | null;
  query: Condition[];
  headers: Condition[];
  body: BodyCondition[];
}

export type MatcherProblem = { field: string; problem: string };

const MATCHER_KEYS = new Set(['method', 'path', 'query', 'headers', 'body']);

/**
 * Checks a matcher from outside (a twin manifest or a scenario document). Numbers and
 * booleans other than `true` in `query`/`headers` are taken as their string form,
 * because YAML reads `limit: 3` as a number while the request carries `"3"`.
 */
export function normalizeMatcher(input: unknown): { ok: true; value: NormalMatcher } | ({ ok: false } & MatcherProblem) {
  if (!isPlainObject(input)) return { ok: false, field: '', problem: 'must be an object with a path' };
  for (const key of Object.keys(input)) {
    if (!MATCHER_KEYS.has(key)) return { ok: false, field: key, problem: `unknown field (a matcher has ${[...MATCHER_KEYS].join(', ')})` };
  }
  const pattern = parsePattern(getOwn(input, 'path'));
  if (!pattern.ok) return { ok: false, field: 'path', problem: pattern.problem };
  const matcher: Matcher = { path: input['path'] as string };

  let methods: string[] | null = null;
  const rawMethod = getOwn(input, 'method');
  if (rawMethod !== undefined) {
    const list = Array.isArray(rawMethod) ? rawMethod : [rawMethod];
    if (list.length === 0) return { ok: false, field: 'method', problem: 'must name at least one method (leave it out for any method)' };
    methods = [];
    for (let i = 0; i < list.length; i++) {
      const m = list[i];
      const field = Array.isArray(rawMethod) ? `method[${i}]` : 'method';
      if (typeof m !== 'string' || !METHOD.test(m.toUpperCase())) return { ok: false, field, problem: 'must be an HTTP method such as GET or POST' };
      const upper = m.toUpperCase();
      if (!methods.includes(upper)) methods.push(upper);
    }
    matcher.method = Array.isArray(rawMethod) ? methods.slice() : (methods[0] as string);
  }

  const query = conditions(getOwn(input, 'query'), 'query', false);
  if (!query.ok) return query;
  if (query.record) matcher.query = query.record;
  const headers = conditions(getOwn(input, 'headers'), 'headers', true);
  if (!headers.ok) return headers;
  if (headers.record) matcher.headers = headers.record;

  const body: BodyCondition[] = [];
  const rawBody = getOwn(input, 'body');
  if (rawBody !== undefined) {
    if (!isPlainObject(rawBody)) return { ok: false, field: 'body', problem: 'must be an object of dotted paths (card.number) to values' };
    const record: Record<string, unknown> = {};
    for (const [dotted, want] of Object.entries(rawBody)) {
      const path = dotted.split('.');
      if (dotted.length === 0 || path.some((p) => p.length === 0)) return { ok: false, field: `body.${dotted}`, problem: 'a body path is names or indexes joined by "." (card.number, items.0.price)' };
      if (path.some((p) => FORBIDDEN_KEYS.has(p))) return { ok: false, field: `body.${dotted}`, problem: '__proto__, constructor and prototype cannot be matched' };
      const bad = checkJsonValue(want, 0);
      if (bad !== null) return { ok: false, field: `body.${dotted}`, problem: bad };
      body.push([path, dotted, want]);
      record[dotted] = want;
    }
    matcher.body = record;
  }
  return {
    ok: true,
    value: {
      matcher,
      segments: pattern.segments,
      methods,
      query: query.list,
      headers: headers.list,
      body,
    },
  };
}

function conditions(
  raw: unknown,
  field: 'query' | 'headers',
  lower: boolean,
): { ok: true; list: Condition[]; record: Record<string, string | true> | null } | ({ ok: false } & MatcherProblem) {
  if (raw === undefined) return { ok: true, list: [], record: null };
  if (!isPlainObject(raw)) return { ok: false, field, problem: `must be an object of names to a value, or true for "present"` };
  const list: Condition[] = [];
  const record: Record<string, string | true> = {};
  for (const [rawName, want] of Object.entries(raw)) {
    const name = lower ? rawName.toLowerCase() : rawName;
    if (name.length === 0) return { ok: false, field, problem: 'names must not be empty' };
    if (lower && !HEADER_NAME.test(name)) return { ok: false, field: `${field}.${rawName}`, problem: 'is not a valid header name' };
    let value: string | true;
    if (want === true) value = true;
    else if (typeof want === 'string') value = want;
    else if (typeof want === 'number' && Number.isFinite(want)) value = String(want);
    else return { ok: false, field: `${field}.${rawName}`, problem: 'must be a string (compared as a string), or true for "present"' };
    list.push([name, value]);
    Object.defineProperty(record, name, { value, enumerable: true, writable: true, configurable: true });
  }
  return { ok: true, list, record };
}

/** Why a value is not plain JSON data of bounded depth, or null when it is. */
export function checkJsonValue(value: unknown, depth: number): string | null {
  if (depth > MAX_VALUE_DEPTH) return `nests deeper than ${MAX_VALUE_DEPTH} levels`;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return null;
  if (typeof value === 'number') return Number.isFinite(value) ? null : 'numbers must be finite';
  if (Array.isArray(value)) {
    for (const v of value) {
      const bad = checkJsonValue(v, depth + 1);
      if (bad !== null) return bad;
    }
    return null;
  }
  if (isPlainObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (k === '__proto__') return '__proto__ is not allowed as a key';
      const bad = checkJsonValue(v, depth + 1);
      if (bad !== null) return bad;
    }
    return null;
  }
  return 'must be JSON data (null, boolean, number, string, array or object)';
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** The query or header value a condition looks at; a repeated query name gives its values. */
export function failsCondition(have: unknown, want: string | true): boolean {
  if (have === undefined) return true;
  if (want === true) return false;
  if (typeof have === 'string') return have !== want;
  if (Array.isArray(have)) return !have.includes(want);
  return true;
}

/** Walks a dotted body path over own properties of objects and arrays. */
export function bodyAt(body: unknown, path: readonly string[]): unknown {
  let cur = body;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = getOwn(cur, key);
  }
  return cur;
}

/**
 * Body equality: deep over arrays and objects; a number or boolean in the matcher also
 * equals its string form, because form-encoded bodies (Stripe's SDK) carry every
 * value as a string.
 */
export function bodyEquals(want: unknown, have: unknown): boolean {
  if (want === have) return true;
  if (typeof want === 'number' || typeof want === 'boolean') return typeof have === 'string' && String(want) === have;
  if (Array.isArray(want)) {
    if (!Array.isArray(have) || have.length !== want.length) return false;
    for (let i = 0; i < want.length; i++) if (!bodyEquals(want[i], have[i])) return false;
    return true;
  }
  if (want !== null && typeof want === 'object') {
    if (have === null || typeof have !== 'object' || Array.isArray(have)) return false;
    const wantKeys = Object.keys(want);
    if (Object.keys(have).length !== wantKeys.length) return false;
    for (const k of wantKeys) {
      if (!Object.prototype.hasOwnProperty.call(have, k)) return false;
      if (!bodyEquals((want as Record<string, unknown>)[k], (have as Record<string, unknown>)[k])) return false;
    }
    return true;
  }
  return false;
}

/** A value for a detail message: JSON, clipped. */
export function show(v: unknown): string {
  if (v === undefined) return 'missing';
  let text: string;
  try {
    text = JSON.stringify(v) ?? String(v);
  } catch {
    text = String(v);
  }
  return clip(text, 80);
}
