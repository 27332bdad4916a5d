import { describe, expect, it } from 'vitest';
import { KitError } from '../errors.js';
import { jsOutcome } from './js.js';

describe('jsOutcome', () => {
  it('answers a response object, with status 200 by default', () => {
    expect(jsOutcome({ body: { id: 'cus_1' } }, 'computed')).toEqual({ kind: 'respond', response: { status: 200, headers: {}, body: { id: 'cus_1' } } });
    expect(jsOutcome({ status: 404, headers: { 'x-a': 1 } }, 'computed')).toEqual({ kind: 'respond', response: { status: 404, headers: { 'x-a': '1' } } });
  });
  it('passes on to the twin when the handler returns nothing', () => {
    expect(jsOutcome(undefined, 'h')).toEqual({ kind: 'pass' });
    expect(jsOutcome(null, 'h')).toEqual({ kind: 'pass' });
  });
  it('strips line breaks from header values', () => {
    const r = jsOutcome({ headers: { a: 'x\r\nSet-Cookie: y' } }, 'h');
    expect(r.kind === 'respond' && r.response.headers['a']).toBe('x  Set-Cookie: y');
  });
  it.each([
    ['a string', 'ok', 'the value'],
    ['an array', [], 'the value'],
    ['an unknown field', { stauts: 200 }, 'stauts'],
    ['a bad status', { status: 700 }, 'status'],
    ['a status as text', { status: '200' }, 'status'],
    ['a bad header name', { headers: { 'a b': 'x' } }, 'headers.a b'],
    ['a header object', { headers: { a: {} } }, 'headers.a'],
    ['bad base64 type', { bodyBase64: 5 }, 'bodyBase64'],
  ])('refuses %s with handler_error', (_what, value, field) => {
    try {
      jsOutcome(value, 'h');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(KitError);
      expect((e as KitError).code).toBe('handler_error');
      expect((e as KitError).details).toMatchObject({ handler: 'h', field });
    }
  });
});
