import { describe, expect, it } from 'vitest';
import { Budget, compileTemplate, render, TemplateError, type TemplateScope } from './template.js';

const scope: TemplateScope = {
  request: {
    id: 'r1',
    method: 'GET',
    path: '/v1/x',
    params: { id: 'cus_1', key: '__proto__' },
    query: { n: '0', 'expand[]': ['a', 'b'] },
    headers: { 'x-kind': 'customer' },
    body: { list: ['zero', 'one'], nested: { k: 'v' } },
  },
  state: 'started',
  lookup: (type, id) => (type === 'customer' && id === 'cus_1' ? { name: 'Ada', tags: ['vip'] } : undefined),
};

function run(text: string): unknown {
  const t = compileTemplate(text, new Set(['id', 'key']));
  if (t === null) return text;
  return render(t, scope, new Budget(1_000_000));
}

describe('templates', () => {
  it('leaves text without {{ alone and lone braces as they are', () => {
    expect(compileTemplate('plain }} text {', null)).toBeNull();
    expect(run('a }} b {{request.id}}')).toBe('a }} b r1');
  });
  it('looks up with dots, indexes, quoted keys and nested lookups', () => {
    expect(run('{{request.body.list.1}}')).toBe('one');
    expect(run("{{request.query['expand[]']}}")).toEqual(['a', 'b']);
    expect(run('{{ request.body.list[request.query.n] }}')).toBe('zero');
  });
  it('reads the tree through the lookup, with the id from the request', () => {
    expect(run('{{tree.customer[request.params.id].name}}')).toBe('Ada');
    expect(run('{{tree.customer[request.params.id].tags}}')).toEqual(['vip']);
    expect(run('{{tree.customer.nope.name}}')).toBeUndefined();
  });
  it('never reaches a prototype, even through a key taken from the request', () => {
    expect(run('{{request.body[request.params.key]}}')).toBeUndefined();
    expect(run('{{request.body.nested.hasOwnProperty}}')).toBeUndefined();
    expect(run('{{request.body.list.length}}')).toBe(2); // an array's own length is data
    expect(run('x{{request.body.nested.k.length}}y')).toBe('xy');
  });
  it('refuses anything that is not one lookup', () => {
    for (const bad of ['{{request.id; process.exit()}}', '{{request.id()}}', '{{ }}', '{{globalThis.x}}', '{{request.__proto__}}', '{{state.x}}', '{{request.params.other}}', '{{a[b[c[d[e]]]]}}', '{{tree[request.headers.x-kind].x}}', '{{request.body[request.body[request.body[request.body[request.id]]]]}}']) {
      expect(() => compileTemplate(bad, new Set(['id'])), bad).toThrow(TemplateError);
    }
  });
  it('stops when a render copies more than its budget', () => {
    const t = compileTemplate('{{request.body}}{{request.body}}', null);
    expect(t).not.toBeNull();
    if (t) expect(() => render(t, scope, new Budget(60))).toThrow();
  });
});
