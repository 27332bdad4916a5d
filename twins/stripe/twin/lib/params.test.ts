import { describe, expect, it } from 'vitest';
import { StripeError } from '../errors.js';
import { Params, foldBrackets, parseForm } from './params.js';

function errorOf(fn: () => unknown): StripeError {
  try {
    fn();
  } catch (e) {
    if (e instanceof StripeError) return e;
    throw e;
  }
  throw new Error('expected a StripeError');
}

describe('foldBrackets', () => {
  it('folds Stripe bracket names into nested objects and index arrays, as the SDK sends them', () => {
    expect(foldBrackets({ 'expand[0]': 'a', 'expand[1]': 'b', 'created[gte]': '5', limit: '3' })).toEqual({
      expand: ['a', 'b'], created: { gte: '5' }, limit: '3',
    });
    expect(foldBrackets({ 'expand[]': ['x', 'y'] })).toEqual({ expand: ['x', 'y'] });
    expect(foldBrackets({ 'items[1][price]': 'p2', 'items[0][price]': 'p1', 'items[0][quantity]': '2' })).toEqual({
      items: [{ price: 'p1', quantity: '2' }, { price: 'p2' }],
    });
  });

  it('refuses hostile names: prototype keys, unbalanced brackets, deep nesting, huge indices', () => {
    expect(errorOf(() => foldBrackets({ '__proto__[x]': '1' })).status).toBe(400);
    expect(errorOf(() => foldBrackets({ 'a[constructor]': '1' })).status).toBe(400);
    expect(errorOf(() => foldBrackets({ 'a[b': '1' })).status).toBe(400);
    expect(errorOf(() => foldBrackets({ ['a' + '[x]'.repeat(20)]: '1' })).status).toBe(400);
    expect(errorOf(() => foldBrackets({ 'a[99999999]': '1' })).status).toBe(400);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe('parseForm', () => {
  it('decodes percent escapes and plus, keeps empty values (metadata[k]= unsets a key)', () => {
    expect(parseForm('email=a%40b.c&name=Jane+Doe&metadata[k]=&metadata=')).toEqual({ email: 'a@b.c', name: 'Jane Doe', metadata: '' });
    expect(parseForm('metadata[k]=&metadata[j]=v')).toEqual({ metadata: { k: '', j: 'v' } });
  });

  it('answers a malformed escape as a 400, not a crash', () => {
    expect(errorOf(() => parseForm('name=%E0%A4%A')).status).toBe(400);
  });
});

describe('Params', () => {
  const p = new Params({ n: '42', neg: '-3', bad: '4x', t: 'true', f: 'false', b: 'yes', e: 'month', o: { x: '1' }, s: '' }, '');

  it('reads integers and refuses what is not one with Stripe\'s message and the param', () => {
    expect(p.int('n')).toBe(42);
    expect(p.int('neg')).toBe(-3);
    const e = errorOf(() => p.int('bad'));
    expect(e.message).toBe('Invalid integer: 4x');
    expect(e.fields.param).toBe('bad');
    expect(e.fields.code).toBe('parameter_invalid_integer');
    const odd = new Params({ zeros: '010', whole: '4995.00', exp: '1e3', json: 7, jsonFrac: 7.5 });
    expect([odd.int('zeros'), odd.int('json')]).toEqual([10, 7]);
    expect(['whole', 'exp', 'jsonFrac'].map((k) => errorOf(() => odd.int(k)).message)).toEqual(['Invalid integer: 4995.00', 'Invalid integer: 1e3', 'Invalid integer: 7.5']);
    expect(errorOf(() => p.int('n', 1, 10)).message).toBe('This value must be less than or equal to 10.');
  });

  it('reads booleans and enums', () => {
    expect(p.bool('t')).toBe(true);
    expect(p.bool('f')).toBe(false);
    expect(errorOf(() => p.bool('b')).message).toBe('Invalid boolean: yes');
    // Python's and .NET's spelling, as older stripe-python and stripe-dotnet send it; JSON booleans as they are.
    const cased = new Params({ a: 'True', b: 'FALSE', c: 'tRuE', d: true, e: false, one: '1', empty: '', arr: ['true'] });
    expect(['a', 'b', 'c', 'd', 'e'].map((k) => cased.bool(k))).toEqual([true, false, true, true, false]);
    for (const [k, shown] of [['one', '1'], ['empty', ''], ['arr', '["true"]']] as const) {
      const e = errorOf(() => cased.bool(k));
      expect([e.message, e.fields.param, e.fields.code]).toEqual([`Invalid boolean: ${shown}`, k, undefined]);
    }
    expect(p.oneOf('e', ['day', 'month'] as const)).toBe('month');
    expect(errorOf(() => p.oneOf('e', ['day', 'week'] as const)).message).toBe('Invalid e: must be one of day, or week');
  });

  it('reads decimals in decimal notation only', () => {
    const d = new Params({ a: '12.5', b: '.5', c: '1e-7', hex: '0x10', comma: '0,6', blank: ' ' });
    expect(['a', 'b', 'c'].map((k) => d.num(k))).toEqual([12.5, 0.5, 1e-7]);
    expect(['hex', 'comma', 'blank'].map((k) => errorOf(() => d.num(k)).message)).toEqual(['Invalid decimal: 0x10', 'Invalid decimal: 0,6', 'Invalid decimal:  ']);
  });

  it('names nested params with brackets in errors', () => {
    const nested = new Params({ recurring: { interval_count: 'x' } });
    const e = errorOf(() => nested.obj('recurring')?.int('interval_count'));
    expect(e.fields.param).toBe('recurring[interval_count]');
  });

  it('treats an empty string as a request to clear', () => {
    expect(p.nullableStr('s')).toBeNull();
    expect(p.obj('s')).toBeNull();
    expect(p.obj('o')?.str('x')).toBe('1');
    expect(errorOf(() => p.reqStr('s')).fields.code).toBe('parameter_missing');
  });
});
