import { describe, expect, it } from 'vitest';
import { FormError, decodeFormComponent, parseForm, parseQuery } from './form.js';

function formError(fn: () => unknown): FormError {
  try {
    fn();
  } catch (e) {
    if (e instanceof FormError) return e;
    throw e;
  }
  throw new Error('expected a FormError');
}

describe('parseForm', () => {
  it('nests bracket names the way Stripe SDKs send them', () => {
    expect(parseForm('amount=2000&currency=usd&metadata[order_id]=6735&metadata[note]=')).toEqual({
      amount: '2000',
      currency: 'usd',
      metadata: { order_id: '6735', note: '' },
    });
    expect(parseForm('expand[]=customer&expand[]=invoice.subscription')).toEqual({ expand: ['customer', 'invoice.subscription'] });
    expect(parseForm('items[0][price]=price_1&items[0][quantity]=2&items[1][price]=price_2')).toEqual({
      items: [{ price: 'price_1', quantity: '2' }, { price: 'price_2' }],
    });
    expect(parseForm('a[b][c][d]=deep')).toEqual({ a: { b: { c: { d: 'deep' } } } });
  });

  it('decodes percent escapes and plus signs in names and values', () => {
    expect(parseForm('description=Caf%C3%A9+latte&metadata%5Bk%5D=v%26w')).toEqual({
      description: 'Café latte',
      metadata: { k: 'v&w' },
    });
  });

  it('orders indexed arrays by index and drops holes', () => {
    expect(parseForm('a[2]=two&a[0]=zero&a[10]=ten')).toEqual({ a: ['zero', 'two', 'ten'] });
  });

  it('keeps mixed keys as an object, and a repeated plain name as an array', () => {
    expect(parseForm('a[0]=x&a[name]=y')).toEqual({ a: { '0': 'x', name: 'y' } });
    expect(parseForm('tag=a&tag=b')).toEqual({ tag: ['a', 'b'] });
  });

  it('fills one element of `a[][x]` until a name repeats', () => {
    expect(parseForm('a[][x]=1&a[][y]=2&a[][x]=3')).toEqual({ a: [{ x: '1', y: '2' }, { x: '3' }] });
  });

  it('treats a name with broken brackets as a literal key, and skips empty pairs', () => {
    expect(parseForm('a[b=1&c]d=2&&=3&e[f]g=4&flag')).toEqual({ 'a[b': '1', 'c]d': '2', 'e[f]g': '4', flag: '' });
    expect(parseForm('')).toEqual({});
  });

  it('never pollutes prototypes: __proto__ and constructor are own keys', () => {
    const out = parseForm('__proto__[polluted]=yes&a[__proto__][polluted]=yes&constructor[prototype][polluted]=yes');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(out, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    const a = out['a'] as Record<string, unknown>;
    expect(Object.getPrototypeOf(a)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(a, '__proto__')?.value).toEqual({ polluted: 'yes' });
    expect(JSON.parse(JSON.stringify(out))).toEqual(out);
    expect(parseQuery('__proto__=x')['__proto__']).toBe('x');
    expect(({} as Record<string, unknown>)['__proto__']).toBe(Object.prototype);
  });

  it('refuses nesting deeper than the limit, naming the parameter', () => {
    const deep = `a${'[x]'.repeat(17)}=1`;
    const e = formError(() => parseForm(deep));
    expect(e.code).toBe('form_too_deep');
    expect(e.param).toBe(deep.slice(0, -2));
    expect(parseForm(`a${'[x]'.repeat(16)}=1`)).toBeTruthy();
    expect(formError(() => parseForm('a[b][c]=1', { maxDepth: 1 })).code).toBe('form_too_deep');
  });

  it('refuses more pairs than the limit', () => {
    const many = Array.from({ length: 1001 }, (_, i) => `k${i}=v`).join('&');
    expect(formError(() => parseForm(many)).code).toBe('form_too_many_params');
    expect(Object.keys(parseForm(many, { maxParams: 2000 }))).toHaveLength(1001);
    expect(formError(() => parseQuery('a=1&b=2&c=3', { maxParams: 2 })).code).toBe('form_too_many_params');
  });

  it('refuses one name used both as a value and as an object', () => {
    const e = formError(() => parseForm('a=1&a[b]=2'));
    expect(e.code).toBe('form_conflict');
    expect(e.param).toBe('a[b]');
    expect(formError(() => parseForm('a[b]=2&a=1')).code).toBe('form_conflict');
  });
});

describe('parseQuery', () => {
  it('keeps bracket names as written and gathers repeated names', () => {
    expect(parseQuery('limit=3&expand[]=a&expand[]=b&created[gte]=10&q=hello+world')).toEqual({
      limit: '3',
      'expand[]': ['a', 'b'],
      'created[gte]': '10',
      q: 'hello world',
    });
    expect(parseQuery('?x=1')).toEqual({ x: '1' });
  });
});

describe('decodeFormComponent', () => {
  it('leaves a malformed escape as written instead of throwing', () => {
    expect(decodeFormComponent('100%')).toBe('100%');
    expect(decodeFormComponent('%E0%A4%A')).toBe('%E0%A4%A');
    expect(decodeFormComponent('ok%20then%ZZ%C3%A9')).toBe('ok then%ZZé');
  });
});
