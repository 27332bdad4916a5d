/**
 * Changesets and origins as every host answers them (spec: Changeset; States and transitions;
 * Pushing and deploying; the origin rows of "A twin's root and the world's relations";
 * Authentication 5–7): a world's own changes cut, shown, pushed to its origin, verified,
 * approved, deployed to a root with receipts; what the read token and a browser session may do;
 * a branch pushing to and pulling from its parent; and each refusal. Called by
 * `runWorldEndpointCases` with its case helpers.
 *
 * Three worlds of the same host play the parts: `real` is the real Stripe account (its Stripe
 * twin, reached over http on loopback as roots.cases.ts reaches it), `main` is rooted on it, and
 * `dev` names `main` as its origin (`PUT …/origin`, through the host's outbound fetch).
 */
import { expect } from 'vitest';
import { KEYS_COOLDOWN_MS } from '../../host/core/access/passes.js';
import { approvalPayload, verifyApproval } from '../../runtime/runner/changesets/index.js';
import type { CaseKit } from './browser-access.cases.js';
import { api, atOrigin, bearer, expectRefused, fromPage, loopbackSession, makeBranch, sessionCookieOf, tokenSession, worldOrigin } from './calls.js';
import { errorCode, send, type Answer, type HostWorld } from './fixture.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- answers as parsed

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** A call of a world's Stripe API with the world's token as the API key. */
function stripe(w: HostWorld, method: string, path: string, form?: Record<string, string>, token = w.token): Promise<Answer> {
  const body = form === undefined ? undefined : new URLSearchParams(form).toString();
  return send(method, `${w.url}/stripe${path}`, { headers: { ...bearer(token), ...(body !== undefined ? FORM : {}) }, ...(body !== undefined ? { body } : {}) });
}

async function ok(a: Promise<Answer>, status = 200): Promise<Json> {
  const got = await a;
  expect([got.status, got.text.slice(0, 400)]).toEqual([status, expect.any(String)]);
  return got.json() as Json;
}

/** A product with a monthly and a yearly price, made through the world's Stripe API. */
async function productWithPrices(w: HostWorld, name: string): Promise<{ product: string; prices: string[] }> {
  const product = await ok(stripe(w, 'POST', '/v1/products', { name }));
  const prices: string[] = [];
  for (const [amount, interval] of [['900', 'month'], ['9000', 'year']] as const) {
    prices.push((await ok(stripe(w, 'POST', '/v1/prices', { product: product.id, unit_amount: amount, currency: 'usd', 'recurring[interval]': interval }))).id);
  }
  return { product: product.id, prices };
}

async function stripeHead(w: HostWorld): Promise<number> {
  const map = await ok(api(w, 'GET', '/map'));
  return map.twins.find((t: { twin: string }) => t.twin === 'stripe').position as number;
}

/** The world API at the world's own origin, as its page calls it with a session's cookie. */
function fromSession(w: HostWorld, cookie: string, method: string, sub: string, body?: object): Promise<Answer> {
  return atOrigin(w, method, `/-/${w.name}${sub}`, { headers: fromPage(w, cookie), ...(body !== undefined ? { body } : {}) });
}

/** Whether an approval's signature is the world's over what it says it signed. */
async function signedBy(list: Json, approval: Json, over: Partial<{ as: string; hash: string }> = {}): Promise<boolean> {
  const payload = approvalPayload({ world: approval.world, changeset: approval.changeset ?? '', hash: over.hash ?? approval.hash, as: over.as ?? approval.as, note: approval.note, at: approval.at });
  return verifyApproval(list.publicKey.jwk, payload, approval.signature);
}

export function changesetsCases({ test, group, host }: CaseKit): void {
  /**
   * real, main rooted on it with real's token sealed, and dev whose origin is main. real has a
   * customer of its own first: ids are seeded by world, twin and position, and on the
   * single-world server every world has the same name, so real's first product would otherwise
   * get dev's id and a deploy would map nothing.
   */
  const worlds = async (): Promise<{ real: HostWorld; main: HostWorld; dev: HostWorld }> => {
    const real = await host().openWorld();
    await ok(stripe(real, 'POST', '/v1/customers', { name: 'Owner', email: 'owner@example.com' }));
    const main = await host().openWorld();
    await ok(api(main, 'PUT', '/twins/stripe/root', { url: `${real.url}/stripe` }));
    await ok(api(main, 'PUT', '/twins/stripe/credential', { bearer: real.token }));
    const dev = await host().openWorld();
    const origin = await ok(api(dev, 'PUT', '/origin', { url: main.url, token: main.token }));
    expect(origin).toMatchObject({ origin: { kind: 'url', url: main.url }, brought: {} });
    return { real, main, dev };
  };

  /** Changeset `cs-1` of dev (a product and its two prices) pushed to main with `origin push`. */
  const pushed = async (): Promise<{ real: HostWorld; main: HostWorld; dev: HostWorld; made: { product: string; prices: string[] }; cs: Json }> => {
    const { real, main, dev } = await worlds();
    const made = await productWithPrices(dev, 'Pro');
    const cs = await ok(api(dev, 'POST', '/changesets', { message: 'Pro plan with two prices' }), 201);
    const push = await ok(api(dev, 'POST', '/origin/push'));
    expect(push.pushed.map((p: { changeset: string }) => p.changeset)).toEqual([cs.name]);
    return { real, main, dev, made, cs };
  };

  group('changesets: cut, push, verify, approve, deploy', () => {
    test("a world's own changes are cut, shown, pushed to its origin, verified, approved and deployed to the root, the receipts naming the real ids", async () => {
      const { real, main, dev } = await worlds();
      // What the origin holds came in, and its token is in no answer.
      const origin = await ok(api(dev, 'GET', '/origin'));
      expect(origin.origin).toMatchObject({ kind: 'url', url: main.url });
      expect(JSON.stringify(origin)).not.toContain(main.token);

      const made = await productWithPrices(dev, 'Pro');
      expect((await ok(api(dev, 'GET', '/changesets'))).unpushed).toEqual({ stripe: 3 });
      const cs = await ok(api(dev, 'POST', '/changesets', { message: 'Pro plan with two prices' }), 201);
      expect(cs).toMatchObject({ name: 'cs-1', message: 'Pro plan with two prices', cut: true, pushed: null, deployed: 'none' });
      expect(cs.contentHash).toMatch(/^sha256:[A-Za-z0-9_-]{43}$/);
      expect(cs.currentHash).toBe(cs.contentHash);
      expect(cs.changes.map((c: Json) => [c.request.method, c.request.path, c.status, c.state])).toEqual([
        ['POST', '/v1/products', 200, 'landed'],
        ['POST', '/v1/prices', 200, 'landed'],
        ['POST', '/v1/prices', 200, 'landed'],
      ]);
      // Each change keeps the request that made it and what it wrote, record by record.
      expect(cs.changes[0].request.body).toBe('name=Pro');
      expect(cs.changes[0].writes.find((w: Json) => w.type === 'product')).toMatchObject({ id: expect.stringContaining(made.product), before: null, after: { o: { id: made.product, name: 'Pro' } } });
      expect(await ok(api(dev, 'GET', '/changesets/cs-1'))).toEqual(cs);
      const listed = await ok(api(dev, 'GET', '/changesets'));
      expect([listed.changesets.map((c: Json) => c.name), listed.unpushed]).toEqual([['cs-1'], {}]);
      expectRefused(await api(dev, 'POST', '/changesets', { message: 'again' }), 409, 'nothing_to_cut');

      const push = await ok(api(dev, 'POST', '/origin/push'));
      expect(push.pushed).toEqual([expect.objectContaining({ changeset: 'cs-1', appended: { stripe: [1, 3] } })]);
      expect((await ok(api(dev, 'GET', '/changesets/cs-1'))).pushed).toMatchObject({ to: main.url, at: expect.any(String) });
      // Landed in main: in its log, its Stripe API, its list.
      const landed = await ok(api(main, 'GET', '/changesets/cs-1'));
      expect(landed).toMatchObject({ name: 'cs-1', cut: false, contentHash: cs.contentHash, currentHash: cs.contentHash, landedAt: expect.any(String), deployed: 'none' });
      expect(landed.changes.map((c: Json) => c.state)).toEqual(['landed', 'landed', 'landed']);
      expect((await ok(stripe(main, 'GET', `/v1/products/${made.product}`))).name).toBe('Pro');
      const log = await ok(api(main, 'GET', '/log/stripe'));
      expect(log.entries.map((e: Json) => [e.cause.kind, e.cause.changeset])).toEqual([
        ['push', 'cs-1'],
        ['push', 'cs-1'],
        ['push', 'cs-1'],
      ]);

      // Not deployed before a verification covers it.
      expectRefused(await api(main, 'POST', '/deploy/cs-1'), 409, 'changeset_not_verified');
      expect(await ok(api(main, 'POST', '/changesets/cs-1/verify'))).toMatchObject({ hash: cs.contentHash, pass: true, changes: 3, current: true });

      const approval = await ok(api(main, 'POST', '/changesets/cs-1/approve', { as: 'ana@example.com', note: 'looks right' }), 201);
      expect(approval).toMatchObject({ as: 'ana@example.com', note: 'looks right', hash: cs.contentHash, current: true });
      // The approval names the world that signed it: its name on a host of many, its own name served alone.
      expect([main.name, main.world]).toContain(approval.world);
      const list = await ok(api(main, 'GET', '/changesets'));
      expect(list.publicKey).toMatchObject({ jwk: { kty: 'OKP', crv: 'Ed25519' }, keyId: approval.keyId });
      expect(JSON.stringify(list.publicKey)).not.toMatch(/"d"/);
      expect(await signedBy(list, { ...approval, changeset: 'cs-1' })).toBe(true);
      expect(await signedBy(list, { ...approval, changeset: 'cs-1' }, { as: 'mallory@example.com' })).toBe(false);
      expect((await ok(api(main, 'GET', '/changesets/cs-1'))).approvals).toEqual([approval]);

      const deployed = await ok(api(main, 'POST', '/deploy/cs-1'));
      expect(deployed).toMatchObject({ changeset: 'cs-1', deployed: 'all' });
      const receipts = deployed.receipts as Json[];
      expect(receipts.map((r) => [r.change, r.ok, r.status, r.request.method, r.request.url])).toEqual([
        [0, true, 200, 'POST', `${real.url}/stripe/v1/products`],
        [1, true, 200, 'POST', `${real.url}/stripe/v1/prices`],
        [2, true, 200, 'POST', `${real.url}/stripe/v1/prices`],
      ]);
      expect(JSON.stringify(deployed)).not.toContain(real.token);
      // The product at the real account has an id of its own, which the receipt names; its prices name it.
      const realProduct = receipts[0]!.ids[made.product] as string;
      expect(realProduct).toMatch(/^prod_/);
      expect(realProduct).not.toBe(made.product);
      expect((await ok(stripe(real, 'GET', `/v1/products/${realProduct}`))).name).toBe('Pro');
      expect((await stripe(real, 'GET', `/v1/products/${made.product}`)).status).toBe(404);
      const realPrices = (await ok(stripe(real, 'GET', '/v1/prices?limit=10'))).data as Json[];
      expect(realPrices.map((p) => [p.product, p.unit_amount]).sort()).toEqual([
        [realProduct, 900],
        [realProduct, 9000],
      ]);
      expect(realPrices.map((p) => receipts.find((r) => Object.values(r.ids).includes(p.id))?.change).sort()).toEqual([1, 2]);
      expect((await ok(api(main, 'GET', '/twins/stripe/status'))).lastReceipt).toMatchObject({ ok: true, twin: 'stripe' });
      expect((await ok(api(main, 'GET', '/changesets/cs-1'))).changes.map((c: Json) => c.state)).toEqual(['deployed', 'deployed', 'deployed']);

      // Deploying again performs nothing twice.
      const again = await ok(api(main, 'POST', '/deploy'));
      expect(again.deployed).toEqual([]);
      expect((await ok(api(main, 'POST', '/deploy/cs-1'))).receipts).toHaveLength(3);
      expect((await ok(stripe(real, 'GET', '/v1/products'))).data).toHaveLength(1);
    });

    test('the read token opens GET …/changesets and …/changesets/<name>, and nothing else of changesets and the origin', async () => {
      const { main, dev, cs } = await pushed();
      const listed = await ok(api(main, 'GET', '/changesets', undefined, main.readToken));
      expect(listed.changesets.map((c: Json) => c.name)).toEqual(['cs-1']);
      expect(await ok(api(main, 'GET', '/changesets/cs-1', undefined, main.readToken))).toMatchObject({ name: 'cs-1', contentHash: cs.contentHash });
      await productWithPrices(dev, 'Read');
      const before = await ok(api(dev, 'GET', '/changesets'));
      for (const [w, method, path, body] of [
        [dev, 'POST', '/changesets', { message: 'from the read token' }],
        [main, 'POST', '/changesets/cs-1/verify', undefined],
        [main, 'POST', '/changesets/cs-1/approve', { as: 'reader' }],
        [main, 'POST', '/push', cs],
        [main, 'POST', '/deploy', undefined],
        [main, 'POST', '/deploy/cs-1', { confirm: 'cs-1' }],
        [dev, 'GET', '/origin', undefined],
        [dev, 'PUT', '/origin', { url: main.url, token: main.token }],
        [dev, 'POST', '/origin/pull', undefined],
        [dev, 'POST', '/origin/push', undefined],
      ] as const) {
        expectRefused(await api(w, method, path, body, w.readToken), 403, 'forbidden', `${method} ${path}`);
      }
      // Nothing was cut, verified, approved or deployed.
      expect(await ok(api(dev, 'GET', '/changesets'))).toEqual(before);
      expect(await ok(api(main, 'GET', '/changesets/cs-1'))).toMatchObject({ verification: null, approvals: [], receipts: [], deployed: 'none' });
    });

    test("a browser session's approval signs as its person, whatever its body says; its deploy names what it deploys", async () => {
      const { real, main } = await pushed();
      await ok(api(main, 'POST', '/changesets/cs-1/verify'));

      // This machine's own page (Authentication 7): the person is this machine.
      const local = await loopbackSession(main);
      const byPage = await ok(fromSession(main, local, 'POST', '/changesets/cs-1/approve', { as: 'mallory@example.com', note: 'from the page' }), 201);
      expect(byPage).toMatchObject({ as: 'this machine', note: 'from the page', current: true });
      const list = await ok(api(main, 'GET', '/changesets'));
      expect(await signedBy(list, { ...byPage, changeset: 'cs-1' })).toBe(true);
      expect(await signedBy(list, { ...byPage, changeset: 'cs-1' }, { as: 'mallory@example.com' })).toBe(false);

      // A session opened with the token names no person, and says so rather than taking the body's.
      const byToken = await ok(fromSession(main, await tokenSession(main), 'POST', '/changesets/cs-1/approve', { as: 'ana@example.com' }), 201);
      expect(byToken.as).not.toBe('ana@example.com');
      expect((await ok(api(main, 'GET', '/changesets/cs-1'))).approvals.map((a: Json) => a.as)).toEqual(['this machine', byToken.as]);

      // A deploy from a session names the changeset, or nothing goes to the real account.
      for (const body of [undefined, {}, { confirm: 'cs-2' }, { confirm: true }]) {
        expectRefused(await fromSession(main, local, 'POST', '/deploy/cs-1', body), 400, 'confirm_required', JSON.stringify(body));
      }
      expectRefused(await fromSession(main, local, 'POST', '/deploy'), 400, 'confirm_required', 'every changeset');
      expectRefused(await fromSession(main, local, 'POST', '/deploy', { confirm: 'cs-1' }), 400, 'confirm_required', 'every changeset, one named');
      expect((await ok(api(main, 'GET', '/changesets/cs-1'))).deployed).toBe('none');
      expect((await ok(stripe(real, 'GET', '/v1/products'))).data).toEqual([]);
      const deployed = await ok(fromSession(main, local, 'POST', '/deploy/cs-1', { confirm: 'cs-1' }));
      expect(deployed).toMatchObject({ changeset: 'cs-1', deployed: 'all' });
      expect((await ok(stripe(real, 'GET', '/v1/products'))).data).toHaveLength(1);
      // Every changeset at once: the world's name, as the page shows it.
      expect(await ok(fromSession(main, local, 'POST', '/deploy', { confirm: main.name }))).toEqual({ deployed: [] });
    });
  });

  group('changesets: a branch and its parent', () => {
    test('a branch pushes what it cut to its parent with origin push (the parent opened as a request would) and pulls what the parent made since', async () => {
      const parent = await host().openWorld();
      const customer = await ok(stripe(parent, 'POST', '/v1/customers', { name: 'Before', email: 'before@example.com' }));
      const branch = await makeBranch(parent);
      expect((await ok(api(branch, 'GET', '/origin'))).origin).toMatchObject({ kind: 'parent', world: parent.name });
      expect(await ok(api(branch, 'POST', '/origin/push'))).toEqual({ pushed: [] });

      const made = await productWithPrices(branch, 'Branch plan');
      const cs = await ok(api(branch, 'POST', '/changesets', { message: 'a plan made on a branch' }), 201);
      expect(cs.base).toEqual({ stripe: 1 });
      // The parent closed, as a world nobody used for a while is: the push opens it.
      await host().idle(parent);
      const push = await ok(api(branch, 'POST', '/origin/push'));
      expect(push.pushed).toEqual([expect.objectContaining({ changeset: cs.name, appended: { stripe: [2, 4] } })]);
      expect((await ok(stripe(parent, 'GET', `/v1/products/${made.product}`))).name).toBe('Branch plan');
      expect(await ok(api(parent, 'GET', `/changesets/${cs.name}`))).toMatchObject({ cut: false, contentHash: cs.contentHash, landedAt: expect.any(String) });
      expect((await ok(api(branch, 'GET', `/changesets/${cs.name}`))).pushed).toMatchObject({ to: parent.name });
      // Pushed once: nothing goes twice.
      expect(await ok(api(branch, 'POST', '/origin/push'))).toEqual({ pushed: [] });
      expect(await stripeHead(parent)).toBe(4);

      // The parent moves on; the branch pulls it.
      await ok(stripe(parent, 'POST', `/v1/customers/${customer.id}`, { name: 'After' }));
      const pull = await ok(api(branch, 'POST', '/origin/pull'));
      expect(pull).toMatchObject({ pulled: { stripe: 1 }, merged: false, conflicts: [] });
      expect((await ok(stripe(branch, 'GET', `/v1/customers/${customer.id}`))).name).toBe('After');
      expect((await ok(api(branch, 'POST', '/origin/pull'))).pulled).toEqual({});

      // And goes on from there: a change on top of what it pulled lands in the parent too.
      await ok(stripe(branch, 'POST', `/v1/customers/${customer.id}`, { email: 'branch@example.com' }));
      const second = await ok(api(branch, 'POST', '/changesets', { message: 'email', name: 'email' }), 201);
      expect(second.base).toEqual({ stripe: 5 });
      expect((await ok(api(branch, 'POST', '/origin/push'))).pushed).toEqual([expect.objectContaining({ changeset: 'email', appended: { stripe: [6, 6] } })]);
      expect(await ok(stripe(parent, 'GET', `/v1/customers/${customer.id}`))).toMatchObject({ name: 'After', email: 'branch@example.com' });
    }, ['branches']);

    test('a branch whose parent moved on cannot push over it: base_not_current with the drift, and after a pull it can', async () => {
      const parent = await host().openWorld();
      const branch = await makeBranch(parent);
      await ok(stripe(branch, 'POST', '/v1/customers', { name: 'Branch', email: 'branch@example.com' }));
      await ok(api(branch, 'POST', '/changesets', { message: 'a customer', name: 'customer' }), 201);
      await ok(stripe(parent, 'POST', '/v1/products', { name: 'Parent' }));
      const refused = await api(branch, 'POST', '/origin/push');
      expectRefused(refused, 409, 'base_not_current');
      expect(refused.json().error.drift).toEqual({ stripe: { base: 0, current: 1 } });
      expect(await stripeHead(parent)).toBe(1);
      expect((await ok(api(branch, 'GET', '/changesets/customer'))).pushed).toBeNull();

      const pull = await ok(api(branch, 'POST', '/origin/pull'));
      expect(pull).toMatchObject({ pulled: { stripe: 1 }, rebased: ['customer'] });
      expect((await ok(api(branch, 'GET', '/changesets/customer'))).base).toEqual({ stripe: 1 });
      expect((await ok(api(branch, 'POST', '/origin/push'))).pushed).toEqual([expect.objectContaining({ changeset: 'customer', appended: { stripe: [2, 2] } })]);
      expect((await ok(stripe(parent, 'GET', '/v1/customers'))).data.map((c: Json) => c.name)).toEqual(['Branch']);
    }, ['branches']);
  });

  group('changesets: refusals', () => {
    test('refused: a malformed changeset, a forged hash, one pushed twice, a stale base with its drift; nothing appended', async () => {
      const dev = await host().openWorld();
      const target = await host().openWorld();
      await productWithPrices(dev, 'Basic');
      const cs = await ok(api(dev, 'POST', '/changesets', { message: 'basic', name: 'basic' }), 201);
      expect(cs.base).toEqual({ stripe: 0 });

      for (const body of [
        { nonsense: true },
        [],
        { ...cs, changes: [] },
        { ...cs, name: 'Not A Name' },
        { ...cs, base: { stripe: -1 } },
        { ...cs, base: 'zero' },
        { ...cs, changes: [{ ...cs.changes[0], twin: 'nobody' }] },
        { ...cs, changes: [{ ...cs.changes[0], request: { ...cs.changes[0].request, method: 'GET' } }] },
        { ...cs, changes: [{ ...cs.changes[0], writes: 'all of them' }] },
        { ...cs, contentHash: undefined },
      ]) {
        expectRefused(await api(target, 'POST', '/push', body), 400, 'invalid_changeset', JSON.stringify(body).slice(0, 80));
      }
      expectRefused(await api(target, 'POST', '/push', '{"name":', target.token, { 'content-type': 'application/json' }), 400, 'invalid_json', 'not JSON');
      // A body changed after it was cut, whatever hash it carries.
      const forged: Json[] = [
        { ...cs, message: 'something else' },
        { ...cs, contentHash: `sha256:${'A'.repeat(43)}` },
        { ...cs, changes: cs.changes.map((c: Json, i: number) => (i === 1 ? { ...c, request: { ...c.request, body: c.request.body.replace('unit_amount=900', 'unit_amount=1') } } : c)) },
      ];
      expect(forged[2]!.changes[1].request.body).not.toBe(cs.changes[1].request.body);
      for (const body of forged) expectRefused(await api(target, 'POST', '/push', body), 400, 'changeset_hash_mismatch', JSON.stringify(body).slice(0, 80));
      expect(await stripeHead(target)).toBe(0);
      expect((await ok(api(target, 'GET', '/changesets'))).changesets).toEqual([]);

      expect(await ok(api(target, 'POST', '/push', cs), 201)).toMatchObject({ changeset: { name: 'basic', contentHash: cs.contentHash }, appended: { stripe: [1, 3] } });
      expectRefused(await api(target, 'POST', '/push', cs), 409, 'changeset_exists', 'pushed twice');
      expect(await stripeHead(target)).toBe(3);

      // The target moves on; a changeset cut on the old position is refused with the drift.
      await ok(stripe(dev, 'POST', '/v1/customers', { name: 'Second', email: 'second@example.com' }));
      const second = await ok(api(dev, 'POST', '/changesets', { message: 'second', name: 'second' }), 201);
      expect(second.base).toEqual({ stripe: 3 });
      await ok(stripe(target, 'POST', '/v1/customers', { name: 'Theirs', email: 'theirs@example.com' }));
      const stale = await api(target, 'POST', '/push', second);
      expectRefused(stale, 409, 'base_not_current', 'stale');
      expect(stale.json().error.drift).toEqual({ stripe: { base: 3, current: 4 } });
      expect(await stripeHead(target)).toBe(4);
      expectRefused(await api(target, 'GET', '/changesets/second'), 404, 'unknown_changeset');
    });

    test('refused: an unknown changeset, a cut with nothing or a bad name, an approval without a person, a deploy with no root', async () => {
      const w = await host().openWorld();
      for (const [method, path, body] of [
        ['GET', '/changesets/nope', undefined],
        ['POST', '/changesets/nope/verify', undefined],
        ['POST', '/changesets/nope/approve', { as: 'ana@example.com' }],
        ['POST', '/deploy/nope', undefined],
      ] as const) {
        expectRefused(await api(w, method, path, body, w.token, { 'content-type': 'application/json' }), 404, 'unknown_changeset', `${method} ${path}`);
      }
      expectRefused(await api(w, 'POST', '/changesets', { message: 'nothing yet' }), 409, 'nothing_to_cut');
      await productWithPrices(w, 'Refusals');
      for (const body of [{}, { message: '' }, { message: 'x', name: 'Bad Name' }, { message: 'x', name: '../up' }, { message: 'x', extra: 1 }, []]) {
        expectRefused(await api(w, 'POST', '/changesets', body), 400, 'invalid_changeset', JSON.stringify(body));
      }
      // Still there to cut: the refusals took nothing.
      expect((await ok(api(w, 'GET', '/changesets'))).unpushed).toEqual({ stripe: 3 });
      await ok(api(w, 'POST', '/changesets', { message: 'one', name: 'one' }), 201);
      await ok(stripe(w, 'POST', '/v1/customers', { name: 'Later', email: 'later@example.com' }));
      expectRefused(await api(w, 'POST', '/changesets', { message: 'again', name: 'one' }), 409, 'changeset_exists');

      for (const body of [{}, { as: '' }, { as: 42 }, { as: 'ana', note: 7 }]) {
        expectRefused(await api(w, 'POST', '/changesets/one/approve', body), 400, 'bad_request', JSON.stringify(body));
      }
      expect((await ok(api(w, 'GET', '/changesets/one'))).approvals).toEqual([]);
      await ok(api(w, 'POST', '/changesets/one/verify'));
      expectRefused(await api(w, 'POST', '/deploy/one'), 409, 'no_root');
      expectRefused(await api(w, 'POST', '/deploy/one', [1]), 400, 'bad_request');
      expect((await ok(api(w, 'GET', '/changesets/one'))).receipts).toEqual([]);
    });

    test('refused origins: none named, a wrong token, a URL that is no world, a world with history of its own', async () => {
      const main = await host().openWorld();
      const dev = await host().openWorld();
      expect(await ok(api(dev, 'GET', '/origin'))).toEqual({ origin: null });
      expectRefused(await api(dev, 'POST', '/origin/push'), 409, 'no_origin');
      expectRefused(await api(dev, 'POST', '/origin/pull'), 409, 'no_origin');
      const wrong = await api(dev, 'PUT', '/origin', { url: main.url, token: 'tok_not-this-worlds-token-0123456789abcdef' });
      expectRefused(wrong, 502, 'origin_refused', 'wrong token');
      expect(wrong.text).not.toContain(main.token);
      expectRefused(await api(dev, 'PUT', '/origin', { url: `${main.base}/nobody/here`, token: main.token }), 400, 'invalid_origin', 'no world there');
      for (const body of [{ url: main.url }, { url: `${main.base}/`, token: main.token }, { url: main.url, token: main.token, extra: 1 }, []]) {
        expectRefused(await api(dev, 'PUT', '/origin', body), 400, 'invalid_origin', JSON.stringify(body).slice(0, 80));
      }
      for (const url of ['not a url', 'http://169.254.169.254/acme/shop', 'ftp://example.com/acme/shop']) {
        expectRefused(await api(dev, 'PUT', '/origin', { url, token: main.token }), 400, 'destination_refused', url);
      }
      expect(await ok(api(dev, 'GET', '/origin'))).toEqual({ origin: null });
      // The read token opens the origin's map, and brings its history in; pushing back through it is refused there.
      await ok(stripe(main, 'POST', '/v1/customers', { name: 'Main', email: 'main@example.com' }));
      const brought = await ok(api(dev, 'PUT', '/origin', { url: main.url, token: main.readToken }));
      expect(brought.brought).toMatchObject({ stripe: 1 });
      await ok(stripe(dev, 'POST', '/v1/customers', { name: 'Dev', email: 'dev@example.com' }));
      await ok(api(dev, 'POST', '/changesets', { message: 'dev' }), 201);
      expectRefused(await api(dev, 'POST', '/origin/push'), 502, 'origin_refused', 'pushed with the read token');
      expect(await stripeHead(main)).toBe(1);
      // A world with history of its own takes no other origin.
      const other = await host().openWorld();
      expectRefused(await api(dev, 'PUT', '/origin', { url: other.url, token: other.token }), 409, 'origin_needs_empty_world');
      expect((await ok(api(dev, 'GET', '/origin'))).origin).toMatchObject({ url: main.url });
    });
  });

  group('changesets: a person', () => {
    /**
     * A write session opened with a pass for `subject`. The host fetches an issuer's keys at most
     * once per KEYS_COOLDOWN_MS, and the passes cases end by rotating the issuer's key: until the
     * host may fetch again, a pass signed with the new key is unknown to it. Waited for here.
     */
    const passSession = async (w: HostWorld, subject: string): Promise<string> => {
      const until = Date.now() + KEYS_COOLDOWN_MS + 5000;
      for (;;) {
        const pass = await host().passIssuer.sign({ world: w.name, origin: worldOrigin(w), scope: 'write', subject });
        const a = await atOrigin(w, 'POST', `/-/${w.name}/session`, { headers: { 'x-kit-pass': pass, origin: worldOrigin(w), 'sec-fetch-site': 'same-origin' } });
        if (a.status === 200) return sessionCookieOf(a);
        if (errorCode(a) !== 'pass_unknown_key' || Date.now() > until) expect([a.status, a.text.slice(0, 300)]).toEqual([200, expect.any(String)]);
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    };

    test("a session opened with a pass approves as the pass's person, whatever its body says", async () => {
      const { main } = await pushed();
      const cookie = await passSession(main, 'usr_ada');
      const byAda = await ok(fromSession(main, cookie, 'POST', '/changesets/cs-1/approve', { as: 'someone-else', note: 'checked the prices' }), 201);
      expect(byAda).toMatchObject({ as: 'usr_ada', note: 'checked the prices', current: true });
      const list = await ok(api(main, 'GET', '/changesets'));
      expect(await signedBy(list, { ...byAda, changeset: 'cs-1' })).toBe(true);
      expect(await signedBy(list, { ...byAda, changeset: 'cs-1' }, { as: 'someone-else' })).toBe(false);
      expect((await ok(api(main, 'GET', '/changesets/cs-1'))).approvals.map((a: Json) => a.as)).toEqual(['usr_ada']);
      // Nor does the pass's person deploy without naming the changeset.
      expectRefused(await fromSession(main, cookie, 'POST', '/deploy/cs-1'), 400, 'confirm_required');
    }, [], KEYS_COOLDOWN_MS + 20_000);
  });
}
