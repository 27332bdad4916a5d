import { describe, expect, it } from 'vitest';
import { matchRoute, pathSegments, routeTable, type Endpoint } from './routes.js';

const table = routeTable<Endpoint & { name: string }>([
  { method: 'GET', path: '/things', scope: 'read', name: 'list' },
  { method: 'GET', path: '/things/new', scope: 'read', name: 'form' },
  { method: 'GET', path: '/things/:id', scope: 'read', name: 'one' },
  { method: 'PUT', path: '/things/:id', scope: 'write', name: 'put' },
  { method: 'DELETE', path: '/things/:id', scope: 'write', name: 'delete' },
  { method: 'GET', path: '/a/:x/b/:y', scope: 'read', name: 'two' },
]);

const match = (method: string, path: string) => matchRoute(table, method, pathSegments(path));

describe('matchRoute', () => {
  it('takes the first route whose pattern and method match, with its parameters', () => {
    expect(match('GET', '/things/new')).toMatchObject({ kind: 'route', route: { name: 'form' }, params: {} });
    expect(match('GET', '/things/t1')).toMatchObject({ kind: 'route', route: { name: 'one' }, params: { id: 't1' } });
    expect(match('PUT', '/things/t1')).toMatchObject({ kind: 'route', route: { name: 'put', scope: 'write' } });
    expect(match('GET', '/a/1/b/2')).toMatchObject({ kind: 'route', route: { name: 'two' }, params: { x: '1', y: '2' } });
  });

  it('answers HEAD where GET is, and nowhere else', () => {
    expect(match('HEAD', '/things')).toMatchObject({ kind: 'route', route: { name: 'list' } });
    expect(match('HEAD', '/things/t1')).toMatchObject({ kind: 'route', route: { name: 'one' } });
  });

  it('lists the methods a known path takes, in table order, once each', () => {
    expect(match('POST', '/things/t1')).toEqual({ kind: 'method_not_allowed', allow: ['GET', 'PUT', 'DELETE'] });
    // `/things/new` is also `/things/:id`: it takes PUT through the parameter route.
    expect(match('POST', '/things/new')).toEqual({ kind: 'method_not_allowed', allow: ['GET', 'PUT', 'DELETE'] });
    expect(match('DELETE', '/things')).toEqual({ kind: 'method_not_allowed', allow: ['GET'] });
  });

  it('finds nothing for a path no pattern matches, whatever the method', () => {
    for (const path of ['/', '/thing', '/things/t1/more', '/a/1/b', '/a/1/c/2']) {
      for (const method of ['GET', 'POST']) expect([method, path, match(method, path)]).toEqual([method, path, { kind: 'not_found' }]);
    }
  });

  it('reads a path as the runner does: empty segments dropped, each segment percent-decoded', () => {
    expect(match('GET', '/things/')).toMatchObject({ kind: 'route', route: { name: 'list' } });
    expect(match('GET', '//things//t1')).toMatchObject({ kind: 'route', params: { id: 't1' } });
    expect(match('GET', '/th%69ngs/a%2Fb')).toMatchObject({ kind: 'route', route: { name: 'one' }, params: { id: 'a/b' } });
    expect(() => pathSegments('/things/%ZZ')).toThrow(expect.objectContaining({ code: 'bad_request' }));
  });

  it('refuses a malformed table as a programming error', () => {
    expect(() => routeTable([{ method: 'get', path: '/x', scope: 'read' }])).toThrow(TypeError);
    expect(() => routeTable([{ method: 'GET', path: 'x', scope: 'read' }])).toThrow(TypeError);
    expect(() => routeTable([{ method: 'GET', path: '/x/:a/:a', scope: 'read' }])).toThrow(TypeError);
    expect(() => routeTable([{ method: 'GET', path: '/x/:', scope: 'read' }])).toThrow(TypeError);
  });
});
