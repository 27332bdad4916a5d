import { describe, expect, it } from 'vitest';
import { defineTwin } from './define.js';
import type { TwinDefinition } from './types.js';

function base(): TwinDefinition {
  return {
    vendor: 'acme',
    version: '1.0.0',
    protocol: 'http',
    models: { hosts: ['api.acme.test'], resources: ['widget'] },
    routes: [
      { name: 'widgets.get', match: { method: 'GET', path: '/v1/widgets/:id' }, handle: () => ({ status: 200 }) },
      { name: 'files.get', match: { method: ['GET', 'HEAD'], path: '/files/*rest', query: { v: true }, headers: { 'x-a': 'b' }, body: { 'card.number': '4242' } }, handle: () => ({}) },
    ],
    stores: { widgets: () => [] },
    moves: { renew: () => undefined },
  };
}

function refused(change: (d: TwinDefinition & Record<string, unknown>) => void): string {
  const d = base() as TwinDefinition & Record<string, unknown>;
  change(d);
  try {
    defineTwin(d);
  } catch (e) {
    expect(e).toBeInstanceOf(TypeError);
    return (e as Error).message;
  }
  throw new Error('defineTwin accepted it');
}

describe('defineTwin', () => {
  it('returns a valid definition as it is', () => {
    const d = base();
    expect(defineTwin(d)).toBe(d);
  });

  it('accepts every pattern form the router takes: params, a named or bare rest, encoded literals', () => {
    for (const path of ['/', '/v1/:id', '/files/*rest', '/files/*', '/v1/a%20b/:x_1']) {
      const d = base();
      d.routes[0]!.match.path = path;
      expect(() => defineTwin(d), path).not.toThrow();
    }
  });

  it('refuses a bad vendor id, version or protocol', () => {
    expect(refused((d) => { d.vendor = 'Acme'; })).toMatch(/vendor/);
    expect(refused((d) => { d.vendor = 'a'; })).toMatch(/vendor/);
    expect(refused((d) => { d.vendor = `a${'b'.repeat(40)}`; })).toMatch(/vendor/);
    expect(refused((d) => { d.vendor = '1abc'; })).toMatch(/vendor/);
    expect(refused((d) => { d.version = ''; })).toMatch(/version/);
    expect(refused((d) => { d.protocol = 'HTTP'; })).toMatch(/protocol/);
  });

  it('refuses models that are not lists of strings, and scopes other than read', () => {
    expect(refused((d) => { d.models = { hosts: 'x', resources: [] } as never; })).toMatch(/models.hosts/);
    expect(refused((d) => { d.models = { hosts: [], resources: [''] }; })).toMatch(/models.resources\[0\]/);
    expect(refused((d) => { d.requestScopes = ['write'] as never; })).toMatch(/requestScopes/);
  });

  it('takes secrets as whole record types or dotted field paths, and refuses anything else', () => {
    expect(() => defineTwin({ ...base(), secrets: { webhook_secret: true, hook: ['config.secret'] } })).not.toThrow();
    expect(refused((d) => { d.secrets = ['hook'] as never; })).toMatch(/secrets must be an object/);
    expect(refused((d) => { d.secrets = { hook: [] }; })).toMatch(/secrets\["hook"\] must be true or a non-empty array/);
    expect(refused((d) => { d.secrets = { hook: ['config..secret'] }; })).toMatch(/not a dotted field path/);
    expect(refused((d) => { d.secrets = { hook: false as never }; })).toMatch(/secrets\["hook"\]/);
    expect(refused((d) => { d.secrets = { '': true }; })).toMatch(/names no record type/);
  });

  it('refuses duplicate route names, and routes without a handler', () => {
    expect(refused((d) => { d.routes[1]!.name = 'widgets.get'; })).toMatch(/routes\[1\].name repeats/);
    expect(refused((d) => { d.routes[0]!.name = ' '; })).toMatch(/routes\[0\].name/);
    expect(refused((d) => { (d.routes[0] as { handle: unknown }).handle = 'x'; })).toMatch(/routes\[0\].handle/);
  });

  it('refuses matchers that could never match or are not plain data', () => {
    expect(refused((d) => { d.routes[0]!.match.path = 'v1/widgets'; })).toMatch(/path must be a string starting with '\/'/);
    expect(refused((d) => { d.routes[0]!.match.path = '/v1/widgets?x=1'; })).toMatch(/query/);
    expect(refused((d) => { d.routes[0]!.match.path = '/v1/:'; })).toMatch(/parameter without a valid name/);
    expect(refused((d) => { d.routes[0]!.match.path = '/v1/:id/:id'; })).toMatch(/twice/);
    expect(refused((d) => { d.routes[0]!.match.path = '/v1/*rest/x'; })).toMatch(/last segment/);
    expect(refused((d) => { d.routes[0]!.match.path = '/v1/:$id'; })).toMatch(/valid name/);
    expect(refused((d) => { d.routes[0]!.match.path = '/v1/%E0%A4%A'; })).toMatch(/percent escape/);
    expect(refused((d) => { d.routes[0]!.match.path = `/${'a/'.repeat(64)}`; })).toMatch(/64 segments/);
    expect(refused((d) => { d.routes[0]!.match.path = '/v1/a\u0001'; })).toMatch(/control/);
    expect(refused((d) => { d.routes[0]!.match.method = 'get'; })).toMatch(/upper-case/);
    expect(refused((d) => { d.routes[0]!.match.method = []; })).toMatch(/empty/);
    expect(refused((d) => { d.routes[0]!.match.headers = { 'X-A': true }; })).toMatch(/lower-case/);
    expect(refused((d) => { d.routes[0]!.match.query = { a: 1 as never }; })).toMatch(/string or true/);
    expect(refused((d) => { d.routes[0]!.match.body = { n: BigInt(1) }; })).toMatch(/plain JSON/);
    expect(refused((d) => { d.routes[0]!.match.body = { 'card..number': true }; })).toMatch(/joined by/);
    expect(refused((d) => { d.routes[0]!.match.body = { 'a.constructor': true }; })).toMatch(/constructor/);
    expect(refused((d) => { d.routes[0]!.match.query = { '': true }; })).toMatch(/empty name/);
    expect(refused((d) => { (d.routes[0]!.match as unknown as Record<string, unknown>)['paths'] = '/x'; })).toMatch(/not a matcher field/);
  });

  it('refuses stores and moves that are not named functions', () => {
    expect(refused((d) => { d.stores = { 'Bad Name': () => 1 }; })).toMatch(/stores.Bad Name/);
    expect(refused((d) => { d.moves = { renew: 1 as never }; })).toMatch(/moves.renew must be a function/);
    expect(refused((d) => { d.errorBody = 'x' as never; })).toMatch(/errorBody/);
    expect(refused((d) => { d.scenarios = 'yes' as never; })).toMatch(/scenarios/);
  });

  it('refuses what is not an object at all', () => {
    expect(() => defineTwin(null as never)).toThrow(TypeError);
    expect(() => defineTwin([] as never)).toThrow(TypeError);
  });
});
