/**
 * The Stripe mirror (twins/stripe/mirror/) driven in Debian's Chromium as a person uses it, on
 * a multi-world host serving the built pages: the official `stripe` SDK makes customers, a
 * payment with a refund and a webhook endpoint; the mirror, opened through the loopback
 * session, shows the customer the SDK just made in the list and on its page, shows that page
 * again when the customer's API URL is opened directly, pages through a list longer than one
 * page with Stripe's cursor, shows the payment's refund and the endpoint's deliveries, switches
 * to the account an `sk_test_` key made, and lets a read session browse the same. Each step's
 * screenshot is saved to $MIRROR_SHOTS (default the system's temporary directory) as
 * mirror-stripe-<step>.png. What the page shows is checked against what the API answers.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import Stripe from 'stripe';
import { startMultiWorldHost } from '../../host/index.js';
import { builtPages } from '../helpers/pages.js';
import { loadBuiltinTwins } from '../../sdk/twin/build.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = process.env['MIRROR_SHOTS'] ?? tmpdir();
/** The mirror's list pages hold this many rows (twins/stripe/mirror/components.tsx PAGE_SIZE). */
const PAGE_SIZE = 20;

interface Row {
  name: string;
  token: string;
  readToken: string;
}

describe('the Stripe mirror in Chromium', () => {
  let dir: string;
  let host: Awaited<ReturnType<typeof startMultiWorldHost>>;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let world: Row;
  /** `http://shop--acme.localhost:<port>`: the world's own origin, where its session lives. */
  let origin: string;
  let stripe: Stripe;
  const pageErrors: string[] = [];

  /** The official SDK against the world's Stripe twin, with `key` as the app's API key (the world's token: the default account). */
  const sdk = (key: string): Stripe => {
    const base = Stripe.createNodeHttpClient();
    const client = Object.create(base) as Stripe.HttpClient;
    const { hostname, port } = new URL(host.url);
    client.makeRequest = (_host, _port, path, method, headers, data, _protocol, timeout) =>
      base.makeRequest(hostname, port, `/acme/shop/stripe${path}`, method, { ...headers, 'x-twins-key': world.token }, data, 'http', timeout);
    return new Stripe(key, { httpClient: client, maxNetworkRetries: 0, telemetry: false });
  };
  const mirror = (path: string) => `${origin}/acme/shop/stripe${path}`;
  const shot = (p: Page, step: string) => p.screenshot({ path: join(SHOTS, `mirror-stripe-${step}.png`), fullPage: true });
  const table = (name: string, p: Page = page) => p.getByRole('table', { name, exact: true });
  const rowsOf = async (name: string, p: Page = page) => table(name, p).locator('tbody tr').allTextContents();

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: \`make test\` installs Debian's chromium (apt-get install chromium)`);
    dir = await mkdtemp(join(tmpdir(), 'kit-mirror-stripe-'));
    host = await startMultiWorldHost({ dir, twins: [...(await loadBuiltinTwins()).values()], pages: builtPages(['stripe']), consoleDir: null });
    const made = await fetch(`${host.url}/-/worlds`, {
      method: 'POST',
      headers: { 'x-kit-token': host.adminToken, 'content-type': 'application/json' },
      body: JSON.stringify({ org: 'acme', world: 'shop', vendors: ['stripe'] }),
    });
    expect(made.status).toBe(201);
    world = (await made.json()) as Row;
    origin = `http://shop--acme.localhost:${new URL(host.url).port}`;
    stripe = sdk(world.token);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await host?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('opened at the base origin, moves to the world\'s origin, opens the loopback session and shows the customers list', async () => {
    await stripe.webhookEndpoints.create({ url: 'http://127.0.0.1:9/hooks', enabled_events: ['customer.created', 'payment_intent.succeeded'] });
    for (let i = 0; i < PAGE_SIZE + 5; i++) await stripe.customers.create({ email: `person${i}@example.com`, name: `Person ${i}` });
    await page.goto(`${host.url}/acme/shop/stripe/mirror/`);
    await page.waitForURL(mirror('/v1/customers'));
    await table('Customers').locator('tbody tr').first().waitFor();
    const session = await page.evaluate(async () => (await fetch('/-/acme/shop/session', { credentials: 'same-origin' })).json());
    expect(session).toMatchObject({ world: 'acme/shop', scope: 'write', local: true });
    expect(await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Customers' }).getAttribute('aria-current')).toBe('page');
    await shot(page, '1-customers');
  });

  it('finds the customer the SDK just made in the list and opens its page', async () => {
    const ada = await stripe.customers.create({ email: 'ada@example.com', name: 'Ada Lovelace', description: 'First programmer', metadata: { plan: 'gold' } });
    await page.reload();
    const first = table('Customers').locator('tbody tr').first();
    await expect.poll(() => first.textContent()).toContain('ada@example.com');
    expect(await first.locator('td').allTextContents()).toEqual(['Ada Lovelace', 'ada@example.com', '—', 'First programmer', expect.stringMatching(/^[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d\d [AP]M$/)]);
    await first.locator('td').first().click();
    await page.waitForURL(mirror(`/v1/customers/${ada.id}`));
    const customer = page.getByRole('region', { name: 'Customer' });
    await customer.getByRole('heading', { name: 'Ada Lovelace' }).waitFor();
    const details = customer.getByRole('complementary', { name: 'Details' });
    await expect.poll(() => details.textContent()).toContain(ada.id);
    expect(await details.textContent()).toContain('First programmer');
    expect(await customer.getByRole('region', { name: 'Metadata' }).textContent()).toContain('plangold');
    await expect.poll(() => customer.getByRole('region', { name: 'Payments' }).textContent()).toContain('No payments.');
    await shot(page, '2-customer');
  });

  it("shows a customer's page when its API URL is opened in the browser, and the payment and refund the SDK made", async () => {
    const ada = (await stripe.customers.list({ email: 'ada@example.com' })).data[0]!;
    const pi = await stripe.paymentIntents.create({
      amount: 4200, currency: 'usd', customer: ada.id, payment_method: 'pm_card_visa', confirm: true, description: 'Order #1001',
      automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
    });
    const refund = await stripe.refunds.create({ payment_intent: pi.id, amount: 1200 });

    // A new tab, straight to the vendor's URL: the host answers the mirror's shell there.
    const direct = await context.newPage();
    direct.on('pageerror', (e) => pageErrors.push(e.message));
    const answer = await direct.goto(mirror(`/v1/customers/${ada.id}`));
    expect(answer?.headers()['content-type']).toContain('text/html');
    expect(direct.url()).toBe(mirror(`/v1/customers/${ada.id}`));
    await direct.getByRole('heading', { name: 'Ada Lovelace' }).waitFor();
    const payments = table('Payments', direct);
    await payments.locator('tbody tr').first().waitFor();
    expect(await payments.locator('tbody tr').first().locator('td').allTextContents()).toEqual(['$42.00 USD', 'Partially refunded', 'Visa •••• 4242', 'Order #1001', expect.any(String)]);
    await shot(direct, '3-opened-by-url');

    await payments.locator('tbody tr').first().locator('td').first().click();
    await direct.waitForURL(mirror(`/v1/payment_intents/${pi.id}`));
    const payment = direct.getByRole('region', { name: 'Payment' });
    await payment.getByRole('heading', { name: /\$42\.00/ }).waitFor();
    const refunds = table('Refunds', direct);
    await refunds.locator('tbody tr').first().waitFor();
    expect(await refunds.locator('tbody tr').first().textContent()).toContain(refund.id);
    // Stripe's fee on $42.00: 2.9% + 30¢ = $1.52.
    expect(await direct.locator('dl[aria-label="Payment breakdown"]').textContent()).toContain('-$1.52');
    await shot(direct, '4-payment');
    await direct.close();
  });

  it('pages through a list longer than one page with Stripe\'s cursor in the address', async () => {
    await page.goto(mirror('/v1/customers'));
    await table('Customers').locator('tbody tr').first().waitFor();
    const sdkPages = [(await stripe.customers.list({ limit: PAGE_SIZE })).data];
    sdkPages.push((await stripe.customers.list({ limit: PAGE_SIZE, starting_after: sdkPages[0]!.at(-1)!.id })).data);
    const emails = async () => (await table('Customers').locator('tbody tr td:nth-child(2)').allTextContents());
    expect(await emails()).toEqual(sdkPages[0]!.map((c) => c.email));
    expect(await page.getByText('Previous', { exact: true }).getAttribute('aria-disabled')).toBe('true');

    await page.getByRole('link', { name: 'Next', exact: true }).click();
    await page.waitForURL(mirror(`/v1/customers?starting_after=${sdkPages[0]!.at(-1)!.id}`));
    await expect.poll(emails).toEqual(sdkPages[1]!.map((c) => c.email));
    expect(sdkPages[1]!.length).toBe(6);
    expect(await page.getByText('Next', { exact: true }).getAttribute('aria-disabled')).toBe('true');
    await shot(page, '5-next-page');

    await page.getByRole('link', { name: 'Previous', exact: true }).click();
    await page.waitForURL(mirror(`/v1/customers?ending_before=${sdkPages[1]![0]!.id}`));
    await expect.poll(emails).toEqual(sdkPages[0]!.map((c) => c.email));
    // The browser's Back goes to the page before, as the address says.
    await page.goBack();
    await expect.poll(emails).toEqual(sdkPages[1]!.map((c) => c.email));
  });

  it("shows a webhook endpoint's deliveries and the events they carry", async () => {
    const endpoint = (await stripe.webhookEndpoints.list()).data[0]!;
    const created = (await stripe.events.list({ type: 'customer.created', limit: 3 })).data;
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Webhooks' }).click();
    await page.waitForURL(mirror('/v1/webhook_endpoints'));
    await table('Webhooks').locator('tbody tr').first().locator('td').first().click();
    await page.waitForURL(mirror(`/v1/webhook_endpoints/${endpoint.id}`));
    const deliveries = table('Event deliveries');
    await deliveries.locator('tbody tr').first().waitFor();
    const shown = await deliveries.locator('tbody tr').allTextContents();
    // Newest first: the payment's, then the newest customers'.
    expect(shown[0]).toContain('payment_intent.succeeded');
    for (const [i, e] of created.entries()) expect(shown[i + 1]).toContain(e.id);
    // 26 customers and one payment, every delivery within the first scan.
    expect(shown.length).toBe(PAGE_SIZE + 5 + 1 + 1);
    await shot(page, '6-webhook-deliveries');

    await deliveries.getByRole('link', { name: created[0]!.id }).click();
    await page.waitForURL(mirror(`/v1/events/${created[0]!.id}`));
    await page.getByRole('heading', { name: `A new customer ${(created[0]!.data.object as { id: string }).id} was created` }).waitFor();
    await shot(page, '7-event');
  });

  it('switches to the account an sk_test_ key made, with Stripe-Account on its reads', async () => {
    const other = sdk('sk_test_mirrorOtherAccount0001');
    const someone = await other.customers.create({ email: 'someone@other.test', name: 'In another account' });
    const account = (await other.accounts.retrieveCurrent()).id;
    await page.goto(mirror('/v1/customers'));
    await table('Customers').locator('tbody tr').first().waitFor();
    expect(await rowsOf('Customers')).not.toContainEqual(expect.stringContaining('someone@other.test'));
    await expect.poll(() => page.getByLabel('Account').locator('option').allTextContents()).toEqual(["The world's own account", account]);
    await page.getByLabel('Account').selectOption(account);
    await page.waitForURL(mirror(`/v1/customers?account=${account}`));
    await expect.poll(() => rowsOf('Customers')).toEqual([expect.stringContaining('someone@other.test')]);
    await table('Customers').locator('tbody tr').first().locator('td').first().click();
    await page.waitForURL(mirror(`/v1/customers/${someone.id}?account=${account}`));
    await page.getByRole('heading', { name: 'In another account' }).waitFor();
    await shot(page, '8-other-account');
    // Its API address opened as it is (no account named): the mirror finds the account that holds it.
    await page.goto(mirror(`/v1/customers/${someone.id}`));
    await page.waitForURL(mirror(`/v1/customers/${someone.id}?account=${account}`));
    await page.getByRole('heading', { name: 'In another account' }).waitFor();
    // An id no account holds is said to be missing.
    await page.goto(mirror('/v1/customers/cus_NoSuchCustomer0'));
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('resource_missing');
  });

  it('lets a read session browse the mirror', async () => {
    const reader = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      // A session opened with the read token at the world's origin, as the sign-in form opens
      // one (a same-origin fetch from a page there), before the mirror is opened.
      const p = await reader.newPage();
      await p.goto(`${origin}/-/acme/shop/clock`);
      const opened = await p.evaluate(
        async ([token, o]) => {
          const res = await fetch('/-/acme/shop/session', { method: 'POST', headers: { 'x-kit-token': token, 'content-type': 'application/json' }, body: JSON.stringify({ world: 'acme/shop', scope: 'read', origin: o }) });
          return { status: res.status, body: (await res.json()) as unknown };
        },
        [world.readToken, origin] as const,
      );
      expect(opened).toMatchObject({ status: 200, body: { world: 'acme/shop', scope: 'read' } });
      p.on('pageerror', (e) => pageErrors.push(e.message));
      await p.goto(mirror('/v1/payment_intents'));
      await table('Payments', p).locator('tbody tr').first().waitFor();
      expect(await rowsOf('Payments', p)).toEqual([expect.stringContaining('Order #1001')]);
      expect(await p.locator('.top-session').textContent()).toBe('read');
      await shot(p, '9-read-session');
    } finally {
      await reader.close();
    }
    expect(pageErrors).toEqual([]);
  });
});
