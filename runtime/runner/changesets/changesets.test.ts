import { afterEach, describe, expect, it } from 'vitest';
import { openTestWorld, type TestWorld } from '../../../test/helpers/world.js';
import { MemoryStorage } from '../../store/index.js';
import type { OutboundFetch } from '../../roots/outbound.js';
import { createSealer, newSealingKey, sealingKeyBytes } from '../../roots/sealing.js';
import type { WorldRequest, WorldResponse } from '../types.js';
import { approvalPayload, verifyApproval } from './index.js';

const REAL_KEY = 'sk_test_real0account0key0000001';
const APP = { authorization: 'Bearer sk_test_app0key0000000000001' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/**
 * Three worlds in-process: `real` plays api.stripe.com, `main` is rooted on it, `dev` names
 * `main` as its origin. Every outbound call goes to the world its URL names.
 */
interface Worlds {
  real: TestWorld;
  main: TestWorld;
  dev: TestWorld;
  calls: string[];
}

let opened: TestWorld[] = [];
afterEach(async () => {
  for (const w of opened) await w.close();
  opened = [];
});

function toWorld(w: TestWorld, surface: 'api' | 'vendor', path: string, query: string, request: { method: string; headers: Record<string, string>; body?: Uint8Array }): Promise<WorldResponse> {
  const r: WorldRequest = { surface, method: request.method, path, query, headers: request.headers, scope: 'write', credential: 'token', requestId: `out_${Math.random()}`, receivedAt: Date.now() };
  if (request.body) r.body = request.body;
  return w.runner.handle(r);
}

async function worlds(): Promise<Worlds> {
  const calls: string[] = [];
  const byName = new Map<string, TestWorld>();
  const outbound: OutboundFetch = async (request) => {
    const url = new URL(request.url);
    calls.push(`${request.method} ${url.href}`);
    let res: WorldResponse;
    if (url.host === 'api.stripe.com') res = await toWorld(byName.get('real')!, 'vendor', `/stripe${url.pathname}`, url.search.slice(1), request);
    else {
      const m = /^\/-\/local\/([a-z]+)(\/.*)$/.exec(url.pathname);
      if (url.host !== 'worlds.test' || !m) throw new Error(`no such place ${url.href}`);
      if (request.headers['x-kit-token'] !== `token-of-${m[1]}`) res = { status: 401, headers: {}, body: JSON.stringify({ error: { code: 'unauthorized' } }) };
      else res = await toWorld(byName.get(m[1]!)!, 'api', m[2]!, url.search.slice(1), request);
    }
    const body = typeof res.body === 'string' ? new TextEncoder().encode(res.body) : res.body;
    return { status: res.status, headers: res.headers, body };
  };
  const sealer = createSealer(sealingKeyBytes(newSealingKey()));
  for (const name of ['real', 'main', 'dev']) {
    const w = await openTestWorld({ vendors: ['stripe'], world: name, storage: new MemoryStorage(), outbound, sealer, now: () => Date.parse('2026-01-01T00:00:00.000Z') });
    byName.set(name, w);
    opened.push(w);
  }
  const main = byName.get('main')!;
  expect((await main.api('PUT', '/twins/stripe/root', { url: 'https://api.stripe.com' })).status).toBe(200);
  expect((await main.api('PUT', '/twins/stripe/credential', { bearer: REAL_KEY })).status).toBe(200);
  const dev = byName.get('dev')!;
  const origin = await dev.api('PUT', '/origin', { url: 'https://worlds.test/local/main', token: 'token-of-main' });
  expect(origin.status, origin.text).toBe(200);
  return { real: byName.get('real')!, main, dev, calls };
}

function form(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

async function productWithPrices(w: TestWorld, name: string): Promise<{ product: string; prices: string[] }> {
  const product = await w.vendor('POST', '/stripe/v1/products', form({ name }), { ...APP, ...FORM });
  expect(product.status, product.text).toBe(200);
  const prices: string[] = [];
  for (const amount of ['900', '9000']) {
    const price = await w.vendor('POST', '/stripe/v1/prices', form({ product: product.json.id, unit_amount: amount, currency: 'usd', 'recurring[interval]': amount === '900' ? 'month' : 'year' }), { ...APP, ...FORM });
    expect(price.status, price.text).toBe(200);
    prices.push(price.json.id);
  }
  return { product: product.json.id, prices };
}

describe('changesets', () => {
  it('cuts a world’s own changes, pushes them to its origin, verifies, approves and deploys them with receipts', async () => {
    const { real, main, dev } = await worlds();
    const made = await productWithPrices(dev, 'Pro');
    expect((await dev.api('GET', '/changesets')).json.unpushed).toEqual({ stripe: 3 });

    const cut = await dev.api('POST', '/changesets', { message: 'Pro plan with two prices' });
    expect(cut.status, cut.text).toBe(201);
    const cs = cut.json;
    expect(cs.name).toBe('cs-1');
    expect(cs.changes.map((c: { request: { method: string; path: string } }) => `${c.request.method} ${c.request.path}`)).toEqual(['POST /v1/products', 'POST /v1/prices', 'POST /v1/prices']);
    // The Stripe twin keeps an object as { s: <sequence>, o: <the object> } under <account>/<id>.
    expect(cs.changes[0].writes.find((w: { type: string }) => w.type === 'product')).toMatchObject({ id: expect.stringMatching(new RegExp(`/${made.product}$`)), before: null, after: { o: { name: 'Pro' } } });
    expect(cs.contentHash).toBe(cs.currentHash);
    expect((await dev.api('POST', '/changesets', { message: 'again' })).json.error.code).toBe('nothing_to_cut');

    const pushed = await dev.api('POST', '/origin/push');
    expect(pushed.status, pushed.text).toBe(200);
    expect(pushed.json.pushed[0].changeset).toBe('cs-1');
    const landed = (await main.api('GET', '/changesets/cs-1')).json;
    expect(landed.changes.every((c: { state: string }) => c.state === 'landed')).toBe(true);
    expect((await main.vendor('GET', `/stripe/v1/products/${made.product}`, undefined, APP)).json.name).toBe('Pro');

    // A deploy refuses what no verification covers.
    expect((await main.api('POST', '/deploy/cs-1')).json.error.code).toBe('changeset_not_verified');
    const verified = await main.api('POST', '/changesets/cs-1/verify');
    expect(verified.json).toMatchObject({ pass: true, changes: 3, current: true });

    const approved = await main.api('POST', '/changesets/cs-1/approve', { as: 'ana@example.com', note: 'looks right' });
    expect(approved.status, approved.text).toBe(201);
    const list = (await main.api('GET', '/changesets')).json;
    const payload = approvalPayload({ world: 'main', changeset: 'cs-1', hash: landed.currentHash, as: 'ana@example.com', note: 'looks right', at: approved.json.at });
    expect(await verifyApproval(list.publicKey.jwk, payload, approved.json.signature)).toBe(true);
    expect(await verifyApproval(list.publicKey.jwk, { ...(payload as object), as: 'mallory' }, approved.json.signature)).toBe(false);

    const deployed = await main.api('POST', '/deploy/cs-1');
    expect(deployed.status, deployed.text).toBe(200);
    expect(deployed.json.deployed).toBe('all');
    const receipts = deployed.json.receipts as { ok: boolean; ids: Record<string, string> }[];
    expect(receipts.every((r) => r.ok)).toBe(true);
    const realProduct = receipts[0]!.ids[made.product]!;
    expect(realProduct).toMatch(/^prod_/);
    // The prices at the real account name the real product, not the twin's id.
    const realPrices = (await real.vendor('GET', '/stripe/v1/prices?limit=10', undefined, { authorization: `Bearer ${REAL_KEY}` })).json.data;
    expect(realPrices).toHaveLength(2);
    expect(realPrices.every((p: { product: string }) => p.product === realProduct)).toBe(true);
    expect((await main.api('GET', '/twins/stripe/status')).json.lastReceipt).toMatchObject({ ok: true, twin: 'stripe' });

    // Deploying again performs nothing twice.
    const again = await main.api('POST', '/deploy/cs-1');
    expect(again.json.receipts).toHaveLength(3);
    expect((await real.vendor('GET', '/stripe/v1/products', undefined, { authorization: `Bearer ${REAL_KEY}` })).json.data).toHaveLength(1);
  });

  it('refuses a stale base, a forged hash, a second push, and approval of a body changed outside the world', async () => {
    const { main, dev } = await worlds();
    await productWithPrices(dev, 'Basic');
    const cs = (await dev.api('POST', '/changesets', { message: 'basic', name: 'basic' })).json;
    const forged = await main.api('POST', '/push', { ...cs, message: 'something else' });
    expect(forged.status).toBe(400);
    expect(forged.json.error.code).toBe('changeset_hash_mismatch');
    expect((await main.api('POST', '/push', { nonsense: true })).json.error.code).toBe('invalid_changeset');
    // The origin moved on: the base is no longer current.
    await main.vendor('POST', '/stripe/v1/customers', form({ email: 'x@example.com' }), { ...APP, ...FORM });
    const stale = await main.api('POST', '/push', cs);
    expect(stale.status).toBe(409);
    expect(stale.json.error.code).toBe('base_not_current');
    expect(stale.json.error.drift).toEqual({ stripe: { base: 0, current: 1 } });
    expect((await main.api('GET', '/log/stripe')).json.entries).toHaveLength(1);
    // Pull, which re-bases it, and push it.
    const pulled = await dev.api('POST', '/origin/pull');
    expect(pulled.status, pulled.text).toBe(200);
    expect(pulled.json.rebased).toEqual(['basic']);
    const rebased = (await dev.api('GET', '/changesets/basic')).json;
    expect(rebased.base).toEqual({ stripe: 1 });
    expect((await main.api('POST', '/push', rebased)).status).toBe(201);
    expect((await main.api('POST', '/push', rebased)).json.error.code).toBe('changeset_exists');

    // A stored body changed behind the world's back: its hash no longer matches, approval refuses.
    const key = ['#runner', 'main', 'changeset', 'basic'];
    const stored = main.storage.get<{ changes: { request: { body: string } }[] }>(key)!;
    stored.changes[0]!.request.body = 'name=Tampered';
    main.storage.transact((w) => w.put(key, stored));
    const view = (await main.api('GET', '/changesets/basic')).json;
    expect(view.currentHash).not.toBe(view.contentHash);
    const refused = await main.api('POST', '/changesets/basic/approve', { as: 'ana' });
    expect(refused.status).toBe(409);
    expect(refused.json.error.code).toBe('changeset_hash_changed');
  });

  it('gates a deploy on the checks, and resumes a deploy that failed half-way without doing anything twice', async () => {
    const { real, main, dev } = await worlds();
    await productWithPrices(dev, 'Team');
    await dev.api('POST', '/changesets', { message: 'team', name: 'team' });
    await dev.api('POST', '/origin/push');
    const check = `export const check = { name: 'no-yearly', run(entry) {
      const yearly = entry.writes.filter((w) => w.type === 'price' && w.value && w.value.o.recurring && w.value.o.recurring.interval === 'year');
      return yearly.length === 0 ? true : ['yearly prices are not sold yet: ' + yearly.map((w) => w.value.o.id).join(', ')];
    } };`;
    expect((await main.api('PUT', '/checks/no-yearly', check, { 'content-type': 'text/javascript' })).status).toBe(200);
    const verdict = await main.api('POST', '/changesets/team/verify');
    expect(verdict.json.pass).toBe(false);
    expect(verdict.json.failures, JSON.stringify(verdict.json.failures)).toHaveLength(1);
    expect(verdict.json.failures[0]).toMatchObject({ change: 2, check: 'no-yearly' });
    expect((await main.api('POST', '/deploy/team')).json.error.code).toBe('verification_failed');
    await main.api('DELETE', '/checks/no-yearly');
    expect((await main.api('POST', '/changesets/team/verify')).json.pass).toBe(true);

    // The real account fails the second call.
    const scenario = { handlers: [{ name: 'prices-down', match: { method: 'POST', path: '/v1/prices' }, times: 1, respond: { status: 500, body: { error: { type: 'api_error', message: 'down for a moment' } } } }] };
    const put = await real.api('PUT', '/twins/stripe/scenario', scenario);
    expect(put.status, put.text).toBe(200);
    const failed = await main.api('POST', '/deploy/team');
    expect(failed.status).toBe(502);
    expect(failed.json.error.code).toBe('deploy_failed');
    expect(failed.json.error.receipts.map((r: { ok: boolean }) => r.ok)).toEqual([true, false]);
    expect((await main.api('GET', '/changesets/team')).json.deployed).toBe('partial');

    const resumed = await main.api('POST', '/deploy/team');
    expect(resumed.status, resumed.text).toBe(200);
    expect(resumed.json.deployed).toBe('all');
    const auth = { authorization: `Bearer ${REAL_KEY}` };
    expect((await real.vendor('GET', '/stripe/v1/products', undefined, auth)).json.data).toHaveLength(1);
    expect((await real.vendor('GET', '/stripe/v1/prices', undefined, auth)).json.data).toHaveLength(2);
  });

  it('names a conflict by record and field on pull, and takes the resolution', async () => {
    const { main, dev } = await worlds();
    const customer = await main.vendor('POST', '/stripe/v1/customers', form({ email: 'old@example.com', name: 'Old' }), { ...APP, ...FORM });
    const id = customer.json.id;
    expect((await dev.api('POST', '/origin/pull')).json.pulled).toEqual({ stripe: 1 });
    expect((await dev.vendor('GET', `/stripe/v1/customers/${id}`, undefined, APP)).json.email).toBe('old@example.com');

    await dev.vendor('POST', `/stripe/v1/customers/${id}`, form({ email: 'dev@example.com' }), { ...APP, ...FORM });
    await main.vendor('POST', `/stripe/v1/customers/${id}`, form({ email: 'main@example.com', name: 'Main' }), { ...APP, ...FORM });
    const before = (await dev.api('GET', '/log/stripe')).json.entries.length;
    const conflict = await dev.api('POST', '/origin/pull');
    expect(conflict.status).toBe(409);
    expect(conflict.json.error.code).toBe('pull_conflicts');
    const conflicts = conflict.json.error.conflicts;
    expect(conflicts).toEqual([expect.objectContaining({ twin: 'stripe', type: 'customer', field: 'o.email', base: 'old@example.com', ours: 'dev@example.com', theirs: 'main@example.com' })]);
    expect(conflicts[0].id).toMatch(new RegExp(`/${id}$`));
    expect((await dev.api('GET', '/log/stripe')).json.entries).toHaveLength(before);

    const resolved = await dev.api('POST', '/origin/pull', { resolve: { [conflicts[0].key]: 'ours' } });
    expect(resolved.status, resolved.text).toBe(200);
    const merged = (await dev.vendor('GET', `/stripe/v1/customers/${id}`, undefined, APP)).json;
    expect(merged.email).toBe('dev@example.com');
    expect(merged.name).toBe('Main');

    await dev.api('POST', '/changesets', { message: 'dev email' });
    const pushed = await dev.api('POST', '/origin/push');
    expect(pushed.status, pushed.text).toBe(200);
    const atMain = (await main.vendor('GET', `/stripe/v1/customers/${id}`, undefined, APP)).json;
    expect(atMain.email).toBe('dev@example.com');
    expect(atMain.name).toBe('Main');
  });

  it('pulls what the origin made beside what this world made, with no conflict', async () => {
    const { main, dev } = await worlds();
    await main.vendor('POST', '/stripe/v1/customers', form({ email: 'main@example.com' }), { ...APP, ...FORM });
    await productWithPrices(dev, 'Solo');
    const pulled = await dev.api('POST', '/origin/pull');
    expect(pulled.status, pulled.text).toBe(200);
    expect((await dev.vendor('GET', '/stripe/v1/customers', undefined, APP)).json.data.map((c: { email: string }) => c.email)).toEqual(['main@example.com']);
    expect((await dev.vendor('GET', '/stripe/v1/products', undefined, APP)).json.data.map((p: { name: string }) => p.name)).toEqual(['Solo']);
    await dev.api('POST', '/changesets', { message: 'solo' });
    expect((await dev.api('POST', '/origin/push')).status).toBe(200);
    expect((await main.vendor('GET', '/stripe/v1/products', undefined, APP)).json.data.map((p: { name: string }) => p.name)).toEqual(['Solo']);
    expect((await main.vendor('GET', '/stripe/v1/customers', undefined, APP)).json.data.map((c: { email: string }) => c.email)).toEqual(['main@example.com']);
  });

  it('under deploy: auto, a push verifies and performs the changes at once', async () => {
    const { real, main, dev } = await worlds();
    expect((await main.api('PUT', '/twins/stripe/root', { url: 'https://api.stripe.com', deploy: 'auto' })).status).toBe(200);
    const made = await productWithPrices(dev, 'Auto');
    await dev.api('POST', '/changesets', { message: 'auto' });
    const pushed = await dev.api('POST', '/origin/push');
    expect(pushed.status, pushed.text).toBe(200);
    const deployed = pushed.json.pushed[0].deployed;
    expect(deployed.deployed).toBe('all');
    expect(deployed.receipts).toHaveLength(3);
    const realId = deployed.receipts[0].ids[made.product];
    expect((await real.vendor('GET', `/stripe/v1/products/${realId}`, undefined, { authorization: `Bearer ${REAL_KEY}` })).json.name).toBe('Auto');
    // The pushing world keeps the receipts its origin answered.
    expect((await dev.api('GET', '/changesets/cs-1')).json.pushed.receipts).toHaveLength(3);
  });

  it('records a deploy with no credential as a failed change, and refuses one with no root', async () => {
    const { main, dev } = await worlds();
    await productWithPrices(dev, 'Nothing');
    await dev.api('POST', '/changesets', { message: 'n', name: 'n' });
    await dev.api('POST', '/origin/push');
    await main.api('POST', '/changesets/n/verify');
    expect((await main.api('DELETE', '/twins/stripe/credential')).status).toBe(204);
    const failed = await main.api('POST', '/deploy/n');
    expect(failed.status).toBe(502);
    expect(failed.json.error.code).toBe('deploy_failed');
    expect(failed.json.error.receipts[0]).toMatchObject({ ok: false, error: expect.stringContaining('no_credential') });
    expect((await main.api('PUT', '/twins/stripe/root', null)).status).toBe(200);
    const noRoot = await main.api('POST', '/deploy/n');
    expect(noRoot.status).toBe(409);
    expect(noRoot.json.error.code).toBe('no_root');
    // A browser session names what it deploys.
    const session = await main.runner.handle({ surface: 'api', method: 'POST', path: '/deploy/n', query: '', headers: {}, scope: 'write', credential: 'session', who: 'ana', requestId: 'r1', receivedAt: Date.now() });
    expect(session.status).toBe(400);
    expect(JSON.parse(String(session.body)).error.code).toBe('confirm_required');
  });

  it('refuses an origin that is not a world, a wrong token, and a world with history of its own', async () => {
    const { dev } = await worlds();
    const other = await openTestWorld({ vendors: ['stripe'], world: 'other', storage: new MemoryStorage(), sealer: createSealer(sealingKeyBytes(newSealingKey())), outbound: async () => ({ status: 401, headers: {}, body: new TextEncoder().encode('{}') }) });
    opened.push(other);
    expect((await other.api('PUT', '/origin', { url: 'https://worlds.test/local/main', token: 'wrong-token-here' })).json.error.code).toBe('origin_refused');
    expect((await other.api('PUT', '/origin', { url: 'https://worlds.test/', token: 'token-of-main' })).json.error.code).toBe('invalid_origin');
    expect((await other.api('PUT', '/origin', { url: 'http://169.254.169.254/a/b', token: 'token-of-main' })).json.error.code).toBe('destination_refused');
    await dev.vendor('POST', '/stripe/v1/customers', form({ email: 'mine@example.com' }), { ...APP, ...FORM });
    expect((await dev.api('PUT', '/origin', { url: 'https://worlds.test/local/real', token: 'token-of-real' })).json.error.code).toBe('origin_needs_empty_world');
    expect(JSON.stringify((await dev.api('GET', '/origin')).json)).not.toContain('token-of-main');
  });
});
