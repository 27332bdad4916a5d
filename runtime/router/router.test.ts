import { describe, expect, it } from 'vitest';
import { KitError } from '../errors.js';
import type { Matcher } from '../../sdk/twin/types.js';
import { compileRouter } from './router.js';
import type { RouteRequest } from './types.js';

function req(method: string, path: string, extra: Partial<RouteRequest> = {}): RouteRequest {
  return { method, path, query: {}, headers: {}, body: undefined, ...extra };
}

function router(routes: [string, Matcher][]) {
  return compileRouter(routes.map(([name, match]) => ({ name, match, value: name })));
}

describe('compileRouter: paths', () => {
  it('takes literal segments over parameters whatever the declaration order', () => {
    const r = router([
      ['customers.get', { method: 'GET', path: '/v1/customers/:id' }],
      ['customers.search', { method: 'GET', path: '/v1/customers/search' }],
    ]);
    expect(r.match(req('GET', '/v1/customers/search'))?.value).toBe('customers.search');
    expect(r.match(req('GET', '/v1/customers/cus_1'))).toEqual({ value: 'customers.get', index: 0, params: { id: 'cus_1' } });
  });

  it('prefers the more specific segment from the left, then declaration order', () => {
    const r = router([
      ['rest', { path: '/v1/*rest' }],
      ['param-literal', { path: '/v1/:a/items' }],
      ['literal-param', { path: '/v1/x/:b' }],
      ['literal-param-2', { path: '/v1/x/:c' }],
    ]);
    expect(r.match(req('GET', '/v1/x/items'))?.value).toBe('literal-param');
    expect(r.match(req('GET', '/v1/y/items'))?.value).toBe('param-literal');
    expect(r.match(req('GET', '/v1/y/z'))).toEqual({ value: 'rest', index: 0, params: { rest: 'y/z' } });
    expect(r.matchAll(req('GET', '/v1/x/items')).map((m) => m.value)).toEqual(['literal-param', 'literal-param-2', 'param-literal', 'rest']);
  });

  it('URL-decodes parameters and refuses a malformed escape without throwing', () => {
    const r = router([['get', { path: '/v1/customers/:id' }], ['any', { path: '/v2/*rest' }]]);
    expect(r.match(req('GET', '/v1/customers/a%20b%2Fc'))?.params).toEqual({ id: 'a b/c' });
    expect(r.match(req('GET', '/v1/customers/%E0%A4%A'))).toBeNull();
    expect(r.match(req('GET', '/v1/customers/%zz'))).toBeNull();
    expect(r.match(req('GET', '/v2/a/%ZZ'))).toBeNull();
    expect(r.match(req('GET', '/v2/a%2Fb/c'))?.params).toEqual({ rest: 'a/b/c' });
  });

  it('does not let a parameter take an empty segment, and keeps trailing slashes distinct', () => {
    const r = router([['get', { path: '/v1/customers/:id' }], ['list', { path: '/v1/customers' }]]);
    expect(r.match(req('GET', '/v1/customers/'))).toBeNull();
    expect(r.match(req('GET', '/v1/customers'))?.value).toBe('list');
    expect(r.match(req('GET', 'v1/customers'))).toBeNull();
  });

  it('lets a rest take the remainder, possibly empty, and a bare * capture nothing', () => {
    const r = router([['files', { path: '/files/*path' }], ['any', { path: '/*' }]]);
    expect(r.match(req('GET', '/files/a/b/c.txt'))?.params).toEqual({ path: 'a/b/c.txt' });
    expect(r.match(req('GET', '/files'))?.params).toEqual({ path: '' });
    expect(r.match(req('GET', '/other/x'))).toEqual({ value: 'any', index: 1, params: {} });
  });

  it('stores a parameter named __proto__ as data, not as a prototype', () => {
    const r = router([['odd', { path: '/x/:__proto__' }]]);
    const m = r.match(req('GET', '/x/abc'));
    expect(Object.getPrototypeOf(m?.params)).toBe(Object.prototype);
    expect(Object.keys(m?.params ?? {})).toEqual(['__proto__']);
  });
});

describe('compileRouter: methods', () => {
  const r = router([
    ['list', { method: 'GET', path: '/v1/customers' }],
    ['create', { method: ['post', 'PUT'], path: '/v1/customers' }],
    ['head', { method: 'HEAD', path: '/v1/head-only' }],
    ['any', { path: '/v1/any' }],
  ]);
  it('matches a method, a list of methods, or any method when absent', () => {
    expect(r.match(req('GET', '/v1/customers'))?.value).toBe('list');
    expect(r.match(req('POST', '/v1/customers'))?.value).toBe('create');
    expect(r.match(req('PUT', '/v1/customers'))?.value).toBe('create');
    expect(r.match(req('DELETE', '/v1/customers'))).toBeNull();
    expect(r.match(req('PATCH', '/v1/any'))?.value).toBe('any');
  });
  it('answers HEAD with a GET route when no route takes HEAD', () => {
    expect(r.match(req('HEAD', '/v1/customers'))?.value).toBe('list');
    expect(r.match(req('HEAD', '/v1/head-only'))?.value).toBe('head');
    expect(r.match(req('GET', '/v1/head-only'))).toBeNull();
  });
});

describe('compileRouter: query, headers, body', () => {
  const r = router([
    ['expanded', { path: '/v1/charges', query: { 'expand[]': 'customer' } }],
    ['limited', { path: '/v1/charges', query: { limit: true } }],
    ['idem', { method: 'POST', path: '/v1/charges', headers: { 'Idempotency-Key': true } }],
    ['big', { method: 'POST', path: '/v1/charges', body: { amount: 2000, 'card.number': '4000000000000002', 'items.0.price': 'p_1' } }],
    ['meta', { method: 'POST', path: '/v1/charges', body: { metadata: { a: '1' } } }],
    ['plain', { path: '/v1/charges' }],
  ]);
  it('checks query values as strings, with repeated names and presence', () => {
    expect(r.match(req('GET', '/v1/charges', { query: { 'expand[]': ['source', 'customer'] } }))?.value).toBe('expanded');
    expect(r.match(req('GET', '/v1/charges', { query: { 'expand[]': 'source' } }))?.value).toBe('plain');
    expect(r.match(req('GET', '/v1/charges', { query: { limit: '' } }))?.value).toBe('limited');
  });
  it('checks headers by lower-case name', () => {
    expect(r.match(req('POST', '/v1/charges', { headers: { 'idempotency-key': 'k1' } }))?.value).toBe('idem');
  });
  it('checks dotted body paths, and takes a number as equal to its form-encoded string', () => {
    const body = { amount: '2000', card: { number: '4000000000000002' }, items: [{ price: 'p_1' }] };
    expect(r.match(req('POST', '/v1/charges', { body }))?.value).toBe('big');
    expect(r.match(req('POST', '/v1/charges', { body: { ...body, amount: 2000 } }))?.value).toBe('big');
    expect(r.match(req('POST', '/v1/charges', { body: { ...body, amount: '2001' } }))?.value).toBe('plain');
    expect(r.match(req('POST', '/v1/charges', { body: { metadata: { a: '1' } } }))?.value).toBe('meta');
    expect(r.match(req('POST', '/v1/charges', { body: { metadata: { a: '1', b: '2' } } }))?.value).toBe('plain');
  });
  it('never reaches inherited members through a matcher', () => {
    const r2 = router([['c', { path: '/x', query: { constructor: true as const } }], ['b', { path: '/x', body: { 'toString.length': 0 } }]]);
    expect(r2.match(req('GET', '/x', { body: {} }))).toBeNull();
    expect(r2.match(req('GET', '/x', { query: { constructor: '1' } }))?.value).toBe('c');
  });
});

describe('compileRouter: nearestMiss', () => {
  const r = router([
    ['customers.create', { method: 'POST', path: '/v1/customers' }],
    ['customers.get', { method: 'GET', path: '/v1/customers/:id' }],
    ['charges.big', { method: 'POST', path: '/v1/charges', body: { currency: 'usd', amount: 2000 } }],
    ['refunds.list', { method: 'GET', path: '/v1/refunds', query: { charge: true } }],
  ]);
  it('names a route whose path matched but whose method did not', () => {
    expect(r.nearestMiss(req('DELETE', '/v1/customers'))).toEqual({ index: 0, name: 'customers.create', failed: 'method', detail: 'method is DELETE, the route wants POST' });
  });
  it('names the body field that differed once path and method matched', () => {
    const miss = r.nearestMiss(req('POST', '/v1/charges', { body: { currency: 'usd', amount: '100' } }));
    expect(miss).toMatchObject({ index: 2, failed: 'body' });
    expect(miss?.detail).toContain('"amount"');
    expect(miss?.detail).toContain('2000');
  });
  it('names a missing query parameter', () => {
    expect(r.nearestMiss(req('GET', '/v1/refunds'))).toMatchObject({ index: 3, failed: 'query' });
  });
  it('names the segment that differed when no path matched, preferring the longest shared prefix', () => {
    const miss = r.nearestMiss(req('GET', '/v1/customer/cus_1'));
    expect(miss).toMatchObject({ failed: 'path' });
    expect(miss?.detail).toContain('"customer"');
    expect(r.nearestMiss(req('GET', '/v1/customers/cus_1/sources'))).toMatchObject({ index: 1, failed: 'path' });
  });
  it('prefers, among routes whose path failed at the same segment, the literal most like it, then the method and length', () => {
    const stripe = router([
      ['account.get', { method: 'GET', path: '/v1/account' }],
      ['balance.get', { method: 'GET', path: '/v1/balance' }],
      ['customers.create', { method: 'POST', path: '/v1/customers' }],
      ['customers.retrieve', { method: 'GET', path: '/v1/customers/:id' }],
      ['subscriptions.list', { method: 'GET', path: '/v1/subscriptions' }],
    ]);
    // Declared first and as specific, account.get would win every tie: likeness decides.
    expect(stripe.nearestMiss(req('GET', '/v1/subscription'))).toMatchObject({ name: 'subscriptions.list', failed: 'path', detail: 'segment 2 is "subscription", the pattern wants "subscriptions"' });
    expect(stripe.nearestMiss(req('GET', '/v1/balances'))).toMatchObject({ name: 'balance.get' });
    // Both customers routes are as alike: the one taking GET and three segments.
    expect(stripe.nearestMiss(req('GET', '/v1/customer/cus_1'))).toMatchObject({ name: 'customers.retrieve' });
    expect(stripe.nearestMiss(req('POST', '/v1/customer'))).toMatchObject({ name: 'customers.create' });
    // A segment past 64 characters is compared with nothing, and costs nothing.
    expect(stripe.nearestMiss(req('GET', `/v1/${'subscriptions'.repeat(100)}`))).toMatchObject({ name: 'account.get', failed: 'path' });
  });

  it('names the routes that take every path, and leaves out the ignored ones, as a catch-all that answered', () => {
    const r = router([
      ['customers.list', { method: 'GET', path: '/v1/customers' }],
      ['unrecognized', { method: ['GET', 'POST'], path: '/*rest' }],
      ['files', { method: 'GET', path: '/files/*path' }],
    ]);
    expect([...r.catchAll]).toEqual([1]);
    // The catch-all matches, so nothing is missed; left out, the nearest real route is named.
    expect(r.nearestMiss(req('GET', '/v1/customer'))).toBeNull();
    expect(r.nearestMiss(req('GET', '/v1/customer'), r.catchAll)).toMatchObject({ index: 0, name: 'customers.list', failed: 'path' });
    // A method the catch-all does not take: its method miss is not the nearest once it is left out.
    expect(r.nearestMiss(req('DELETE', '/v2/x'))).toMatchObject({ name: 'unrecognized', failed: 'method' });
    expect(r.nearestMiss(req('DELETE', '/v2/x'), r.catchAll)).toBeNull();
    // A real route that matches means no miss, ignored routes or not.
    expect(r.nearestMiss(req('GET', '/v1/customers'), r.catchAll)).toBeNull();
    expect(r.nearestMiss(req('HEAD', '/files/a/b'), r.catchAll)).toBeNull();
  });

  it('answers null when a route matches or nothing shares even the first segment', () => {
    expect(r.nearestMiss(req('POST', '/v1/customers'))).toBeNull();
    expect(r.nearestMiss(req('GET', '/v2/anything'))).toBeNull();
    expect(r.nearestMiss(req('GET', 'no-slash'))).toBeNull();
  });
});

describe('compileRouter: refusals', () => {
  const bad: [Matcher, string][] = [
    [{ path: 'v1/x' }, 'match.path'],
    [{ path: '/v1/*rest/more' }, 'match.path'],
    [{ path: '/v1/:' }, 'match.path'],
    [{ path: '/v1/:a/:a' }, 'match.path'],
    [{ path: '/v1/a b' }, 'match.path'],
    [{ path: '/v1/%zz' }, 'match.path'],
    [{ path: '/v1', method: 'G E T' }, 'match.method'],
    [{ path: '/v1', method: [] }, 'match.method'],
    [{ path: '/v1', query: { a: false as unknown as string } }, 'match.query.a'],
    [{ path: '/v1', query: { a: {} as unknown as string } }, 'match.query.a'],
    [{ path: '/v1', body: { 'a..b': 1 } }, 'match.body.a..b'],
    [{ path: '/v1', body: { '__proto__.x': 1 } }, 'match.body.__proto__.x'],
    [{ path: '/v1', pth: '/x' } as unknown as Matcher, 'match.pth'],
  ];
  it.each(bad)('refuses %j with invalid_twin naming %s', (match, field) => {
    try {
      compileRouter([{ name: 'ok', match: { path: '/' }, value: 0 }, { name: 'broken', match, value: 1 }]);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(KitError);
      expect((e as KitError).code).toBe('invalid_twin');
      expect((e as KitError).details).toMatchObject({ route: 1, name: 'broken' });
      expect((e as KitError).details?.['field']).toBe(field);
    }
  });
});
