import { createHash, createHmac } from 'node:crypto';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { hex, hmacSha256, sha256, stripeSignature, utf8 } from './hmac.js';

describe('sha256 and hmac in plain JavaScript', () => {
  const samples = ['', 'abc', 'a'.repeat(55), 'a'.repeat(56), 'b'.repeat(64), 'c'.repeat(1000), 'héllo ✓ 𝄞 emoji 🎉'];

  it('agrees with node:crypto on SHA-256 at block edges and for non-ASCII text', () => {
    for (const s of samples) expect(hex(sha256(utf8(s)))).toBe(createHash('sha256').update(s, 'utf8').digest('hex'));
  });

  it('agrees with node:crypto on HMAC-SHA256, also for keys longer than a block', () => {
    for (const key of ['whsec_short', 'k'.repeat(100)]) {
      for (const s of samples) {
        expect(hex(hmacSha256(utf8(key), utf8(s)))).toBe(createHmac('sha256', key).update(s, 'utf8').digest('hex'));
      }
    }
  });

  it('signs webhooks so that stripe.webhooks.constructEvent accepts them, and a changed payload fails', () => {
    const stripe = new Stripe('sk_test_x');
    const secret = 'whsec_test_secret_0123456789';
    const payload = JSON.stringify({ id: 'evt_1', object: 'event', type: 'customer.created', data: { object: { id: 'cus_1', name: 'Zoë' } } });
    const t = Math.floor(Date.now() / 1000);
    const header = stripeSignature(secret, payload, t);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const event = stripe.webhooks.constructEvent(payload, header, secret);
    expect(event.id).toBe('evt_1');
    expect(() => stripe.webhooks.constructEvent(payload.replace('Zoë', 'Zoe'), header, secret)).toThrow();
    expect(() => stripe.webhooks.constructEvent(payload, header, 'whsec_other')).toThrow();
  });
});
