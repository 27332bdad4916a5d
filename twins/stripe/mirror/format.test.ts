import { describe, expect, it } from 'vitest';
import { chargeStatus, dateTime, eventSentence, pagerState, paymentStatus, priceText, statusOf } from './format.js';

describe('the mirror writes instants, statuses, prices and events as Stripe\'s dashboard does', () => {
  it('writes unix seconds in UTC', () => {
    expect(dateTime(Date.UTC(2026, 4, 1, 9, 0) / 1000)).toBe('May 1, 2026, 9:00 AM');
    expect(dateTime(undefined)).toBe('—');
  });

  it('names statuses as the dashboard\'s badges do', () => {
    expect(statusOf('past_due')).toEqual({ label: 'Past due', tone: 'danger' });
    expect(statusOf('requires_capture').label).toBe('Uncaptured');
    expect(statusOf('something_new')).toEqual({ label: 'Something new', tone: 'neutral' });
    expect(paymentStatus({ status: 'succeeded', amount: 1000, latest_charge: { amount_refunded: 1000, refunded: true } }).label).toBe('Refunded');
    expect(paymentStatus({ status: 'succeeded', amount: 1000, latest_charge: { amount_refunded: 300, refunded: false } }).label).toBe('Partially refunded');
    expect(paymentStatus({ status: 'succeeded', amount: 1000, latest_charge: 'ch_1' })).toEqual({ label: 'Succeeded', tone: 'success' });
    expect(paymentStatus({ status: 'requires_payment_method', amount: 1000, last_payment_error: { decline_code: 'insufficient_funds' } })).toEqual({ label: 'Failed', tone: 'danger' });
    expect(paymentStatus({ status: 'requires_payment_method', amount: 1000, last_payment_error: null }).label).toBe('Incomplete');
    expect(chargeStatus({ status: 'succeeded', captured: false }).label).toBe('Uncaptured');
  });

  it('writes prices and events as sentences', () => {
    expect(priceText({ unit_amount: 1000, currency: 'usd', recurring: { interval: 'month', interval_count: 1 } })).toBe('$10.00 / month');
    expect(priceText({ unit_amount: 500, currency: 'usd', recurring: { interval: 'month', interval_count: 3 } })).toBe('$5.00 every 3 months');
    expect(priceText({ unit_amount: 2000, currency: 'eur', recurring: null })).toBe('€20.00');
    expect(priceText({ unit_amount: 500, currency: 'jpy', recurring: { interval: 'year', interval_count: 1 } })).toBe('¥500 / year');
    expect(eventSentence('customer.created', { id: 'cus_1' })).toBe('A new customer cus_1 was created');
    expect(eventSentence('payment_intent.succeeded', { id: 'pi_1', amount: 2000, currency: 'usd' })).toBe('The payment pi_1 for $20.00 succeeded');
    expect(eventSentence('customer.subscription.updated', { id: 'sub_1' })).toBe('The subscription sub_1 was updated');
    expect(eventSentence('invoice.payment_failed', { id: 'in_1' })).toBe('The invoice in_1 failed');
    expect(eventSentence('balance.available', {})).toBe('The balance: available');
  });
});

describe('the cursor pager', () => {
  const page = (ids: string[], has_more: boolean) => ({ data: ids.map((id) => ({ id })), has_more });

  it('offers Next on the first page only when Stripe says there is more', () => {
    expect(pagerState({}, page(['c3', 'c2'], true))).toEqual({ previous: null, next: 'c2' });
    expect(pagerState({}, page(['c3', 'c2'], false))).toEqual({ previous: null, next: null });
  });

  it('after starting_after offers Previous before its first item', () => {
    expect(pagerState({ starting_after: 'c2' }, page(['c1', 'c0'], false))).toEqual({ previous: 'c1', next: null });
    expect(pagerState({ starting_after: 'c2' }, page(['c1', 'c0'], true))).toEqual({ previous: 'c1', next: 'c0' });
  });

  it('after ending_before offers Previous only when there are newer items, and always Next', () => {
    expect(pagerState({ ending_before: 'c1' }, page(['c3', 'c2'], false))).toEqual({ previous: null, next: 'c2' });
    expect(pagerState({ ending_before: 'c1' }, page(['c3', 'c2'], true))).toEqual({ previous: 'c3', next: 'c2' });
    expect(pagerState({ ending_before: 'c9' }, page([], false))).toEqual({ previous: null, next: null });
  });
});
