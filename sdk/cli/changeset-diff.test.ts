import { describe, expect, it } from 'vitest';
import {
  approvalLine,
  changeLines,
  changesetDiff,
  cut,
  DEFAULT_LIMITS,
  fieldChanges,
  fieldPath,
  receiptLine,
  recordLines,
  shownValue,
  verificationFailures,
  verificationText,
} from './changeset-diff.js';
import type { WireChange } from './changeset-diff.js';

/** A change as the contract shapes one: a Stripe product created, with the twin's idempotency bookkeeping. */
function productCreated(index = 0): WireChange {
  return {
    index,
    twin: 'stripe',
    request: { method: 'POST', path: '/v1/products', query: '', contentType: 'application/x-www-form-urlencoded', body: 'name=Pro' },
    status: 200,
    answer: { id: 'prod_x', object: 'product', name: 'Pro' },
    writes: [
      { type: 'product', id: 'prod_x', before: null, after: { id: 'prod_x', name: 'Pro', active: true, metadata: { tier: 'gold' } } },
      { type: '__idempotency', id: 'key-1', before: null, after: { status: 200 } },
    ],
    occurredAt: '2026-01-01T09:00:00.000Z',
    state: 'landed',
  };
}

describe('fieldChanges and fieldPath', () => {
  it('names nested fields a.b.c and list items a[0], quoting a name that is not plain', () => {
    expect(fieldPath(['metadata', 'tier'])).toBe('metadata.tier');
    expect(fieldPath(['items', 'data', 0, 'price', 'id'])).toBe('items.data[0].price.id');
    expect(fieldPath(['metadata', 'plan.tier'])).toBe('metadata["plan.tier"]');
    expect(fieldPath(['a b'])).toBe('["a b"]');
    expect(fieldPath([])).toBe('(value)');
  });

  it('answers only the fields that differ, the new version\'s order first, then the fields removed', () => {
    const before = { name: 'Pro', price: { amount: 1000, currency: 'usd' }, tags: ['a', 'b'], gone: 1, same: { deep: [1] } };
    const after = { name: 'Pro 2', price: { amount: 2000, currency: 'usd' }, tags: ['a'], same: { deep: [1] }, added: null };
    const changes = fieldChanges(before, after).map((c) => `${c.field}: ${shownValue(c.before)} → ${shownValue(c.after)}`);
    expect(changes).toEqual(['name: "Pro" → "Pro 2"', 'price.amount: 1000 → 2000', 'added: (none) → null', 'tags[1]: "b" → (none)', 'gone: 1 → (none)']);
  });

  it('a record created has every field from (none); a record deleted, every field to (none)', () => {
    expect(fieldChanges(null, { a: 1, b: { c: 'x' } }).map((c) => [c.field, shownValue(c.before), shownValue(c.after)])).toEqual([
      ['a', '(none)', '1'],
      ['b.c', '(none)', '"x"'],
    ]);
    expect(fieldChanges({ a: 1 }, null).map((c) => [c.field, shownValue(c.before), shownValue(c.after)])).toEqual([['a', '1', '(none)']]);
  });

  it('an empty object or list is a value of its own; equal versions have no change', () => {
    expect(fieldChanges({ a: {} }, { a: [] }).map((c) => [c.field, shownValue(c.before), shownValue(c.after)])).toEqual([['a', '{}', '[]']]);
    expect(fieldChanges({ a: { b: [1, { c: 2 }] } }, { a: { b: [1, { c: 2 }] } })).toEqual([]);
    // A record whose value is not an object changes as a whole.
    expect(fieldChanges('on', 'off').map((c) => c.field)).toEqual(['(value)']);
  });

  it('stops walking a hostile record: deep nesting is one value, and a huge one is not walked whole', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100; i++) deep = { d: deep };
    const changes = fieldChanges(null, deep);
    expect(changes).toHaveLength(1);
    expect(changes[0]?.field).toBe(Array(12).fill('d').join('.'));
    const wide = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`f${i}`, i]));
    expect(fieldChanges(null, wide).length).toBe(5_000);
  });
});

describe('shownValue and cut', () => {
  it('shows JSON, (none) for absent, and cuts a long value saying how long it was', () => {
    expect(shownValue('Pro')).toBe('"Pro"');
    expect(shownValue(null)).toBe('null');
    expect(shownValue(undefined)).toBe('(none)');
    const long = shownValue('x'.repeat(500), 20);
    expect(long).toBe(`"${'x'.repeat(18)}… (502 chars)`);
  });

  it('never cuts inside a character, and escapes control characters so nothing redraws the terminal', () => {
    expect(cut('😀😀😀😀', 3)).toBe('😀😀… (8 chars)');
    expect(cut('red\x1b[31m', 80)).toBe('red\\x1b[31m');
    expect(shownValue('a\u2028b')).toBe('"a\\x2028b"');
  });
});

describe('recordLines', () => {
  it('names the record on its first field and aligns the others under it', () => {
    const lines = recordLines({ type: 'product', id: 'prod_x', before: null, after: { name: 'Pro', active: true } });
    expect(lines).toEqual(['  product prod_x (created)  name: (none) → "Pro"', '                            active: (none) → true']);
    expect(recordLines({ type: 'price', id: 'price_1', before: { unit_amount: 1000 }, after: { unit_amount: 2000 } })).toEqual(['  price price_1  unit_amount: 1000 → 2000']);
    expect(recordLines({ type: 'customer', id: 'cus_1', before: { email: 'a@b.test' }, after: null })).toEqual(['  customer cus_1 (deleted)  email: "a@b.test" → (none)']);
  });

  it('says so when a record is written unchanged, and counts the fields past the limit', () => {
    expect(recordLines({ type: 'price', id: 'p', before: { a: 1 }, after: { a: 1 } })).toEqual(['  price p (unchanged)']);
    const many = Object.fromEntries(Array.from({ length: 45 }, (_, i) => [`f${i}`, i]));
    const lines = recordLines({ type: 'thing', id: 't', before: null, after: many });
    expect(lines).toHaveLength(41);
    expect(lines.at(-1)).toBe(`${' '.repeat(2 + 'thing t (created)'.length + 2)}… 5 more fields (--json shows them all)`);
  });

  it('escapes a hostile type, id and field name', () => {
    const [line] = recordLines({ type: 'x\x1b]0;', id: 'id\nnext', before: null, after: { 'f\r': 1 } });
    expect(line).toBe('  x\\x1b]0; id\\x0anext (created)  ["f\\r"]: (none) → 1');
  });
});

describe('changeLines and changesetDiff', () => {
  it('heads a change with its twin, request, status and state; shows the record it is about and counts the rest', () => {
    expect(changeLines(productCreated(), 2)).toEqual([
      'change 1 of 2  stripe  POST /v1/products  200  landed',
      '  product prod_x (created)  id: (none) → "prod_x"',
      '                            name: (none) → "Pro"',
      '                            active: (none) → true',
      '                            metadata.tier: (none) → "gold"',
      '  + 1 more record it wrote (__idempotency; --internal shows them)',
    ]);
    const all = changeLines(productCreated(), 1, [], { ...DEFAULT_LIMITS, internal: true });
    expect(all.at(-1)).toBe('  __idempotency key-1 (created)  status: (none) → 200');
  });

  it('--type: only the records of the types named, the others counted', () => {
    const change = { ...productCreated(), writes: [...(productCreated().writes as object[]), { type: 'event', id: 'evt_1', before: null, after: { type: 'product.created' } }, { type: 'ix.product', id: '1', before: null, after: 1 }, { type: 'account', id: 'a', before: null, after: {} }, { type: 'by.x', id: '2', before: null, after: 2 }] };
    const lines = changeLines(change, 1, [], { ...DEFAULT_LIMITS, types: ['product'] });
    expect(lines.filter((l) => !l.startsWith(' '.repeat(4)))).toEqual([
      'change 1 of 1  stripe  POST /v1/products  200  landed',
      '  product prod_x (created)  id: (none) → "prod_x"',
      '  + 5 records of other types (__idempotency, event, ix.product, …)',
    ]);
  });

  it('shows the query, a change that wrote nothing, and the receipts of that change only', () => {
    const change: WireChange = { index: 1, twin: 'github', request: { method: 'DELETE', path: '/repos/acme/shop/labels/bug', query: 'x=1' }, status: 204, writes: [], state: 'deployed' };
    const receipts = [
      { change: 0, twin: 'github', at: 'T0', ok: true, status: 201, request: { method: 'POST', url: 'https://api.github.com/x' }, ids: {} },
      { change: 1, twin: 'github', at: 'T1', ok: true, status: 204, request: { method: 'DELETE', url: 'https://api.github.com/repos/acme/shop/labels/bug' }, ids: {} },
    ];
    expect(changeLines(change, 2, receipts)).toEqual([
      'change 2 of 2  github  DELETE /repos/acme/shop/labels/bug?x=1  204  deployed',
      '  (wrote no record)',
      '  deployed at T1: 204 DELETE https://api.github.com/repos/acme/shop/labels/bug',
    ]);
  });

  it('a whole changeset: its changes a blank line apart; what is not a change is skipped', () => {
    const second = { ...productCreated(1), writes: [{ type: 'product', id: 'prod_x', before: { name: 'Pro' }, after: { name: 'Pro 2' } }] };
    const lines = changesetDiff({ changes: [productCreated(0), 'junk', second] });
    expect(lines.filter((l) => l.startsWith('change '))).toEqual(['change 1 of 2  stripe  POST /v1/products  200  landed', 'change 2 of 2  stripe  POST /v1/products  200  landed']);
    expect(lines[lines.indexOf('change 2 of 2  stripe  POST /v1/products  200  landed') - 1]).toBe('');
    expect(lines.at(-1)).toBe('  product prod_x  name: "Pro" → "Pro 2"');
    expect(changesetDiff({ changes: 'not a list' })).toEqual([]);
  });
});

describe('receipts, verifications, approvals', () => {
  it('a receipt: deployed with the ids it mapped, or FAILED with the error', () => {
    expect(receiptLine({ ok: true, at: 'T', status: 200, request: { method: 'POST', url: 'https://api.stripe.com/v1/products' }, ids: { prod_x: 'prod_Real1' } })).toBe('deployed at T: 200 POST https://api.stripe.com/v1/products; prod_x → prod_Real1');
    expect(receiptLine({ ok: false, at: 'T', status: 402, request: { method: 'POST', url: 'https://api.stripe.com/v1/charges' }, error: 'card declined' })).toBe('FAILED at T: 402 POST https://api.stripe.com/v1/charges: card declined');
    expect(receiptLine({ ok: false, at: 'T', status: null, request: { method: 'POST', url: 'https://x' }, error: 'timeout' })).toBe('FAILED at T: POST https://x: timeout');
  });

  it('a verification: pass, FAIL with what failed, or made on an earlier version', () => {
    expect(verificationText(null)).toBe('not yet (kit world changeset verify <name>)');
    expect(verificationText({ pass: true, checks: 3, changes: 2, at: 'T', current: true, failures: [] })).toBe('pass: 3 checks over 2 changes at T');
    const failed = { pass: false, checks: 1, changes: 3, at: 'T', current: true, failures: [{ change: 2, twin: 'stripe', check: 'no-yearly', failures: ['yearly prices are not sold yet: price_1', 'and \x1b[2J'] }] };
    expect(verificationText(failed)).toBe('FAIL: 1 failing verdict, 1 check over 3 changes at T');
    expect(verificationFailures(failed)).toEqual(['change 3  stripe  no-yearly: yearly prices are not sold yet: price_1; and \\x1b[2J']);
    expect(verificationText({ pass: true, checks: 1, at: 'T', current: false })).toBe('pass: 1 check at T (an earlier version: verify again)');
  });

  it('an approval, with its note, marked when made on an earlier version', () => {
    expect(approvalLine({ as: 'alice@acme.test', at: 'T', current: true, note: 'looks right' })).toBe('alice@acme.test at T  "looks right"');
    expect(approvalLine({ as: 'bob', at: 'T', current: false, note: null })).toBe('bob at T (an earlier version)');
  });
});

describe('a record the twin keeps as { s, o }', () => {
  it('reads as the vendor\'s object, and the change shows the object its answer names', () => {
    const change: WireChange = {
      index: 0,
      twin: 'stripe',
      request: { method: 'POST', path: '/v1/products' },
      status: 200,
      answer: { id: 'prod_1', object: 'product' },
      state: 'landed',
      writes: [
        { type: 'account', id: 'acct_1', before: { n: 1 }, after: { n: 2 } },
        { type: 'product', id: 'acct_1/prod_1', before: null, after: { s: 17, o: { id: 'prod_1', name: 'Pro' } } },
        { type: 'event', id: 'acct_1/evt_1', before: null, after: { s: 18, o: { id: 'evt_1', type: 'product.created' } } },
      ],
    };
    expect(changeLines(change, 1)).toEqual([
      'change 1 of 1  stripe  POST /v1/products  200  landed',
      '  product acct_1/prod_1 (created)  id: (none) → "prod_1"',
      '                                   name: (none) → "Pro"',
      '  + 2 more records it wrote (account, event; --internal shows them)',
    ]);
  });
});
