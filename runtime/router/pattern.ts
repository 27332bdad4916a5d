/**
 * Path patterns: literal segments, `:name` parameters and a trailing `*name` (or bare `*`)
 * for the rest of the path. No regular expressions anywhere, so no pattern can be
 * catastrophic.
 */

import { decodeStrict } from './query.js';

export type Segment =
  | { kind: 'literal'; value: string }
  | { kind: 'param'; name: string }
  | { kind: 'rest'; name: string | null };

export const MAX_PATTERN_LENGTH = 2048;
export const MAX_PATTERN_SEGMENTS = 64;

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// Characters that can never appear in a request path as the runner hands it over.
const FORBIDDEN = /[\s?#\u0000-\u001f\u007f]/;

/** Parses a path pattern, or answers why it is not one. */
export function parsePattern(pattern: unknown): { ok: true; segments: Segment[] } | { ok: false; problem: string } {
  if (typeof pattern !== 'string') return { ok: false, problem: 'must be a string such as /v1/customers/:id' };
  if (!pattern.startsWith('/')) return { ok: false, problem: `must start with "/" (got "${clip(pattern)}")` };
  if (pattern.length > MAX_PATTERN_LENGTH) return { ok: false, problem: `must be at most ${MAX_PATTERN_LENGTH} characters` };
  if (FORBIDDEN.test(pattern)) return { ok: false, problem: 'must not contain spaces, control characters, "?" or "#" (match the query with `query`)' };
  const raw = pattern.slice(1).split('/');
  if (raw.length > MAX_PATTERN_SEGMENTS) return { ok: false, problem: `must have at most ${MAX_PATTERN_SEGMENTS} segments` };
  const segments: Segment[] = [];
  const names = new Set<string>();
  for (let i = 0; i < raw.length; i++) {
    const s = raw[i] as string;
    if (s.startsWith(':')) {
      const name = s.slice(1);
      if (!NAME.test(name)) return { ok: false, problem: `segment ${i + 1} "${clip(s)}": a parameter is ":" and a name of letters, digits and "_"` };
      if (names.has(name)) return { ok: false, problem: `parameter "${name}" appears twice` };
      names.add(name);
      segments.push({ kind: 'param', name });
    } else if (s.startsWith('*')) {
      const name = s.slice(1);
      if (i !== raw.length - 1) return { ok: false, problem: `segment ${i + 1} "${clip(s)}": "*" takes the rest of the path, so it must be the last segment` };
      if (name !== '' && !NAME.test(name)) return { ok: false, problem: `segment ${i + 1} "${clip(s)}": "*" is followed by a name of letters, digits and "_", or nothing` };
      if (names.has(name)) return { ok: false, problem: `parameter "${name}" appears twice` };
      segments.push({ kind: 'rest', name: name === '' ? null : name });
    } else {
      // Literals are compared with the decoded request segment, so decode them too
      // (`/a%20b` and `/a b` mean the same).
      const value = decodeStrict(s);
      if (value === null) return { ok: false, problem: `segment ${i + 1} "${clip(s)}" has a malformed percent escape` };
      segments.push({ kind: 'literal', value });
    }
  }
  return { ok: true, segments };
}

/** A request path's segments (percent-encoding intact), or null when it does not start with `/`. */
export function splitPath(path: string): string[] | null {
  if (path.charCodeAt(0) !== 47 /* / */) return null;
  return path.slice(1).split('/');
}

/**
 * Orders two patterns by specificity: at the first position where they differ, a
 * literal beats a parameter, which beats the rest; a pattern that ends beats one that
 * goes on with a rest. Negative when `a` is more specific.
 */
export function compareSpecificity(a: Segment[], b: Segment[]): number {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = rank(a[i]) - rank(b[i]);
    if (d !== 0) return d;
  }
  return 0;
}

function rank(s: Segment | undefined): number {
  if (s === undefined) return 0; // the pattern ended: only equal-length literals/params compete here
  return s.kind === 'literal' ? 1 : s.kind === 'param' ? 2 : 3;
}

export function clip(text: string, max = 60): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
