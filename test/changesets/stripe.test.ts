/**
 * Changesets end to end through the official `stripe` package, over three served worlds. `real`
 * plays the Stripe account (reached at `https://api.stripe.com` through its own proxy and CA, as
 * in test/roots/); `main` is rooted on it with the credential sealed; `dev` names `main` as its
 * origin. An app under `kit world attach` builds a plan in `dev`; the plan is cut, pushed,
 * refused by a check on `main`, fixed in `dev`, verified, approved and deployed, and found at the
 * real account under the ids the receipts name. Then a field changed on both sides, and a
 * deploy the real account fails half-way.
 */
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAttach, cleanEnv, run, type Built } from '../attach/harness.js';
import { serveVendorWorld, worldApi, type Served } from '../roots/served.js';

const REAL = { token: 'tok_real-account-write-token-0123456789ab', readToken: 'tok_r_real-account-read-token-0123456789' };
const MAIN = { token: 'tok_main-world-write-token-0123456789abcd', readToken: 'tok_r_main-world-read-token-0123456789ab' };
const DEV = { token: 'tok_dev-world-write-token-0123456789abcde', readToken: 'tok_r_dev-world-read-token-0123456789abc' };

/** The official SDK against a world's Stripe twin at its URL (the world's token as the API key). */
function stripeAt(s: Served, key: string): Stripe {
  const url = new URL(s.server.worldUrl);
  const base = Stripe.createNodeHttpClient();
  const httpClient = Object.create(base) as Stripe.HttpClient;
  httpClient.makeRequest = (host, port, path, method, headers, data, protocol, timeout) => base.makeRequest(host, port, `${url.pathname}/stripe${path}`, method, headers, data, protocol, timeout);
  return new Stripe(key, { host: url.hostname, port: Number(url.port), protocol: 'http', maxNetworkRetries: 0, telemetry: false, httpClient });
}

/** A check that no yearly price is on sale: every price an entry writes, as the world holds it now. */
const NO_YEARLY = `export const check = { name: 'no-yearly-on-sale', run(entry, tree) {
  const onSale = [];
  for (const w of entry.writes) {
    if (w.type !== 'price') continue;
    const now = tree.get('price', w.id);
    if (now && now.o.active && now.o.recurring && now.o.recurring.interval === 'year') onSale.push(now.o.id);
  }
  return onSale.length === 0 ? true : ['yearly prices are not sold yet: ' + onSale.join(', ')];
} };`;

let real: Served;
let main: Served;
let dev: Served;
let built: Built;
/** What the app made in `dev`, under the twin's ids. */
let made: { product: string; monthly: string; yearly: string; endpoint: string };
/** The real account's ids of the same objects, from the receipts. */
let deployed: { product: string; monthly: string; yearly: string; endpoint: string };

const mainApi = (method: string, path: string, body?: unknown) => worldApi(main, MAIN.token, method, path, body);
const devApi = (method: string, path: string, body?: unknown) => worldApi(dev, DEV.token, method, path, body);
const account = () => stripeAt(real, REAL.token);

interface ChangeView {
  index: number;
  request: { method: string; path: string };
  state: string;
}
interface ReceiptView {
  change: number;
  ok: boolean;
  request: { method: string; url: string };
  ids: Record<string, string>;
  answer: unknown;
}

const routes = (cs: { changes: ChangeView[] }): string[] => cs.changes.map((c) => `${c.request.method} ${c.request.path}`);

async function putCheck(s: Served, token: string, name: string, source: string): Promise<void> {
  const res = await fetch(`${s.server.worldApi}/checks/${name}`, { method: 'PUT', headers: { 'x-kit-token': token, 'content-type': 'text/javascript' }, body: source });
  expect(res.status, await res.text()).toBe(200);
}

beforeAll(async () => {
  [real, built] = await Promise.all([serveVendorWorld('stripe', 'real', REAL), buildAttach()]);
  main = await serveVendorWorld('stripe', 'main', MAIN, { world: real, token: REAL.token });
  dev = await serveVendorWorld('stripe', 'dev', DEV, 'loopback');
  // The real account already sells something.
  const legacy = await account().products.create({ name: 'Legacy plan' });
  await account().prices.create({ product: legacy.id, unit_amount: 500, currency: 'usd', recurring: { interval: 'month' } });

  expect((await mainApi('PUT', '/twins/stripe/root', { url: 'https://api.stripe.com' })).status).toBe(200);
  expect((await mainApi('PUT', '/twins/stripe/credential', { bearer: REAL.token })).json).toMatchObject({ sealed: true });
  const refreshed = await mainApi('POST', '/twins/stripe/refresh');
  expect(refreshed.status, refreshed.text).toBe(200);
  // Both served on loopback, so the origin may be named over http.
  const origin = await devApi('PUT', '/origin', { url: main.server.worldUrl, token: MAIN.token });
  expect(origin.status, origin.text).toBe(200);
  expect(origin.json.brought.stripe).toBeGreaterThan(0);
}, 120_000);

afterAll(async () => {
  await dev?.server.close();
  await main?.server.close();
  await real?.server.close();
  await built?.close();
});

describe('changesets through the official stripe package', () => {
  it('cuts what an app under kit world attach made in the world, and pushes it to the origin', async () => {
    const app = [
      "import Stripe from 'stripe';",
      "const stripe = new Stripe('sk_test_app_key_for_dev', { maxNetworkRetries: 0 });",
      "const product = await stripe.products.create({ name: 'Pro plan', description: 'Everything in one plan' });",
      "const monthly = await stripe.prices.create({ product: product.id, unit_amount: 900, currency: 'usd', recurring: { interval: 'month' } });",
      "const yearly = await stripe.prices.create({ product: product.id, unit_amount: 9000, currency: 'usd', recurring: { interval: 'year' } });",
      "const endpoint = await stripe.webhookEndpoints.create({ url: 'https://shop.example.test/stripe/webhooks', enabled_events: ['checkout.session.completed'] });",
      'console.log(JSON.stringify({ product: product.id, monthly: monthly.id, yearly: yearly.id, endpoint: endpoint.id }));',
    ].join('\n');
    const r = await run(process.execPath, [built.kit, 'world', 'attach', dev.server.worldUrl, '--token', DEV.token, '--', 'node', '--input-type=module', '-e', app], cleanEnv());
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    made = JSON.parse(r.stdout);
    expect((await devApi('GET', '/changesets')).json.unpushed).toEqual({ stripe: 4 });

    const cut = await devApi('POST', '/changesets', { message: 'Pro plan: monthly and yearly, and a webhook endpoint' });
    expect(cut.status, cut.text).toBe(201);
    expect(cut.json.name).toBe('cs-1');
    expect(routes(cut.json)).toEqual(['POST /v1/products', 'POST /v1/prices', 'POST /v1/prices', 'POST /v1/webhook_endpoints']);
    expect(cut.json.changes[1].request.body).toContain(`product=${made.product}`);
    expect(cut.json.contentHash).toBe(cut.json.currentHash);

    const pushed = await devApi('POST', '/origin/push');
    expect(pushed.status, pushed.text).toBe(200);
    expect(pushed.json.pushed.map((p: { changeset: string }) => p.changeset)).toEqual(['cs-1']);
    // The origin serves the plan under the same ids, through the SDK.
    const atMain = stripeAt(main, MAIN.token);
    expect((await atMain.products.retrieve(made.product)).name).toBe('Pro plan');
    expect((await atMain.prices.list({ product: made.product })).data.map((p) => p.id).sort()).toEqual([made.monthly, made.yearly].sort());
    const landed = (await mainApi('GET', '/changesets/cs-1')).json;
    expect(landed.changes.map((c: ChangeView) => c.state)).toEqual(['landed', 'landed', 'landed', 'landed']);
    expect(landed.currentHash).toBe(cut.json.contentHash);
  });

  it('a check on the origin refuses the yearly price, naming its change, and the deploy with it', async () => {
    await putCheck(main, MAIN.token, 'no-yearly-on-sale', NO_YEARLY);
    const verdict = await mainApi('POST', '/changesets/cs-1/verify');
    expect(verdict.status, verdict.text).toBe(200);
    expect(verdict.json).toMatchObject({ pass: false, checks: 1, changes: 4 });
    expect(verdict.json.failures).toEqual([{ change: 2, twin: 'stripe', check: 'no-yearly-on-sale', failures: [`yearly prices are not sold yet: ${made.yearly}`] }]);
    const refused = await mainApi('POST', '/deploy/cs-1');
    expect(refused.status).toBe(409);
    expect(refused.json.error.code).toBe('verification_failed');
    expect((await account().products.list({ limit: 100 })).data.map((p) => p.name)).toEqual(['Legacy plan']);
  });

  it('fixed in the world, cut and pushed again, verified, approved and deployed: found at the real account under the receipts’ ids', async () => {
    await stripeAt(dev, DEV.token).prices.update(made.yearly, { active: false });
    const fix = await devApi('POST', '/changesets', { message: 'No yearly price on sale yet' });
    expect(fix.status, fix.text).toBe(201);
    expect(routes(fix.json)).toEqual([`POST /v1/prices/${made.yearly}`]);
    // The origin has not moved since the push: nothing to pull.
    const pulled = await devApi('POST', '/origin/pull');
    expect(pulled.status, pulled.text).toBe(200);
    expect(pulled.json).toMatchObject({ merged: false, rebased: [] });
    expect(Object.values(pulled.json.pulled).every((n) => n === 0)).toBe(true);
    expect((await devApi('POST', '/origin/push')).json.pushed.map((p: { changeset: string }) => p.changeset)).toEqual(['cs-2']);

    for (const name of ['cs-1', 'cs-2']) {
      const verdict = await mainApi('POST', `/changesets/${name}/verify`);
      expect(verdict.json, name).toMatchObject({ pass: true, checks: 1, current: true });
      expect((await mainApi('POST', `/changesets/${name}/approve`, { as: 'ana@example.com', note: 'checked at main' })).status).toBe(201);
    }
    const shown = (await mainApi('GET', '/changesets/cs-1')).json;
    expect(shown.verifications.map((v: { pass: boolean; current: boolean }) => [v.pass, v.current])).toEqual([[true, true], [false, true]]);

    const deploy = await mainApi('POST', '/deploy');
    expect(deploy.status, deploy.text).toBe(200);
    expect(deploy.json.deployed.map((d: { changeset: string; deployed: string }) => [d.changeset, d.deployed])).toEqual([['cs-1', 'all'], ['cs-2', 'all']]);
    const [first, second] = deploy.json.deployed as { receipts: ReceiptView[] }[];
    expect(first!.receipts.map((r) => [r.ok, r.request.method, r.request.url])).toEqual([
      [true, 'POST', 'https://api.stripe.com/v1/products'],
      [true, 'POST', 'https://api.stripe.com/v1/prices'],
      [true, 'POST', 'https://api.stripe.com/v1/prices'],
      [true, 'POST', 'https://api.stripe.com/v1/webhook_endpoints'],
    ]);
    const idOf = (twinId: string): string => {
      const found = first!.receipts.find((r) => twinId in r.ids)?.ids[twinId];
      expect(found, twinId).toBeDefined();
      return found!;
    };
    deployed = { product: idOf(made.product), monthly: idOf(made.monthly), yearly: idOf(made.yearly), endpoint: idOf(made.endpoint) };
    for (const k of ['product', 'monthly', 'yearly', 'endpoint'] as const) expect(deployed[k]).not.toBe(made[k]);
    // The fix went to the real price's own path.
    expect(second!.receipts.map((r) => [r.ok, r.request.url])).toEqual([[true, `https://api.stripe.com/v1/prices/${deployed.yearly}`]]);

    // At the real account, through the SDK, under the receipts' ids: the prices name the real product.
    const product = await account().products.retrieve(deployed.product);
    expect([product.name, product.description]).toEqual(['Pro plan', 'Everything in one plan']);
    const prices = (await account().prices.list({ product: deployed.product })).data;
    expect(prices.map((p) => [p.id, p.product, p.unit_amount, p.recurring?.interval, p.active]).sort()).toEqual(
      [
        [deployed.monthly, deployed.product, 900, 'month', true],
        [deployed.yearly, deployed.product, 9000, 'year', false],
      ].sort(),
    );
    const endpoint = await account().webhookEndpoints.retrieve(deployed.endpoint);
    expect([endpoint.url, endpoint.enabled_events]).toEqual(['https://shop.example.test/stripe/webhooks', ['checkout.session.completed']]);
    expect((await account().products.list({ limit: 100 })).data).toHaveLength(2);

    // The endpoint's signing secret, answered once by the real account, is kept by no receipt.
    // The twin keeps it apart from the endpoint, as a `webhook_secret` record.
    const realLog = (await worldApi(real, REAL.token, 'GET', '/log/stripe?limit=1000')).json.entries as { writes: { type: string; id: string; value: unknown }[] }[];
    const secret = realLog.flatMap((e) => e.writes).find((w) => w.type === 'webhook_secret' && w.id.endsWith(`/${deployed.endpoint}`))?.value as string | undefined;
    expect(secret).toMatch(/^whsec_/);
    expect((first!.receipts[3]!.answer as { secret?: string }).secret).toBe('[withheld]');
    expect((await worldApi(main, MAIN.readToken, 'GET', '/changesets')).text).not.toContain(secret);

    // A second deploy performs nothing twice.
    const again = await mainApi('POST', '/deploy/cs-1');
    expect(again.json.receipts).toHaveLength(4);
    expect((await account().products.list({ limit: 100 })).data).toHaveLength(2);
    expect((await account().prices.list({ limit: 100 })).data).toHaveLength(3);
  });

  it('names a field changed on both sides by record and field on pull, takes the resolution, and cuts and pushes it', async () => {
    await stripeAt(dev, DEV.token).products.update(made.product, { name: 'Pro (dev)' });
    await stripeAt(main, MAIN.token).products.update(made.product, { name: 'Pro (main)', description: 'Described at main' });
    const before = (await devApi('GET', '/log/stripe')).json.entries.length;

    const conflict = await devApi('POST', '/origin/pull');
    expect(conflict.status).toBe(409);
    expect(conflict.json.error.code).toBe('pull_conflicts');
    const conflicts = conflict.json.error.conflicts as { key: string; type: string; id: string; field: string; base: unknown; ours: unknown; theirs: unknown }[];
    const name = conflicts.find((c) => c.type === 'product' && c.field === 'o.name');
    expect(name).toMatchObject({ twin: 'stripe', base: 'Pro plan', ours: 'Pro (dev)', theirs: 'Pro (main)' });
    expect(name!.id).toMatch(new RegExp(`/${made.product}$`));
    expect(name!.key).toBe(`stripe/product/${name!.id}#o.name`);
    // Besides the name: the twin's list index of products, which mirrors the product, and the
    // product's `updated` when the two changes fell in different seconds.
    for (const c of conflicts) expect(`${c.type}#${c.field}`).toMatch(/^(product#o\.(name|updated)|ix\.product\.acct_\w+#(name|updated))$/);
    // The description only the origin changed merges without a conflict.
    expect(conflicts.some((c) => c.field?.endsWith('description'))).toBe(false);
    expect((await devApi('GET', '/log/stripe')).json.entries).toHaveLength(before);

    // Ours wins every field both sides changed.
    const resolved = await devApi('POST', '/origin/pull', { resolve: Object.fromEntries(conflicts.map((c) => [c.key, 'ours'])) });
    expect(resolved.status, resolved.text).toBe(200);
    expect(resolved.json.merged).toBe(true);
    const merged = await stripeAt(dev, DEV.token).products.retrieve(made.product);
    expect([merged.name, merged.description]).toEqual(['Pro (dev)', 'Described at main']);

    const cut = await devApi('POST', '/changesets', { message: 'Rename the Pro plan', name: 'rename-pro' });
    expect(cut.status, cut.text).toBe(201);
    expect(routes(cut.json)).toEqual([`POST /v1/products/${made.product}`]);
    const pushed = await devApi('POST', '/origin/push');
    expect(pushed.status, pushed.text).toBe(200);
    expect(pushed.json.pushed.map((p: { changeset: string }) => p.changeset)).toEqual(['rename-pro']);
    const atMain = await stripeAt(main, MAIN.token).products.retrieve(made.product);
    expect([atMain.name, atMain.description]).toEqual(['Pro (dev)', 'Described at main']);

    // Deployed, the rename reaches the real product by its real id.
    expect((await mainApi('POST', '/changesets/rename-pro/verify')).json.pass).toBe(true);
    const deploy = await mainApi('POST', '/deploy/rename-pro');
    expect(deploy.status, deploy.text).toBe(200);
    expect(deploy.json.receipts.map((r: ReceiptView) => r.request.url)).toEqual([`https://api.stripe.com/v1/products/${deployed.product}`]);
    expect((await account().products.retrieve(deployed.product)).name).toBe('Pro (dev)');
  });

  it('a deploy the real account fails half-way is resumed without duplicates', async () => {
    const inDev = stripeAt(dev, DEV.token);
    const team = await inDev.products.create({ name: 'Team plan' });
    await inDev.prices.create({ product: team.id, unit_amount: 4900, currency: 'usd', recurring: { interval: 'month' } });
    await inDev.prices.create({ product: team.id, unit_amount: 4500, currency: 'eur', recurring: { interval: 'month' } });
    expect((await devApi('POST', '/changesets', { message: 'Team plan', name: 'team' })).status).toBe(201);
    expect((await devApi('POST', '/origin/push')).status).toBe(200);
    expect((await mainApi('POST', '/changesets/team/verify')).json.pass).toBe(true);

    // The real account fails the deploy's second call, once.
    const scenario = { handlers: [{ name: 'prices-down', match: { method: 'POST', path: '/v1/prices' }, times: 1, respond: { status: 500, body: { error: { type: 'api_error', message: 'down for a moment' } } } }] };
    const put = await worldApi(real, REAL.token, 'PUT', '/twins/stripe/scenario', scenario);
    expect(put.status, put.text).toBe(200);
    const failed = await mainApi('POST', '/deploy/team');
    expect(failed.status).toBe(502);
    expect(failed.json.error.code).toBe('deploy_failed');
    expect(failed.json.error.receipts.map((r: ReceiptView) => [r.change, r.ok])).toEqual([
      [0, true],
      [1, false],
    ]);
    expect(failed.json.error.message).toContain('down for a moment');
    const partial = (await mainApi('GET', '/changesets/team')).json;
    expect(partial.deployed).toBe('partial');
    expect(partial.changes.map((c: ChangeView) => c.state)).toEqual(['deployed', 'failed', 'landed']);
    const realTeam = (failed.json.error.receipts[0] as ReceiptView).ids[team.id]!;
    expect((await account().prices.list({ product: realTeam })).data).toHaveLength(0);

    const resumed = await mainApi('POST', '/deploy/team');
    expect(resumed.status, resumed.text).toBe(200);
    expect(resumed.json.deployed).toBe('all');
    expect(resumed.json.receipts.map((r: ReceiptView) => [r.change, r.ok])).toEqual([
      [0, true],
      [1, false],
      [1, true],
      [2, true],
    ]);
    // Approved after the deploy: the changeset saved again keeps each receipt once.
    expect((await mainApi('POST', '/changesets/team/approve', { as: 'ana@example.com', note: 'after the fact' })).status).toBe(201);
    const after = (await mainApi('GET', '/changesets/team')).json;
    expect([after.receipts.length, after.deployed, after.approvals.length]).toEqual([4, 'all', 1]);
    // Counted at the real account: one Team plan, its two prices, nothing twice.
    const products = (await account().products.list({ limit: 100 })).data;
    expect(products.filter((p) => p.name === 'Team plan').map((p) => p.id)).toEqual([realTeam]);
    expect(products).toHaveLength(3);
    const teamPrices = (await account().prices.list({ product: realTeam })).data;
    expect(teamPrices.map((p) => [p.unit_amount, p.currency]).sort()).toEqual([
      [4500, 'eur'],
      [4900, 'usd'],
    ]);
    expect((await account().prices.list({ limit: 100 })).data).toHaveLength(5);
  });
});
