import { describe, expect, it } from 'vitest';
import { pathOf, placeOf, resourceOfId, sectionOf, titleOf, viewOfSearch, type Place } from './routes.js';

describe('the mirror reads Stripe API paths as its own URLs', () => {
  it('shows a list at its API path, with the cursor and the filters that list takes', () => {
    expect(placeOf('/v1/customers')).toEqual({ view: { kind: 'list', resource: 'customers', query: {} }, account: null });
    expect(placeOf('/v1/customers', '?starting_after=cus_9&email=a@b.co&status=paid').view)
      .toEqual({ kind: 'list', resource: 'customers', query: { starting_after: 'cus_9', email: 'a@b.co' } });
    expect(placeOf('/v1/invoices', 'status=open&ending_before=in_1').view)
      .toEqual({ kind: 'list', resource: 'invoices', query: { ending_before: 'in_1', status: 'open' } });
    // Both cursors: Stripe refuses that, the mirror keeps the later page.
    expect(placeOf('/v1/payment_intents', '?starting_after=pi_2&ending_before=pi_1').view)
      .toEqual({ kind: 'list', resource: 'payment_intents', query: { starting_after: 'pi_2' } });
  });

  it('shows an object at its API path, also from a path below it', () => {
    expect(placeOf('/v1/customers/cus_00002aXk9Qe3').view).toEqual({ kind: 'detail', resource: 'customers', id: 'cus_00002aXk9Qe3' });
    expect(placeOf('/v1/payment_intents/pi_123/').view).toEqual({ kind: 'detail', resource: 'payment_intents', id: 'pi_123' });
    expect(placeOf('/v1/customers/cus_1/payment_methods').view).toEqual({ kind: 'detail', resource: 'customers', id: 'cus_1' });
    expect(placeOf('/v1/invoices/in_1/lines').view).toEqual({ kind: 'detail', resource: 'invoices', id: 'in_1' });
    // A product's own id, percent-encoded in the path.
    expect(placeOf('/v1/products/gold%20plan').view).toEqual({ kind: 'object', path: '/v1/products/gold%20plan', query: '' });
    expect(placeOf('/v1/products/gold-plan').view).toEqual({ kind: 'detail', resource: 'products', id: 'gold-plan' });
  });

  it('shows any other Stripe path as the API answers it, and nothing outside /v1', () => {
    expect(placeOf('/v1/balance').view).toEqual({ kind: 'object', path: '/v1/balance', query: '' });
    expect(placeOf('/v1/checkout/sessions', '?limit=3&account=acct_AAAAAAAAAAAAAAAA').view).toEqual({ kind: 'object', path: '/v1/checkout/sessions', query: 'limit=3' });
    expect(placeOf('/mirror/').view).toEqual({ kind: 'home' });
    expect(placeOf('/').view).toEqual({ kind: 'home' });
    expect(placeOf('/v2/core/events').view).toEqual({ kind: 'not_found', path: '/v2/core/events' });
    expect(placeOf('/v1/customers/%E0%A4%A').view.kind).toBe('object');
  });

  it('names the account in the query, and ignores one that is not an account id', () => {
    expect(placeOf('/v1/customers', '?account=acct_ABCdef0123456789').account).toBe('acct_ABCdef0123456789');
    expect(placeOf('/v1/customers', '?account=../../x').account).toBeNull();
  });

  it('writes a place back as the path it was read from', () => {
    const places: Place[] = [
      { view: { kind: 'list', resource: 'customers', query: {} }, account: null },
      { view: { kind: 'list', resource: 'customers', query: { email: 'a+b@c.co', starting_after: 'cus_1' } }, account: 'acct_ABCdef0123456789' },
      { view: { kind: 'list', resource: 'subscriptions', query: { status: 'canceled', ending_before: 'sub_1' } }, account: null },
      { view: { kind: 'detail', resource: 'webhook_endpoints', id: 'we_1' }, account: null },
      { view: { kind: 'object', path: '/v1/balance', query: '' }, account: 'acct_ABCdef0123456789' },
    ];
    for (const place of places) {
      const written = pathOf(place);
      const q = written.indexOf('?');
      expect(placeOf(q < 0 ? written : written.slice(0, q), q < 0 ? '' : written.slice(q))).toEqual(place);
    }
    expect(pathOf({ view: { kind: 'home' }, account: null })).toBe('/v1/customers');
    expect(pathOf({ view: { kind: 'detail', resource: 'customers', id: 'cus_1' }, account: 'acct_ABCdef0123456789' })).toBe('/v1/customers/cus_1?account=acct_ABCdef0123456789');
  });

  it('opens an id by its prefix, an email as customers with it, and lights the navigation entry a page belongs to', () => {
    expect(resourceOfId('pi_3Abc')).toBe('payment_intents');
    expect(resourceOfId('prod_x')).toBe('products');
    expect(resourceOfId('gold-plan')).toBeNull();
    expect(viewOfSearch(' cus_1 ')).toEqual({ kind: 'detail', resource: 'customers', id: 'cus_1' });
    expect(viewOfSearch('jenny@example.com')).toEqual({ kind: 'list', resource: 'customers', query: { email: 'jenny@example.com' } });
    expect(viewOfSearch('pm_123')).toEqual({ kind: 'object', path: '/v1/payment_methods/pm_123', query: '' });
    expect(viewOfSearch('hello world')).toBeNull();
    expect(sectionOf({ kind: 'detail', resource: 'charges', id: 'ch_1' })).toBe('payment_intents');
    expect(sectionOf({ kind: 'detail', resource: 'prices', id: 'price_1' })).toBe('products');
    expect(titleOf(placeOf('/v1/webhook_endpoints/we_1').view)).toBe('Webhook endpoint we_1');
    expect(titleOf(placeOf('/v1/products').view)).toBe('Product catalog');
  });
});
