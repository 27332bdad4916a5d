import { describe, expect, it } from 'vitest';
import { idsLearnt, mappedBody, targetUrl, withheldSecrets } from './deploy.js';

const request = (method: string, path: string, body = '', contentType: string | null = 'application/json') => ({ request: { method, path, query: '', contentType, body } });

describe('deploy: ids mapped from the twin to the root', () => {
  it('maps a counted id only within the collection it was made in', () => {
    const ids = new Map(Object.entries(idsLearnt({ method: 'POST', path: '/repos/acme/shop/labels' }, { id: 3, name: 'triage' }, { id: 4, name: 'triage' })));
    expect([...ids]).toEqual([['labels/3', '4']]);
    const root = 'https://api.github.com/repos/acme/shop';
    expect(targetUrl(root, request('POST', '/repos/acme/shop/issues/3/labels'), ids)).toBe('https://api.github.com/repos/acme/shop/issues/3/labels');
    expect(targetUrl(root, request('PATCH', '/repos/acme/shop/labels/3'), ids)).toBe('https://api.github.com/repos/acme/shop/labels/4');
    // A number in a body maps only under a field naming its collection.
    ids.set('milestones/3', '7');
    expect(JSON.parse(mappedBody(request('POST', '/repos/acme/shop/issues', JSON.stringify({ title: '3', milestone: 3, per_page: 3 })), ids))).toEqual({ title: '3', milestone: 7, per_page: 3 });
  });

  it('learns an issue by its number, each object of an answered list, and nothing counted from an update', () => {
    expect(idsLearnt({ method: 'POST', path: '/repos/acme/shop/issues' }, { id: 11, number: 6 }, { id: 90, number: 8 })).toEqual({ 'issues/6': '8' });
    expect(idsLearnt({ method: 'POST', path: '/repos/acme/shop/issues/6/labels' }, [{ id: 3 }, { id: 1 }], [{ id: 4 }, { id: 1 }])).toEqual({ 'labels/3': '4' });
    expect(idsLearnt({ method: 'PATCH', path: '/repos/acme/shop/labels/triage' }, { id: 3 }, { id: 4 })).toEqual({});
  });

  it('maps a string id wherever it appears, at any depth, in path, form and JSON', () => {
    const ids = new Map(Object.entries(idsLearnt({ method: 'POST', path: '/v1/products' }, { id: 'prod_twin', default_price: { id: 'price_twin' } }, { id: 'prod_real', default_price: { id: 'price_real' } })));
    expect([...ids].sort()).toEqual([
      ['price_twin', 'price_real'],
      ['prod_twin', 'prod_real'],
    ]);
    expect(targetUrl('https://api.stripe.com', request('POST', '/v1/products/prod_twin'), ids)).toBe('https://api.stripe.com/v1/products/prod_real');
    expect(mappedBody(request('POST', '/v1/prices', 'product=prod_twin&unit_amount=900', 'application/x-www-form-urlencoded'), ids)).toBe('product=prod_real&unit_amount=900');
  });

  it('keeps no secret of the root’s answer', () => {
    expect(withheldSecrets({ id: 'we_1', secret: 'whsec_x', nested: [{ client_secret: 'pi_secret_y', secrets: 'kept' }], config: { secret: '' } })).toEqual({ id: 'we_1', secret: '[withheld]', nested: [{ client_secret: '[withheld]', secrets: 'kept' }], config: { secret: '' } });
  });
});
