import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStorage } from '../store/index.js';
import { fixtureTwin, openTestWorld, type TestWorld } from '../../test/helpers/world.js';
import type { Entry } from '../world/types.js';
import { continueTrace, Deliverer, type DeliveryResult } from './deliveries.js';
import { stripeSignature } from '../roots/signatures.js';

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
}

/** A receiver answering each request with the next status of `statuses` (then 200). */
async function receiver(statuses: number[] = []): Promise<{ url: string; got: Received[]; server: Server; next: Promise<Received> }> {
  const got: Received[] = [];
  let resolveNext: (r: Received) => void = () => {};
  const state = { next: new Promise<Received>((r) => (resolveNext = r)) };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const r = { headers: req.headers, body };
      got.push(r);
      res.statusCode = statuses.shift() ?? 200;
      res.end();
      resolveNext(r);
      state.next = new Promise<Received>((x) => (resolveNext = x));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const out = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got, server, get next() { return state.next; } };
  return out;
}

const TRACE = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

/** The body of `POST /notify/v1/notify`: the delivery the fixture twin emits (test/helpers/twins/notify). */
function delivery(url: string, extra: Record<string, unknown> = {}): unknown {
  return { id: 'd1', url, headers: { 'x-event': 'greeting.created' }, body: JSON.stringify({ id: 'evt_1', type: 'greeting.created', object: 'event' }), ...extra };
}

/** A world serving the fixture twin that emits the webhook deliveries it is asked for. */
async function notifyWorld(options: Parameters<typeof openTestWorld>[0] = {}): Promise<TestWorld> {
  return openTestWorld({ vendors: [], more: [await fixtureTwin('notify')], ...options });
}

let world: TestWorld | undefined;
const servers: Server[] = [];
afterEach(async () => {
  await world?.close();
  world = undefined;
  for (const s of servers.splice(0)) s.close();
});

describe('outbound webhooks', () => {
  it('sends a delivery after the request is answered, with the trace continued in a new span', async () => {
    const hook = await receiver();
    servers.push(hook.server);
    world = await notifyWorld();
    const arrived = hook.next;
    const answer = await world.vendor('POST', '/notify/v1/notify', delivery(hook.url), { traceparent: TRACE });
    expect(answer.json).toEqual({ queued: true });
    const got = await arrived;
    expect(got.headers['x-event']).toBe('greeting.created');
    expect(JSON.parse(got.body)).toMatchObject({ id: 'evt_1' });
    const tp = String(got.headers['traceparent']);
    expect(tp.split('-')[1]).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(tp.split('-')[2]).not.toBe('b7ad6b7169203331');
  });

  it("signs at send time as Stripe does, so the official SDK's constructEvent accepts it", async () => {
    const hook = await receiver();
    servers.push(hook.server);
    world = await notifyWorld();
    const arrived = hook.next;
    await world.vendor('POST', '/notify/v1/notify', delivery(hook.url, { sign: { scheme: 'stripe', secret: 'whsec_test_secret' } }));
    const got = await arrived;
    const stripe = new Stripe('sk_test_x');
    const event = stripe.webhooks.constructEvent(got.body, String(got.headers['stripe-signature']), 'whsec_test_secret');
    expect(event.id).toBe('evt_1');
    expect(() => stripe.webhooks.constructEvent(got.body, String(got.headers['stripe-signature']), 'whsec_other')).toThrow();
  });

  it('retries a failed delivery with backoff until it is taken', async () => {
    const hook = await receiver([500, 503]);
    servers.push(hook.server);
    world = await notifyWorld({ webhooks: { baseDelayMs: 20 } });
    await world.vendor('POST', '/notify/v1/notify', delivery(hook.url));
    await world.runner.deliverer.idle();
    expect(hook.got).toHaveLength(3);
    expect(world.runner.deliverer.pending()).toBe(0);
  });

  it('keeps an undelivered webhook across a restart and sends it then', async () => {
    const storage = new MemoryStorage();
    const hook = await receiver();
    servers.push(hook.server);
    const down = 'http://127.0.0.1:9/hook'; // nothing listens on the discard port
    world = await notifyWorld({ storage, webhooks: { baseDelayMs: 60_000 } });
    await world.vendor('POST', '/notify/v1/notify', delivery(down));
    await new Promise((r) => setTimeout(r, 200));
    expect(world.runner.deliverer.pending()).toBe(1);
    await world.close();
    world = undefined;

    // The outbox is in storage: a new runner on it retries (here, to a receiver that is up).
    const outbox = [...storage.range<{ delivery: { url: string } }>({ start: ['#runner', 'test', 'outbox'], end: ['#runner', 'test', 'outbox', '\uffff'] })];
    expect(outbox).toHaveLength(1);
    storage.transact((w) => {
      const item = outbox[0]!;
      w.put(item.key, { ...item.value, delivery: { ...item.value.delivery, url: hook.url }, nextAt: 0 });
    });
    const arrived = hook.next;
    world = await notifyWorld({ storage });
    expect(JSON.parse((await arrived).body)).toMatchObject({ id: 'evt_1' });
  });
});

describe('the outbox', () => {
  const OUTBOX = ['#runner', 'w', 'outbox'];

  /** An entry asking for one delivery to `url`. */
  function asking(url: string, position = 1): Entry {
    return {
      position,
      occurredAt: '2026-01-01T00:00:00.000Z',
      cause: { kind: 'request' },
      writes: [],
      events: [{ type: 'webhook.delivery', data: { url, headers: {}, body: '{}' } }],
    } as unknown as Entry;
  }

  /** A fetch that records the URLs it is asked for and answers each with `status(url)`. */
  function recorder(status: (url: string) => number): { fetch: typeof fetch; urls: string[] } {
    const urls: string[] = [];
    const fake = (async (url: string) => {
      urls.push(url);
      return new Response(null, { status: status(url) });
    }) as unknown as typeof fetch;
    return { fetch: fake, urls };
  }

  async function until(done: () => boolean): Promise<void> {
    while (!done()) await new Promise((r) => setTimeout(r, 5));
  }

  const deliverers: Deliverer[] = [];
  afterEach(() => {
    for (const d of deliverers.splice(0)) d.close();
  });

  it('sends a new delivery at once while an older one waits for its retry, and retries that one when it is due', async () => {
    const { fetch, urls } = recorder((url) => (url.endsWith('/down') && urls.filter((u) => u === url).length === 1 ? 503 : 200));
    const d = new Deliverer({ storage: new MemoryStorage(), world: 'w', fetch, baseDelayMs: 400 });
    deliverers.push(d);
    d.enqueue('hello', asking('http://hooks.test/down'));
    await until(() => urls.length === 1);
    expect(d.pending()).toBe(1); // in flight, then waiting for its retry
    d.enqueue('hello', asking('http://hooks.test/up', 2));
    await until(() => urls.length === 2);
    expect(urls).toEqual(['http://hooks.test/down', 'http://hooks.test/up']);
    await d.idle();
    expect(urls).toEqual(['http://hooks.test/down', 'http://hooks.test/up', 'http://hooks.test/down']);
    expect(d.pending()).toBe(0);
  });

  it('walks the stored outbox once, when it starts, however many deliveries it queues and sends', async () => {
    const storage = new MemoryStorage();
    let walks = 0;
    const range = storage.range.bind(storage);
    storage.range = ((options) => {
      walks++;
      return range(options);
    }) as MemoryStorage['range'];
    const { fetch, urls } = recorder((url) => (url.endsWith('/down') ? 503 : 200));
    const d = new Deliverer({ storage, world: 'w', fetch, baseDelayMs: 3_600_000 });
    deliverers.push(d);
    for (let i = 1; i <= 50; i++) d.enqueue('hello', asking(`http://hooks.test/${i % 2 === 0 ? 'up' : 'down'}`, i));
    await until(() => urls.length === 50);
    await until(() => d.pending() === 25);
    expect(walks).toBe(1);
  });

  it("calls the platform's fetch as a plain function: workerd refuses it called as a method (Illegal invocation), so no webhook left the edge", async () => {
    const platformFetch = globalThis.fetch;
    const urls: string[] = [];
    // What workerd's fetch checks: its `this` is the global scope (or nothing).
    globalThis.fetch = async function strictFetch(this: unknown, url: string | URL | Request) {
      if (this !== undefined && this !== globalThis) throw new TypeError('Illegal invocation: function called with incorrect `this` reference.');
      urls.push(String(url));
      return new Response(null, { status: 204 });
    } as typeof fetch;
    try {
      const results: DeliveryResult[] = [];
      const d = new Deliverer({ storage: new MemoryStorage(), world: 'w', onResult: (_twin, result) => results.push(result) });
      deliverers.push(d);
      d.enqueue('hello', asking('http://hooks.test/platform'));
      await until(() => results.length === 1);
      expect(results[0]).toMatchObject({ status: 204, ok: true, error: null });
      expect(urls).toEqual(['http://hooks.test/platform']);
    } finally {
      globalThis.fetch = platformFetch;
    }
  });

  it('keeps a delivery that fails while the deliverer closes, and the next start sends it', async () => {
    const storage = new MemoryStorage();
    let answer: ((status: number) => void) | null = null;
    const slow = (async () => new Response(null, { status: await new Promise<number>((r) => (answer = r)) })) as unknown as typeof fetch;
    const results: DeliveryResult[] = [];
    const first = new Deliverer({ storage, world: 'w', fetch: slow, baseDelayMs: 1, onResult: (_twin, result) => results.push(result) });
    deliverers.push(first);
    first.enqueue('hello', asking('http://hooks.test/flaky'));
    await until(() => answer !== null); // the attempt is in flight
    first.close();
    answer!(503);
    await until(() => results.length === 1);
    expect(results[0]).toMatchObject({ status: 503, ok: false, willRetry: true });
    expect(storage.get([...OUTBOX, '000000000001'])).toMatchObject({ attempt: 1 });

    const { fetch, urls } = recorder(() => 200);
    const second = new Deliverer({ storage, world: 'w', fetch });
    deliverers.push(second);
    await second.idle();
    expect(urls).toEqual(['http://hooks.test/flaky']);
    expect(second.pending()).toBe(0);
  });

  it('resumes a stored outbox in the order its deliveries fall due, leaves those not due yet, and numbers new ones after the last', async () => {
    const storage = new MemoryStorage();
    // 200 deliveries, stored in key order but due in another: nextAt ties are broken by key.
    const due = Array.from({ length: 200 }, (_, i) => ({ id: String(i + 1).padStart(12, '0'), nextAt: 1_000 + ((i * 7919) % 97) }));
    storage.transact((w) => {
      for (const { id, nextAt } of due) w.put([...OUTBOX, id], { twin: 'hello', delivery: { url: `http://hooks.test/${id}`, headers: {}, body: '{}' }, traceparent: null, attempt: 0, nextAt });
      w.put([...OUTBOX, '000000000201'], { twin: 'hello', delivery: { url: 'http://hooks.test/later', headers: {}, body: '{}' }, traceparent: null, attempt: 1, nextAt: Date.now() + 3_600_000 });
    });
    const { fetch, urls } = recorder(() => 200);
    const d = new Deliverer({ storage, world: 'w', fetch, concurrency: 1 });
    deliverers.push(d);
    expect(d.pending()).toBe(201);
    await until(() => urls.length === 200);
    const expected = [...due].sort((a, b) => a.nextAt - b.nextAt || (a.id < b.id ? -1 : 1)).map(({ id }) => `http://hooks.test/${id}`);
    expect(urls).toEqual(expected);
    await new Promise((r) => setTimeout(r, 20));
    expect(urls).toHaveLength(200); // the one due in an hour waits
    expect(d.pending()).toBe(1);

    d.enqueue('hello', asking('http://hooks.test/new'));
    const keys = [...storage.range({ start: OUTBOX, end: [...OUTBOX, '\uffff'] })].map(({ key }) => key[key.length - 1]);
    expect(keys).toContain('000000000201');
    expect(keys).toContain('000000000202');
  });
});

describe('signing and tracing helpers', () => {
  it('continues only well-formed traces', () => {
    expect(continueTrace('garbage')).toBeNull();
    expect(continueTrace(undefined)).toBeNull();
    expect(continueTrace(TRACE)).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
  });

  it('makes the Stripe signature over "t.body"', () => {
    expect(stripeSignature('whsec_x', '{}', 1700000000)).toMatch(/^t=1700000000,v1=[0-9a-f]{64}$/);
  });
});
