/**
 * Reading a request's parameters. JSON and form bodies both arrive parsed (`a[b]=1` is
 * `{ a: { b: '1' } }`), and form values are strings, so numbers are read from either.
 * Imports nothing from `resources/`.
 */
import type { TwinRequest } from 'twinkit/twin';
import { InvalidRequest } from '../errors.js';

/** The body as an object of parameters; a name not in `allowed` is refused, as most vendors do. */
export function bodyParams(request: TwinRequest, allowed: readonly string[]): Record<string, unknown> {
  const body = request.body ?? {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new InvalidRequest('parameter_invalid', 'The request body must be an object of parameters.');
  const params = body as Record<string, unknown>;
  for (const key of Object.keys(params)) {
    if (!allowed.includes(key)) throw new InvalidRequest('parameter_unknown', `Received unknown parameter: ${key}`, key);
  }
  return params;
}

/** A non-empty string of at most `max` characters. */
export function text(value: unknown, param: string, max: number): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > max) {
    throw new InvalidRequest('parameter_invalid_string', `${param} must be a non-empty string of at most ${max} characters.`, param);
  }
  return value;
}

/** An integer from `min` to `max`, given as a number or as its digits. */
export function integer(value: unknown, param: string, min: number, max: number): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new InvalidRequest('parameter_invalid_integer', `${param} must be an integer from ${min} to ${max}.`, param);
  }
  return n;
}
