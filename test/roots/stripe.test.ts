/**
 * A Stripe twin with a real account behind it, end to end through the official `stripe`
 * package. There is no internet here, so the real account is another world: its Stripe twin,
 * reached at `https://api.stripe.com` through that world's own proxy and CA — the code path a
 * real root takes, only the credential and the proxy differ. The copy refreshes from it, an app
 * under `kit world attach` reads the copy with the real ids, a change at the real account comes
 * back as a signed webhook to the copy's ingest endpoint, a history cut before the refresh shows
 * the empty twin, and a link forwards a call with the sealed credential.
 */
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAttach, cleanEnv, run, type Built } from '../attach/harness.js';
import { serveVendorWorld, worldApi, type Served } from './served.js';

const REAL = { token: 'tok_real-account-write-token-0123456789ab', readToken: 'tok_r_real-account-read-token-0123456789' };
const COPY = { token: 'tok_copy-world-write-token-0123456789abcd', readToken: 'tok_r_copy-world-read-token-0123456789ab' };

/** The official SDK against a world's Stripe twin at its URL (the world's token as the API key). */
function stripeAt(s: Served): Stripe {
  const url = new URL(s.server.worldUrl);
  const base = Stripe.createNodeHttpClient();
  const httpClient = Object.create(base) as Stripe.HttpClient;
  httpClient.makeRequest = (host, port, path, method, headers, data, protocol, timeout) => base.makeRequest(host, port, `${url.pathname}/stripe${path}`, method, headers, data, protocol, timeout);
  return new Stripe(REAL.token, { host: url.hostname, port: Number(url.port), protocol: 'http', maxNetworkRetries: 0, telemetry: false, httpClient });
}

let real: Served;
let copy: Served;
let built: Built;
let seeded: { customers: Stripe.Customer[]; product: Stripe.Product; price: Stripe.Price; subscription: Stripe.Subscription; endpoint: Stripe.WebhookEndpoint };
let beforeRefresh: string;

beforeAll(async () => {
  [real, built] = await Promise.all([serveVendorWorld('stripe', 'real', REAL), buildAttach()]);
  // The copy reaches the vendor's host as it would the real one, here through the real world's proxy.
  copy = await serveVendorWorld('stripe', 'copy', COPY, { world: real, token: REAL.token });

  const stripe = stripeAt(real);
  const customers = [];
  for (const [name, email] of [['Ada Lovelace', 'ada@example.com'], ['Grace Hopper', 'grace@example.com'], ['Edsger Dijkstra', 'edsger@example.com']] as const) customers.push(await stripe.customers.create({ name, email, metadata: { plan: 'pro' } }));
  const product = await stripe.products.create({ name: 'Pro plan' });
  const price = await stripe.prices.create({ product: product.id, unit_amount: 2500, currency: 'usd', recurring: { interval: 'month' } });
  const subscription = await stripe.subscriptions.create({ customer: customers[0]!.id, items: [{ price: price.id }], collection_method: 'send_invoice', days_until_due: 30 });
  // The real account sends its webhooks to the copy's ingest endpoint, signed with this endpoint's secret.
  const endpoint = await stripe.webhookEndpoints.create({ url: `${copy.server.worldApi}/twins/stripe/ingest`, enabled_events: ['customer.updated'] });
  seeded = { customers, product, price, subscription, endpoint };
}, 120_000);

afterAll(async () => {
  await copy?.server.close();
  await real?.server.close();
  await built?.close();
});

describe('a Stripe twin rooted at a real account', () => {
  it('refreshes from the real account through its host name, with the credential sealed', async () => {
    expect((await worldApi(copy, COPY.token, 'PUT', '/twins/stripe/root', { url: 'https://api.stripe.com' })).status).toBe(200);
    const sealed = await worldApi(copy, COPY.token, 'PUT', '/twins/stripe/credential', { bearer: REAL.token, signingSecret: seeded.endpoint.secret });
    expect(sealed.json).toMatchObject({ sealed: true });
    const empty = await fetch(`${copy.server.worldUrl}/stripe/v1/customers`, { headers: { authorization: `Bearer ${COPY.token}` } });
    expect(((await empty.json()) as { data: unknown[] }).data).toEqual([]);
    expect(empty.headers.get('x-kit-observed-at')).toBeNull();

    beforeRefresh = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 5));
    const refreshed = await worldApi(copy, COPY.token, 'POST', '/twins/stripe/refresh');
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(refreshed.json.refresh).toMatchObject({ ok: true, deleted: 0 });
    expect(refreshed.json.refresh.reads).toBeGreaterThanOrEqual(8);

    const status = (await worldApi(copy, COPY.token, 'GET', '/twins/stripe/status')).json;
    expect(status).toMatchObject({ root: { url: 'https://api.stripe.com', deploy: 'manual' }, credential: { sealed: true }, lastRefresh: { ok: true } });
    expect(status.position).toBeGreaterThan(0);
    for (const path of ['/twins/stripe/status', '/twins', '/log/stripe', '/timeline', '/diff', '/checkpoint/stripe']) {
      const text = (await worldApi(copy, COPY.token, 'GET', path)).text;
      expect(text, path).not.toContain(REAL.token);
      expect(text, path).not.toContain(seeded.endpoint.secret!);
    }
  });

  it('an app under kit world attach reads the copy with the real ids, through the official SDK on its default host', async () => {
    const app = [
      "import Stripe from 'stripe';",
      "const stripe = new Stripe('sk_test_app_key_for_the_copy', { maxNetworkRetries: 0 });",
      'const customers = await stripe.customers.list({ limit: 10 });',
      `const subscription = await stripe.subscriptions.retrieve(${JSON.stringify(seeded.subscription.id)});`,
      `const price = await stripe.prices.retrieve(${JSON.stringify(seeded.price.id)});`,
      'const raw = (await stripe.customers.list({ limit: 1 })).lastResponse;',
      'console.log(JSON.stringify({ customers: customers.data.map((c) => [c.id, c.email]), subscription: [subscription.id, subscription.customer, subscription.items.data[0].price.id], price: [price.id, price.unit_amount], observedAt: raw.headers["x-kit-observed-at"] }));',
    ].join('\n');
    const r = await run(process.execPath, [built.kit, 'world', 'attach', copy.server.worldUrl, '--token', COPY.token, '--', 'node', '--input-type=module', '-e', app], cleanEnv());
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const seen = JSON.parse(r.stdout) as { customers: [string, string][]; subscription: string[]; price: [string, number]; observedAt: string };
    expect(seen.customers.map(([id]) => id).sort()).toEqual(seeded.customers.map((c) => c.id).sort());
    expect(new Map(seen.customers).get(seeded.customers[1]!.id)).toBe('grace@example.com');
    expect(seen.subscription).toEqual([seeded.subscription.id, seeded.customers[0]!.id, seeded.price.id]);
    expect(seen.price).toEqual([seeded.price.id, 2500]);
    expect(Date.parse(seen.observedAt)).toBeGreaterThan(Date.parse(beforeRefresh));
  });

  it('a change at the real account comes back as a signed webhook, folded into the copy', async () => {
    const grace = seeded.customers[1]!;
    await stripeAt(real).customers.update(grace.id, { email: 'grace.hopper@navy.example' });
    let email: string | undefined;
    for (let i = 0; i < 100 && email !== 'grace.hopper@navy.example'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const res = await fetch(`${copy.server.worldUrl}/stripe/v1/customers/${grace.id}`, { headers: { authorization: `Bearer ${COPY.token}` } });
      email = ((await res.json()) as { email?: string }).email;
    }
    expect(email).toBe('grace.hopper@navy.example');
    const log = (await worldApi(copy, COPY.token, 'GET', '/log/stripe')).json.entries as { cause: { kind: string; source?: string } }[];
    expect(log.at(-1)!.cause).toMatchObject({ kind: 'ingest' });
    expect(log.at(-1)!.cause.source).toMatch(/^stripe:evt_/);
    // Forged: refused and kept nowhere.
    const head = log.length;
    const forged = await fetch(`${copy.server.worldApi}/twins/stripe/ingest`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` }, body: '{"id":"evt_forged","type":"customer.deleted","data":{"object":{"id":"x"}}}' });
    expect(forged.status).toBe(401);
    expect(((await worldApi(copy, COPY.token, 'GET', '/log/stripe')).json.entries as unknown[]).length).toBe(head);
  });

  it('a history cut before the refresh shows the empty twin', async () => {
    const cut = (await worldApi(copy, COPY.token, 'GET', `/history?at=${encodeURIComponent(beforeRefresh)}`)).json;
    expect(cut.views.stripe.position).toBe(0);
    const now = (await worldApi(copy, COPY.token, 'GET', `/history?at=${encodeURIComponent(new Date().toISOString())}`)).json;
    expect(now.views.stripe.position).toBeGreaterThan(0);
  });

  it('a link forwards a call to the vendor with the sealed credential, keeping nothing', async () => {
    expect((await worldApi(copy, COPY.token, 'PUT', '/links/stripe-live', { origin: 'https://api.stripe.com' })).status).toBe(200);
    await worldApi(copy, COPY.token, 'PUT', '/twins/stripe-live/credential', { bearer: REAL.token });
    const head = (await worldApi(copy, COPY.token, 'GET', '/twins/stripe/status')).json.position;
    const res = await fetch(`${copy.server.worldUrl}/stripe-live/v1/customers/${seeded.customers[2]!.id}`, { headers: { 'x-kit-token': COPY.token } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { email: string }).email).toBe('edsger@example.com');
    expect((await worldApi(copy, COPY.token, 'GET', '/twins/stripe/status')).json.position).toBe(head);
    const read = await fetch(`${copy.server.worldUrl}/stripe-live/v1/customers`, { headers: { 'x-kit-token': COPY.readToken } });
    expect(read.status).toBe(403);
  });
});
