/**
 * The world page's Changesets section (pages/world/changesets.tsx and what it opens) driven in
 * Debian's Chromium as a person on this machine drives it, on the multi-world host: changes made
 * through the Stripe twin's API are counted as not in a changeset yet, cut from the page, read
 * as a diff, verified (failing while a check refuses them, then passing), approved with a note,
 * and deployed after typing the changeset's name: refused while the twin has no root, failing
 * while the key sealed for it is one the real account refuses, then performed against another
 * world of the host that plays the real Stripe (its twin the root, its token the sealed key),
 * the receipts mapping the twin's ids to that world's. A read
 * session sees all of it and none of the buttons. What the page shows is checked against what
 * the host answers from Node. Screenshots go to $WORLD_PAGE_SHOTS (default: /tmp), named
 * page-changesets-<step>.png.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { builtPages } from '../helpers/pages.js';
import { startMultiWorldHost, type MultiWorldHost } from '../../host/index.js';
import { loadBuiltinTwins } from '../../sdk/twin/build.js';

const CHROMIUM = '/usr/bin/chromium';

/** A check that refuses a product of the gold tier: put in force after the changes were made, so verifying finds them. */
const NO_GOLD = `export const check = {
  name: 'no-gold',
  run(entry) {
    for (const w of entry.writes) {
      // The Stripe twin stores a record as { s, o }: o is the vendor's object.
      if (w.type === 'product' && w.value && w.value.o.metadata.tier === 'gold') throw new Error('gold is not for sale yet');
    }
  },
};
`;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- answers as parsed

interface HostWorld {
  name: string;
  token: string;
  /** `{base}/acme/<world>`. */
  url: string;
  /** `{base}/-/acme/<world>`. */
  api: string;
  /** Where its page is. */
  origin: string;
}

let host: MultiWorldHost;
let dir: string;
let browser: Browser;
let shots: string;

async function openWorld(name: string): Promise<HostWorld> {
  const res = await fetch(`${host.url}/-/worlds`, {
    method: 'POST',
    headers: { 'x-kit-token': host.adminToken, 'content-type': 'application/json' },
    body: JSON.stringify({ org: 'acme', world: name, vendors: ['stripe'] }),
  });
  expect(res.status).toBe(201);
  const { token } = (await res.json()) as { token: string };
  return { name, token, url: `${host.url}/acme/${name}`, api: `${host.url}/-/acme/${name}`, origin: `http://${name}--acme.localhost:${host.port}` };
}

/** The world's endpoint `path` from Node with its token. */
async function worldApi(w: HostWorld, method: string, path: string, body?: unknown, type = 'application/json'): Promise<{ status: number; json: Json }> {
  const res = await fetch(`${w.api}${path}`, {
    method,
    headers: { 'x-kit-token': w.token, ...(body === undefined ? {} : { 'content-type': type }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text === '' ? {} : (JSON.parse(text) as Json) };
}

/** A call of the world's Stripe API with its token as the key, as an app makes it. */
async function stripe(w: HostWorld, method: string, path: string, form?: Record<string, string>): Promise<Json> {
  const res = await fetch(`${w.url}/stripe${path}`, {
    method,
    headers: { authorization: `Bearer ${w.token}`, ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
    body: form === undefined ? undefined : new URLSearchParams(form).toString(),
  });
  const json = (await res.json()) as Json;
  expect([res.status, json]).toEqual([200, expect.anything()]);
  return json;
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: \`make test\` installs Debian's chromium (apt-get install chromium)`);
  const pages = builtPages(['world']);
  shots = process.env['WORLD_PAGE_SHOTS'] ?? tmpdir();
  dir = await mkdtemp(join(tmpdir(), 'kit-world-page-changesets-'));
  // Loopback roots: another world of this host plays the real Stripe.
  host = await startMultiWorldHost({ dir, twins: [...(await loadBuiltinTwins()).values()], pages, outboundLoopback: true });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await host?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('the world page shows, cuts, verifies, approves and deploys changesets, in Chromium', () => {
  let shop: HostWorld;
  let real: HostWorld;
  let context: BrowserContext;
  let page: Page;
  let product: string;
  const pageErrors: string[] = [];
  const shot = (p: Page, step: string) => p.screenshot({ path: join(shots, `page-changesets-${step}.png`), fullPage: true });
  const card = (name: string) => page.getByRole('region', { name, exact: true });

  beforeAll(async () => {
    shop = await openWorld('shop');
    real = await openWorld('stripe-account');
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    expect(pageErrors).toEqual([]);
  });

  it('counts the changes made through the Stripe API as not in a changeset yet, and cuts them from the page', async () => {
    product = (await stripe(shop, 'POST', '/v1/products', { name: 'Pro', 'metadata[tier]': 'gold' })).id as string;
    await stripe(shop, 'POST', `/v1/products/${product}`, { description: 'For teams' });
    expect((await worldApi(shop, 'GET', '/changesets')).json.unpushed).toEqual({ stripe: 2 });

    await page.goto(`${shop.origin}/#changesets`);
    const list = card('Changesets');
    await expect.poll(() => list.getByRole('status', { name: 'Unpushed changes' }).textContent()).toBe('2 changes not in a changeset yet: stripe 2');
    expect(await list.getByText('No changesets yet.').isVisible()).toBe(true);
    await shot(page, '1-unpushed');

    const form = page.getByRole('form', { name: 'Cut a changeset' });
    await form.getByLabel('Message').fill('Add the Pro plan');
    await form.getByLabel('Name').fill('pro-plan');
    await form.getByRole('button', { name: 'Cut a changeset' }).click();
    // The page opens the changeset it cut.
    await card('Changes').waitFor();
    expect(new URL(page.url()).hash).toBe('#changesets/pro-plan');
    const cut = (await worldApi(shop, 'GET', '/changesets/pro-plan')).json;
    expect(cut).toMatchObject({ name: 'pro-plan', message: 'Add the Pro plan', from: 'acme/shop', landedAt: null, deployed: 'none', verification: null, approvals: [] });
    expect(cut['changes']).toHaveLength(2);
    expect((await worldApi(shop, 'GET', '/changesets')).json.unpushed).toEqual({});
  });

  it('shows each change as a diff: the request and its status, the records made and changed field by field', async () => {
    const changes = card('Changes');
    const first = changes.getByRole('article', { name: 'Change 1' });
    expect(await first.locator('.change-head').textContent()).toMatch(/^#1stripePOST \/v1\/products200landed$/);
    const made = first.getByRole('list', { name: new RegExp(`^product .*${product}$`) });
    expect(await made.locator('li').allTextContents()).toEqual(expect.arrayContaining(['name: (none) → "Pro"', 'metadata.tier: (none) → "gold"', `id: (none) → "${product}"`]));
    expect(await first.locator('.record-head').first().textContent()).toContain('created');

    const second = changes.getByRole('article', { name: 'Change 2' });
    expect(await second.locator('.change-head').textContent()).toContain(`POST /v1/products/${product}`);
    expect(await second.locator('.record-head').first().textContent()).toContain('changed');
    // Only what differs: the description given, and nothing of the name it kept.
    const fields = await second.locator('ul.diff').first().locator('li').allTextContents();
    expect(fields).toContain('description: null → "For teams"');
    expect(fields.some((f) => f.startsWith('name:'))).toBe(false);
    await shot(page, '2-diff');
  });

  it('verifies: a failing check is shown by check and change; once it is gone the changeset passes on its current hash', async () => {
    expect((await worldApi(shop, 'PUT', '/checks/no-gold', NO_GOLD, 'text/javascript')).status).toBe(200);
    const head = card('Changeset pro-plan');
    await head.getByRole('button', { name: 'Verify' }).click();
    // Both changes leave a gold product: the check fails each.
    await expect.poll(() => head.getByRole('status').last().textContent()).toBe('Verification failed: 2 failing.');
    const verification = card('Verification');
    const failures = verification.getByRole('table', { name: 'Failures' }).locator('tbody tr');
    await expect.poll(() => failures.allTextContents()).toEqual([
      `no-gold#1 POST /v1/productsstripethe check threw: gold is not for sale yet`,
      `no-gold#2 POST /v1/products/${product}stripethe check threw: gold is not for sale yet`,
    ]);
    expect(await verification.getByRole('status', { name: 'Latest verification' }).textContent()).toMatch(/^failcurrent hash1 check over 2 changes, .*; 2 failed$/);
    // Each change says so beside its request.
    for (const n of [1, 2]) expect(await card('Changes').getByRole('article', { name: `Change ${n}` }).locator('.change-head').textContent()).toContain('fails no-gold');
    const failed = (await worldApi(shop, 'GET', '/changesets/pro-plan')).json.verification;
    expect(failed).toMatchObject({ pass: false, checks: 1, changes: 2, current: true });
    expect((failed['failures'] as Json[]).map((f) => [f['change'], f['check']])).toEqual([
      [0, 'no-gold'],
      [1, 'no-gold'],
    ]);
    await shot(page, '3-verify-failed');

    expect((await worldApi(shop, 'DELETE', '/checks/no-gold')).status).toBe(204);
    await head.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => verification.getByRole('status', { name: 'Latest verification' }).textContent()).toMatch(/^passcurrent hashno checks in force over 2 changes/);
    expect(await head.getByRole('status').last().textContent()).toBe('Verified: the world has no checks in force, so nothing failed.');
    expect(await card('Changes').getByText('fails no-gold').count()).toBe(0);
    expect(await verification.getByText('1 earlier verification').isVisible()).toBe(true);
    expect((await worldApi(shop, 'GET', '/changesets/pro-plan')).json.verification).toMatchObject({ pass: true, current: true });
  });

  it('approves with a note, signed as the person of the session', async () => {
    const approvals = card('Approvals');
    await approvals.getByLabel('Note').fill('Ready for the launch');
    await approvals.getByRole('button', { name: 'Approve' }).click();
    const rows = approvals.getByRole('table', { name: 'Approvals' }).locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toMatch(/^this machineReady for the launch.*current hash/);
    expect((await worldApi(shop, 'GET', '/changesets/pro-plan')).json.approvals).toMatchObject([{ as: 'this machine', note: 'Ready for the launch', current: true }]);
  });

  it('deploys only once the name is typed: refused while the twin has no root, then performed against the real account', async () => {
    const head = card('Changeset pro-plan');
    await head.getByRole('button', { name: 'Deploy…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Deploy pro-plan' });
    await dialog.waitFor();
    const deploy = dialog.getByRole('button', { name: 'Deploy', exact: true });
    expect(await deploy.isDisabled()).toBe(true);
    await dialog.getByLabel('Type pro-plan to confirm').fill('pro-plan ');
    expect(await deploy.isDisabled()).toBe(true);
    await dialog.getByLabel('Type pro-plan to confirm').fill('pro-plan');
    await deploy.click();
    await expect.poll(() => dialog.getByRole('alert').textContent()).toMatch(/^Not deployed: .*\(409 no_root\)$/);
    await shot(page, '4-deploy-no-root');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => dialog.count()).toBe(0);

    // The copy's Stripe rooted at the other world's, with a key that account refuses first.
    expect((await worldApi(shop, 'PUT', '/twins/stripe/root', { url: `${real.url}/stripe` })).status).toBe(200);
    expect((await worldApi(shop, 'PUT', '/twins/stripe/credential', { bearer: 'sk_test_notTheAccountsKey0123456789' })).status).toBe(200);
    await head.getByRole('button', { name: 'Deploy…' }).click();
    await dialog.getByLabel('Type pro-plan to confirm').fill('pro-plan');
    await dialog.getByRole('button', { name: 'Deploy', exact: true }).click();
    await expect.poll(() => dialog.getByRole('alert').textContent(), { timeout: 15_000 }).toMatch(/^Not deployed: .*\(502 deploy_failed\)$/);
    // Behind the dialog the view has read the failure the world recorded: the first change failed, with its receipt.
    const receipts = card('Receipts').getByRole('table', { name: 'Receipts' }).locator('tbody tr');
    await expect.poll(() => receipts.count()).toBe(1);
    expect(await receipts.first().textContent()).toMatch(/^#1 stripefailed\s*401/);
    expect(await card('Changes').getByRole('article', { name: 'Change 1' }).locator('.change-head').textContent()).toContain('failed');
    await shot(page, '5-deploy-refused-key');
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    // Then that world's token sealed as the key: deploying again performs what is left.
    expect((await worldApi(shop, 'PUT', '/twins/stripe/credential', { bearer: real.token })).status).toBe(200);
    await head.getByRole('button', { name: 'Deploy…' }).click();
    await dialog.getByLabel('Type pro-plan to confirm').fill('pro-plan');
    await dialog.getByRole('button', { name: 'Deploy', exact: true }).click();
    await expect.poll(() => head.getByRole('status').last().textContent(), { timeout: 15_000 }).toBe('Deployed: 2 changes performed at the root.');
    expect(await dialog.count()).toBe(0);

    const answered = (await worldApi(shop, 'GET', '/changesets/pro-plan')).json;
    expect(answered['deployed']).toBe('all');
    const realId = (answered['receipts'] as Json[]).find((r) => r['ok'] === true && r['change'] === 0)!['ids'][product] as string;
    expect(realId).toMatch(/^prod_/);
    expect(realId).not.toBe(product);
    // The real account has the product, as the changeset left it.
    expect(await stripe(real, 'GET', `/v1/products/${realId}`)).toMatchObject({ id: realId, name: 'Pro', description: 'For teams', metadata: { tier: 'gold' } });

    // The refused attempt's receipt stays, then one per change performed.
    await expect.poll(() => receipts.count()).toBe(3);
    expect(await receipts.nth(1).textContent()).toContain(`${product} → ${realId}`);
    expect(await receipts.nth(1).textContent()).toMatch(/^#1 stripeok\s*200/);
    // The second change was sent with the real id in its path.
    expect(await receipts.nth(2).textContent()).toContain(`POST ${real.url}/stripe/v1/products/${realId}`);
    expect(await head.getByText('deployed', { exact: true }).isVisible()).toBe(true);
    expect(await head.getByRole('button', { name: 'Deploy…' }).count()).toBe(0);
    await shot(page, '6-deployed');
  });

  it('shows the list with where each changeset stands', async () => {
    await page.getByRole('button', { name: '← All changesets' }).click();
    const row = card('Changesets').getByRole('table', { name: 'Changesets' }).locator('tr[data-key="pro-plan"]');
    await row.waitFor();
    expect(new URL(page.url()).hash).toBe('#changesets');
    const text = await row.textContent();
    expect(text).toContain('Add the Pro plan');
    expect(text).toContain('acme/shop');
    expect(text).toMatch(/deployed/);
    expect(text).toMatch(/pass/);
    expect(await card('Changesets').getByRole('status', { name: 'Unpushed changes' }).textContent()).toBe("Every change made through the twins' APIs is in a changeset.");
    await shot(page, '7-list');
  });

  it('a read session sees the changesets and their diff, and no button that changes them', async () => {
    await stripe(shop, 'POST', '/v1/products', { name: 'Team' });
    const reader = (await worldApi(shop, 'POST', '/keys', { name: 'reviewer', scope: 'read' })).json['key'] as string;
    const readContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const readPage = await readContext.newPage();
    readPage.on('pageerror', (e) => pageErrors.push(e.message));
    try {
      // On this machine the page opens a write session by itself: signed out, it asks for a credential.
      await readPage.goto(`${shop.origin}/#changesets/pro-plan`);
      await readPage.locator('header.top').getByRole('button', { name: 'Sign out' }).click();
      const form = readPage.getByRole('form', { name: 'Sign in' });
      await form.getByLabel('Token or key').fill(reader);
      await form.getByRole('button', { name: 'Open the world' }).click();
      await readPage.getByRole('region', { name: 'Changes', exact: true }).waitFor();
      expect(await readPage.locator('header.top .top-session').textContent()).toMatch(/^read\b/);
      expect(await readPage.getByRole('article', { name: 'Change 1' }).locator('.change-head').textContent()).toContain('POST /v1/products');
      expect(await readPage.getByRole('table', { name: 'Receipts' }).locator('tbody tr').count()).toBe(3);
      expect(await readPage.getByRole('table', { name: 'Approvals' }).locator('tbody tr').count()).toBe(1);
      for (const button of ['Verify', 'Deploy…', 'Approve']) expect(await readPage.getByRole('button', { name: button, exact: true }).count()).toBe(0);
      await readPage.screenshot({ path: join(shots, 'page-changesets-8-read-detail.png'), fullPage: true });

      await readPage.getByRole('button', { name: '← All changesets' }).click();
      const list = readPage.getByRole('region', { name: 'Changesets', exact: true });
      await expect.poll(() => list.getByRole('status', { name: 'Unpushed changes' }).textContent()).toBe('1 change not in a changeset yet: stripe 1');
      expect(await readPage.getByRole('form', { name: 'Cut a changeset' }).count()).toBe(0);
      await readPage.screenshot({ path: join(shots, 'page-changesets-9-read-list.png'), fullPage: true });
    } finally {
      await readContext.close();
    }
  });
});
