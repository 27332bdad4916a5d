/**
 * Conformance: events delivered to webhook endpoints, signed so that the official SDK's
 * `stripe.webhooks.constructEvent` accepts them, asynchronously, retried, trace continued.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStripeTwin, TEST_KEY, type StripeTwin } from './harness.js';

interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A local endpoint; `failFirst` answers 500 to that many deliveries first. */
class Receiver {
  readonly got: Delivery[] = [];
  private waiters: ((d: Delivery) => void)[] = [];
  private server!: Server;
  failFirst = 0;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const d = { headers: req.headers, body };
        this.got.push(d);
        res.statusCode = this.failFirst-- > 0 ? 500 : 200;
        res.end();
        for (const w of this.waiters.splice(0)) w(d);
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/stripe-webhooks`;
  }

  /** The next delivery whose event has this type. */
  next(type: string): Promise<Delivery> {
    return new Promise((resolve) => {
      const wait = (d: Delivery): void => {
        if ((JSON.parse(d.body) as { type: string }).type === type) resolve(d);
        else this.waiters.push(wait);
      };
      this.waiters.push(wait);
    });
  }

  stop(): void {
    this.server.close();
  }
}

let twin: StripeTwin;
const receiver = new Receiver();
let secret = '';

beforeAll(async () => {
  if (process.env['STRIPE_TWIN_HARNESS'] === 'guest') return;
  await receiver.start();
  twin = await startStripeTwin();
  const endpoint = await twin.stripe.webhookEndpoints.create({ url: receiver.url, enabled_events: ['customer.created', 'customer.updated'] });
  secret = endpoint.secret!;
});
afterAll(async () => {
  await twin?.close();
  if (receiver.url !== '') receiver.stop();
});

// Delivery is the world's (runtime/runner/deliveries.ts): the guest-harness mode has no world to send.
describe.skipIf(process.env['STRIPE_TWIN_HARNESS'] === 'guest')('webhook delivery', () => {
  it('delivers the event, signed so that constructEvent accepts it', async () => {
    const arrived = receiver.next('customer.created');
    const customer = await twin.stripe.customers.create({ email: 'hooked@example.com' });
    const delivery = await arrived;
    const event = twin.stripe.webhooks.constructEvent(delivery.body, String(delivery.headers['stripe-signature']), secret);
    expect(event.type).toBe('customer.created');
    expect((event.data.object as { id: string }).id).toBe(customer.id);
    // The same event the API answers.
    expect((await twin.stripe.events.retrieve(event.id)).type).toBe('customer.created');
    // A wrong secret is refused, as at Stripe.
    expect(() => twin.stripe.webhooks.constructEvent(delivery.body, String(delivery.headers['stripe-signature']), 'whsec_wrong')).toThrow();
  });

  it('delivers only the event types the endpoint enabled', async () => {
    const before = receiver.got.length;
    await twin.stripe.products.create({ name: 'not subscribed' });
    const arrived = receiver.next('customer.updated');
    const c = await twin.stripe.customers.create({ email: 'x@example.com' });
    await twin.stripe.customers.update(c.id, { name: 'X' });
    await arrived;
    const types = receiver.got.slice(before).map((d) => (JSON.parse(d.body) as { type: string }).type);
    expect(types).not.toContain('product.created');
    expect(types).toContain('customer.updated');
  });

  it('retries a delivery the endpoint refused, and continues the request trace', async () => {
    receiver.failFirst = 1;
    const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const created = twin.raw('POST', '/v1/customers', {
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/x-www-form-urlencoded', traceparent: `00-${trace}-00f067aa0ba902b7-01` },
      body: 'email=retry%40example.com',
    });
    const first = receiver.next('customer.created');
    expect((await created).status).toBe(200);
    const refused = await first;
    const retried = await receiver.next('customer.created');
    expect(retried.body).toBe(refused.body);
    for (const d of [refused, retried]) {
      const tp = String(d.headers['traceparent']).split('-');
      expect(tp[1]).toBe(trace);
      expect(tp[2]).not.toBe('00f067aa0ba902b7');
    }
  });
});
