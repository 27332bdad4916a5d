import { describe, expect, it } from 'vitest';
import { StripeError } from '../errors.js';
import { parseQuery } from './search.js';

function refusal(q: string): StripeError {
  try {
    parseQuery(q);
  } catch (e) {
    if (e instanceof StripeError) return e;
    throw e;
  }
  throw new Error(`expected ${q} to be refused`);
}

describe('parseQuery', () => {
  it('parses clauses, operators, metadata keys, negation and null', () => {
    const q = parseQuery(`email:"a@b.c" AND amount>=100 AND -status:"canceled" AND metadata['order id']:"7" AND name:null`);
    expect(q.join).toBe('AND');
    expect(q.clauses).toEqual([
      { negate: false, field: 'email', op: ':', value: 'a@b.c' },
      { negate: false, field: 'amount', op: '>=', value: 100 },
      { negate: true, field: 'status', op: ':', value: 'canceled' },
      { negate: false, field: 'metadata', metaKey: 'order id', op: ':', value: '7' },
      { negate: false, field: 'name', op: ':', value: null },
    ]);
  });

  it('parses OR, escaped quotes and ~', () => {
    const q = parseQuery('name~"O\\"Brien" OR name~"Smith"');
    expect(q.join).toBe('OR');
    expect(q.clauses.map((c) => c.value)).toEqual(['O"Brien', 'Smith']);
  });

  it('refuses mixed AND/OR, unquoted strings, unterminated strings, and dangling operators, with param query', () => {
    for (const bad of ['a:"1" AND b:"2" OR c:"3"', 'name:bob', 'name:"bob', 'amount>', 'email:"x" email:"y"', '', 'AND']) {
      const e = refusal(bad);
      expect([bad, e.status, e.fields.param]).toEqual([bad, 400, 'query']);
    }
  });
});
