import { describe, expect, it } from 'vitest';
import { idsLearnt, isSecretField, mappedBody, targetUrl } from './deploy.js';
import { mergeRecord } from './merge.js';

const at = { twin: 'stripe', type: 'customer', id: 'cus_1' };
const never = (): undefined => undefined;

describe('a three-way merge of one record', () => {
  it('takes what one side changed, keeps what both changed alike, and names a field both changed apart', () => {
    const base = { email: 'a@x', name: 'A', metadata: { tier: 'free', seat: '1' } };
    const ours = { email: 'ours@x', name: 'A', metadata: { tier: 'pro', seat: '1' } };
    const theirs = { email: 'a@x', name: 'B', metadata: { tier: 'team', seat: '2' } };
    const m = mergeRecord(at, base, ours, theirs, never);
    expect(m.value).toEqual({ email: 'ours@x', name: 'B', metadata: { tier: 'pro', seat: '2' } });
    expect(m.conflicts).toEqual([{ key: 'stripe/customer/cus_1#metadata.tier', ...at, field: 'metadata.tier', base: 'free', ours: 'pro', theirs: 'team' }]);
    const resolved = mergeRecord(at, base, ours, theirs, (k) => (k === 'stripe/customer/cus_1#metadata.tier' ? 'theirs' : undefined));
    expect(resolved.conflicts).toEqual([]);
    expect(resolved.value).toMatchObject({ metadata: { tier: 'team' } });
  });

  it('makes a deletion against a change a conflict on the whole record', () => {
    const m = mergeRecord(at, { name: 'A' }, null, { name: 'B' }, never);
    expect(m.conflicts).toEqual([expect.objectContaining({ field: null, ours: null, theirs: { name: 'B' } })]);
    expect(mergeRecord(at, { name: 'A' }, null, { name: 'A' }, never)).toEqual({ value: null, conflicts: [] });
  });
});

describe('a change performed on the root', () => {
  const ids = new Map([['prod_twin', 'prod_REAL'], ['hooks/7', '123456']]);

  it('goes below the root, without repeating the part of the path the root already names', () => {
    expect(targetUrl('https://api.stripe.com', { request: { method: 'POST', path: '/v1/prices', query: '', contentType: null, body: '' } }, ids)).toBe('https://api.stripe.com/v1/prices');
    expect(targetUrl('https://api.github.com/repos/acme/shop', { request: { method: 'PATCH', path: '/repos/acme/shop/hooks/7', query: '', contentType: null, body: '' } }, ids)).toBe('https://api.github.com/repos/acme/shop/hooks/123456');
    expect(targetUrl('http://127.0.0.1:4610/local/real/stripe', { request: { method: 'POST', path: '/v1/products/prod_twin', query: 'expand[]=x', contentType: null, body: '' } }, ids)).toBe('http://127.0.0.1:4610/local/real/stripe/v1/products/prod_REAL?expand[]=x');
  });

  it('names the real ids in a form or JSON body, and learns ids where both answers carry them', () => {
    expect(mappedBody({ request: { method: 'POST', path: '/v1/prices', query: '', contentType: 'application/x-www-form-urlencoded', body: 'product=prod_twin&unit_amount=900' } }, ids)).toBe('product=prod_REAL&unit_amount=900');
    expect(JSON.parse(mappedBody({ request: { method: 'POST', path: '/x', query: '', contentType: 'application/json', body: '{"hook_id":7,"name":"prod_twin"}' } }, ids))).toEqual({ hook_id: 123456, name: 'prod_REAL' });
    expect(idsLearnt({ method: 'POST', path: '/v1/products' }, { id: 'prod_twin', default_price: { id: 'price_twin' } }, { id: 'prod_REAL', default_price: { id: 'price_REAL' } })).toEqual({ prod_twin: 'prod_REAL', price_twin: 'price_REAL' });
    // A counted id within its collection, an issue by its number.
    expect(idsLearnt({ method: 'POST', path: '/repos/acme/shop/issues' }, { id: 3, number: 5 }, { id: 1001, number: 12 })).toEqual({ 'issues/5': '12' });
    expect(idsLearnt({ method: 'POST', path: '/v1/products' }, { id: 'same' }, { id: 'same' })).toEqual({});
  });
});

describe('a secret field', () => {
  it('is named secret or …_secret, a form key by its last part', () => {
    expect(['secret', 'client_secret', 'webhook[secret]', 'config[webhook_secret]'].map(isSecretField)).toEqual([true, true, true, true]);
    expect(['secrets', 'secretary', 'webhook[secret]x', 'url', 'secret_id'].map(isSecretField)).toEqual([false, false, false, false, false]);
  });
});
