/**
 * `kit world changeset …` and `kit world origin …` against real worlds, each a single-world
 * server (uWS) in front of the real runner with the Stripe twin, reaching each other over
 * loopback through a plain fetch:
 *
 *   real     plays api.stripe.com: the account deploys reach (its token is the sealed credential)
 *   main     rooted at real's Stripe; the origin of dev
 *   dev      where the app makes its changes; cuts them and pushes them to main
 *   staging  an empty world, pushed to by URL (--to)
 *
 * What a person sees printed, the exit codes and the codes of refusals, and that neither the
 * origin's token nor the real account's is ever printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintTokens } from '../../host/index.js';
import { startSingleWorldServer } from '../../host/single-world.js';
import type { SingleWorldServer } from '../../host/single-world.js';
import { createNodeOutbound } from '../../runtime/roots/node-outbound.js';
import type { Storage } from '../../runtime/store/index.js';
import { createSealer, newSealingKey, sealingKeyBytes } from '../../runtime/roots/sealing.js';
import { openTestWorld } from '../../test/helpers/world.js';
import { kit } from '../../test/helpers/kit-cli.js';
import type { KitResult } from '../../test/helpers/kit-cli.js';

type Name = 'real' | 'main' | 'dev' | 'staging';
interface Served {
  server: SingleWorldServer;
  tokens: ReturnType<typeof mintTokens>;
  storage: Storage;
}
const worlds = {} as Record<Name, Served>;
/** Everything the CLI printed in this file, to search for secrets at the end. */
const printed: string[] = [];

/** The way out of a world: the Node host's own outbound fetch, loopback allowed as on a world served alone. */
const outbound = createNodeOutbound({ loopback: true });

async function serve(name: Name): Promise<Served> {
  const tokens = mintTokens();
  const world = await openTestWorld({ vendors: ['stripe'], world: name, sealer: createSealer(sealingKeyBytes(newSealingKey())), outbound, outboundLoopback: true });
  const server = await startSingleWorldServer({ world: world.runner, org: 'local', worldName: name, tokens, twins: [{ vendor: 'stripe', requestScopes: [] }] });
  return { server, tokens, storage: world.storage };
}

/** The environment the commands read other worlds' tokens from. */
function env(): NodeJS.ProcessEnv {
  return { MAIN_TOKEN: worlds.main.tokens.token, STAGING_TOKEN: worlds.staging.tokens.token, REAL_TOKEN: worlds.real.tokens.token };
}

/** `kit world <argv>` against the world `name`, as its token; what it printed is kept. */
async function world(name: Name, argv: string[], options: { token?: string; stdin?: string } = {}): Promise<KitResult> {
  const w = worlds[name];
  const r = await kit(['world', ...argv, '--world', w.server.worldUrl, '--token', options.token ?? w.tokens.token], { env: env(), ...(options.stdin !== undefined ? { stdin: options.stdin } : {}) });
  printed.push(...r.out, ...r.err);
  return r;
}

/** A Stripe request the app makes in a world, as the app's SDK would (form-encoded). */
async function stripe<T extends object = { id: string }>(name: Name, method: string, path: string, fields?: Record<string, string>): Promise<T & Record<string, unknown>> {
  const w = worlds[name];
  const r = await fetch(`${w.server.worldUrl}/stripe${path}`, {
    method,
    headers: { authorization: `Bearer ${w.tokens.token}`, ...(fields !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    ...(fields !== undefined ? { body: new URLSearchParams(fields).toString() } : {}),
  });
  const json = (await r.json()) as T & Record<string, unknown>;
  expect(r.status, JSON.stringify(json)).toBe(200);
  return json;
}

/** A world API call, for what a test sets up beside the commands under test. */
async function worldApi(name: Name, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; json: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience
  const w = worlds[name];
  const r = await fetch(`${w.server.worldApi}${path}`, {
    method,
    headers: { 'x-kit-token': w.tokens.token, ...(body !== undefined ? { 'content-type': contentType } : {}) },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  return { status: r.status, json: text === '' ? undefined : JSON.parse(text) };
}

beforeAll(async () => {
  for (const name of ['real', 'main', 'dev', 'staging'] as const) worlds[name] = await serve(name);
  // main keeps a copy of real's Stripe account and deploys to it with real's token.
  expect((await world('main', ['root', 'set', 'stripe', `${worlds.real.server.worldUrl}/stripe`])).code).toBe(0);
  expect((await world('main', ['credential', 'seal', 'stripe', '--bearer-env', 'REAL_TOKEN'])).code).toBe(0);
});
afterAll(async () => {
  for (const w of Object.values(worlds)) await w.server.close();
});

/** A `name  value` line's value. */
function valueOf(lines: string[], name: string): string | undefined {
  const line = lines.find((l) => l.startsWith(`${name} `));
  return line?.slice(name.length).trim();
}

/** A table's row whose first cell is `first`, as cells. */
function row(lines: string[], first: string): string[] {
  return (lines.find((l) => l.trimStart().startsWith(`${first} `)) ?? '').trim().split(/ {2,}/);
}

const INSTANT = '\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z';
const CHEAP_CHECK = `export const check = { name: 'no-cheap-prices', run(entry) {
  const cheap = entry.writes.filter((w) => w.type === 'price' && w.value && w.value.o.unit_amount < 1000);
  return cheap.length === 0 ? true : cheap.map((w) => 'price ' + w.value.o.id + ' is under $10');
} };`;
const WRITES_CHECK = "export const check = { name: 'writes-something', run(entry) { return entry.writes.length > 0 ? true : ['wrote nothing']; } };";

let cutHash = '';
let realProductId = '';

describe('from dev to the real account', () => {
  it("dev takes main as its origin, with main's token from the environment", async () => {
    expect((await world('dev', ['origin'])).out).toEqual(['local/dev has no origin: kit world origin set <url> --token-env VAR names one']);
    // real's token does not open main.
    const refused = await world('dev', ['origin', 'set', worlds.main.server.worldUrl, '--token-env', 'REAL_TOKEN']);
    expect(refused.code).toBe(1);
    expect(refused.out).toEqual([]);
    expect(refused.err).toEqual(['kit: The origin refused the token (401). (origin_refused)']);
    // Its API URL names the same world.
    const set = await world('dev', ['origin', 'set', worlds.main.server.worldApi, '--token-env', 'MAIN_TOKEN']);
    expect(set.code, set.err.join('\n')).toBe(0);
    expect(set.out).toEqual([`kit: the origin of local/dev is ${worlds.main.server.worldUrl}`, '  brought nothing: the origin has no history yet']);
    const shown = await world('dev', ['origin']);
    expect(valueOf(shown.out, 'origin')).toBe(worlds.main.server.worldUrl);
    expect(valueOf(shown.out, 'kind')).toBe('a world by URL');
    expect(valueOf(shown.out, 'since')).toMatch(new RegExp(`^${INSTANT}$`));
    expect(shown.out.slice(-2)).toEqual(['  TWIN    OURS  THEIRS', '  stripe  0     0']);
    expect((await world('dev', ['origin', 'show'])).out).toEqual(shown.out);
    // The world keeps the token sealed; nothing answers it.
    expect((await world('dev', ['origin', '--json'])).text).not.toContain(worlds.main.tokens.token);
  });

  it('cuts the changes the app made in dev; nothing is left to cut', async () => {
    const product = await stripe('dev', 'POST', '/v1/products', { name: 'Pro' });
    await stripe('dev', 'POST', '/v1/prices', { product: product.id, unit_amount: '900', currency: 'usd', 'recurring[interval]': 'month' });
    expect((await world('dev', ['changeset', 'list'])).out).toEqual(['local/dev has no changesets', '', 'not cut yet: stripe 2 changes (kit world changeset cut -m <message>)']);

    const cut = await world('dev', ['changeset', 'cut', '-m', 'Pro plan']);
    expect(cut.code, cut.err.join('\n')).toBe(0);
    expect(cut.out[0]).toMatch(/^kit: cut cs-1: 2 changes \(stripe 2\), hash sha256:[\w-]{43}$/);
    expect(cut.out[1]).toBe('Next: kit world changeset show cs-1, then verify, approve, push or deploy it');
    cutHash = (cut.out[0] as string).split('hash ')[1] as string;

    const again = await world('dev', ['changeset', 'cut', '-m', 'again']);
    expect(again.code).toBe(1);
    expect(again.err).toEqual(['kit: This world has no changes of its own since its last changeset. (nothing_to_cut)']);
    const list = await world('dev', ['changeset', 'list']);
    expect(list.out[0]).toMatch(/^NAME +CUT +CHANGES +VERIFIED +APPROVALS +DEPLOYED +PUSHED +MESSAGE$/);
    expect(row(list.out, 'cs-1')).toEqual(['cs-1', expect.stringMatching(new RegExp(`^${INSTANT}$`)), '2', '-', '0', 'none', '-', 'Pro plan']);
    expect(list.out.at(-1)).toBe('no changes to cut');
  });

  it('shows the changeset as a diff: per change the request, per record each field before → after', async () => {
    const show = await world('dev', ['changeset', 'show', 'cs-1']);
    expect(show.code, show.err.join('\n')).toBe(0);
    expect(valueOf(show.out, 'changeset')).toBe('cs-1');
    expect(valueOf(show.out, 'message')).toBe('Pro plan');
    expect(valueOf(show.out, 'cut')).toMatch(new RegExp(`^${INSTANT} in dev$`));
    expect(valueOf(show.out, 'base')).toBe('stripe 0');
    expect(valueOf(show.out, 'hash')).toBe(cutHash);
    expect(valueOf(show.out, 'verified')).toBe('not yet (kit world changeset verify cs-1)');
    expect(valueOf(show.out, 'approvals')).toBe('none yet');
    expect(valueOf(show.out, 'deployed')).toBe('none');
    expect(show.out.filter((l) => l.startsWith('change '))).toEqual(['change 1 of 2  stripe  POST /v1/products  200  landed', 'change 2 of 2  stripe  POST /v1/prices  200  landed']);
    // The Stripe twin keeps an object as { s: <sequence>, o: <the object> } under <account>/<id>: shown as the object.
    const product = show.out.find((l) => l.startsWith('  product ')) as string;
    expect(product).toMatch(/^ {2}product acct_\w+\/prod_\w+ \(created\) {2}id: \(none\) → "prod_\w+"$/);
    const fields = show.out.map((l) => l.trim());
    expect(fields).toContain('name: (none) → "Pro"');
    // Nested fields as a.b.c.
    expect(fields).toContain('recurring.interval: (none) → "month"');
    expect(fields).toContain('unit_amount: (none) → 900');

    const products = await world('dev', ['changeset', 'show', 'cs-1', '--type', 'product']);
    expect(products.out.filter((l) => /^ {2}\S/.test(l))).toEqual([product, expect.stringMatching(/^ {2}\+ \d+ records of other types \(/), expect.stringMatching(/^ {2}\+ \d+ records of other types \(/)]);
    expect(JSON.parse((await world('dev', ['changeset', 'show', 'cs-1', '--json'])).text)).toMatchObject({ name: 'cs-1', message: 'Pro plan', contentHash: cutHash, changes: [{ state: 'landed' }, { state: 'landed' }] });
    const unknown = await world('dev', ['changeset', 'show', 'cs-9']);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toEqual(["kit: This world has no changeset 'cs-9': kit world changeset list shows the changesets (unknown_changeset)"]);
  });

  it('pushes it to the origin, once; main lists it as landed', async () => {
    const pushed = await world('dev', ['changeset', 'push', 'cs-1']);
    expect(pushed.code, pushed.err.join('\n')).toBe(0);
    expect(pushed.out).toEqual(['kit: pushed cs-1 to the origin: appended stripe 1–2']);
    const again = await world('dev', ['changeset', 'push', 'cs-1']);
    expect(again.code).toBe(0);
    expect(again.out).toEqual([expect.stringMatching(new RegExp(`^kit: cs-1 was pushed to ${worlds.main.server.worldUrl} at ${INSTANT} already$`))]);
    expect(row((await world('dev', ['changeset', 'list'])).out, 'cs-1')[6]).toBe(`to ${worlds.main.server.worldUrl}`);
    expect((await world('dev', ['origin', 'push'])).out).toEqual(['kit: nothing to push: every changeset of local/dev is pushed (kit world changeset cut cuts new changes)']);
    const atMain = await world('main', ['changeset', 'list']);
    expect(row(atMain.out, 'cs-1').slice(2, 7)).toEqual(['2', '-', '0', 'none', expect.stringMatching(new RegExp(`^landed ${INSTANT}$`))]);
  });

  it('main: a deploy needs --confirm, then a verification; a failing check exits 1 and says what failed', async () => {
    const unconfirmed = await world('main', ['changeset', 'deploy', 'cs-1']);
    expect(unconfirmed.code).toBe(1);
    expect(unconfirmed.out).toEqual([
      "kit world changeset deploy would perform on the real vendor accounts (the twins' roots):",
      '  cs-1  2 changes to perform; not verified; 0 approvals',
      '    stripe  POST /v1/products',
      '    stripe  POST /v1/prices',
    ]);
    expect(unconfirmed.err).toEqual(['kit: nothing deployed: this changes real accounts; run again with --confirm to perform cs-1 (confirm_required)']);
    const notVerified = await world('main', ['changeset', 'deploy', 'cs-1', '--confirm']);
    expect(notVerified.code).toBe(1);
    expect(notVerified.err).toEqual(['kit: cs-1 has no verification of its current version: kit world changeset verify cs-1 first (changeset_not_verified)']);
    // Nothing reached the real account.
    expect((await stripe('real', 'GET', '/v1/products'))['data']).toEqual([]);

    expect((await worldApi('main', 'PUT', '/checks/no-cheap-prices', CHEAP_CHECK, 'text/javascript')).status).toBe(200);
    expect((await worldApi('main', 'PUT', '/checks/writes-something', WRITES_CHECK, 'text/javascript')).status).toBe(200);
    const failed = await world('main', ['changeset', 'verify', 'cs-1']);
    expect(failed.code).toBe(1);
    expect(failed.out[0]).toMatch(new RegExp(`^kit: the verification of cs-1: FAIL: 1 failing verdict, 2 checks over 2 changes at ${INSTANT}$`));
    expect(failed.out[1]).toMatch(/^ {2}on sha256:[\w-]{43}$/);
    expect(failed.out.slice(2)).toEqual([expect.stringMatching(/^ {2}change 2 {2}stripe {2}no-cheap-prices: price price_\w+ is under \$10$/)]);
    expect(failed.err).toEqual(['kit: cs-1 failed its checks; fix the changes and cut again, or change the checks and verify again (verification_failed)']);
    const refused = await world('main', ['changeset', 'deploy', 'cs-1', '--confirm']);
    expect(refused.err).toEqual([expect.stringMatching(/: kit world changeset show cs-1 shows what failed \(verification_failed\)$/)]);
    const show = await world('main', ['changeset', 'show', 'cs-1']);
    expect(valueOf(show.out, 'verified')).toMatch(/^FAIL: 1 failing verdict/);
    expect(show.out[show.out.findIndex((l) => l.startsWith('verified '))! + 1]).toMatch(/^ {11}change 2 {2}stripe {2}no-cheap-prices: price price_\w+ is under \$10$/);
    expect(row((await world('main', ['changeset', 'list'])).out, 'cs-1')[3]).toBe('FAIL');

    expect((await worldApi('main', 'DELETE', '/checks/no-cheap-prices')).status).toBe(204);
    const passed = await world('main', ['changeset', 'verify', 'cs-1']);
    expect(passed.code, passed.err.join('\n')).toBe(0);
    expect(passed.out[0]).toMatch(new RegExp(`^kit: the verification of cs-1: pass: 1 check over 2 changes at ${INSTANT}$`));
    expect(passed.err).toEqual([]);
  });

  it('main approves it and deploys it: receipts map the twin ids to the real ones', async () => {
    const approved = await world('main', ['changeset', 'approve', 'cs-1', '--as', 'ana@example.com', '--note', 'looks right']);
    expect(approved.code, approved.err.join('\n')).toBe(0);
    expect(approved.out).toEqual([expect.stringMatching(new RegExp(`^kit: approved cs-1 as ana@example.com: signed sha256:[\\w-]{43} with key \\S+ at ${INSTANT}$`))]);
    const list = await world('main', ['changeset', 'list', '--json']);
    expect(JSON.parse(list.text)).toMatchObject({ publicKey: { jwk: { kty: 'OKP', crv: 'Ed25519' } }, changesets: [{ name: 'cs-1', approvals: [{ as: 'ana@example.com', note: 'looks right', current: true }] }] });

    const deployed = await world('main', ['changeset', 'deploy', 'cs-1', '--confirm']);
    expect(deployed.code, deployed.err.join('\n')).toBe(0);
    expect(deployed.out[0]).toBe('kit: deployed cs-1 (all): 2 changes performed on the roots');
    const real = `${worlds.real.server.worldUrl}/stripe`.replace(/[.]/g, '\\.');
    expect(deployed.out[1]).toMatch(new RegExp(`^ {2}change 1 {2}stripe {2}deployed at ${INSTANT}: 200 POST ${real}/v1/products; prod_\\w+ → prod_\\w+$`));
    expect(deployed.out[2]).toMatch(new RegExp(`^ {2}change 2 {2}stripe {2}deployed at ${INSTANT}: 200 POST ${real}/v1/prices; price_\\w+ → price_\\w+$`));
    realProductId = (deployed.out[1] as string).split(' → ')[1] as string;
    // The real account has the product, under the id the receipt names.
    expect(((await stripe('real', 'GET', '/v1/products'))['data'] as { id: string; name: string }[]).map((p) => [p.id, p.name])).toEqual([[realProductId, 'Pro']]);

    const show = await world('main', ['changeset', 'show', 'cs-1']);
    expect(valueOf(show.out, 'deployed')).toBe('all');
    expect(valueOf(show.out, 'approvals')).toBe('1');
    expect(show.out[show.out.findIndex((l) => l.startsWith('approvals '))! + 1]).toMatch(new RegExp(`^ {11}ana@example\\.com at ${INSTANT} {2}"looks right"$`));
    expect(show.out.filter((l) => l.startsWith('change '))).toEqual(['change 1 of 2  stripe  POST /v1/products  200  deployed', 'change 2 of 2  stripe  POST /v1/prices  200  deployed']);
    expect(show.out.filter((l) => l.startsWith('  deployed at '))).toHaveLength(2);
    const nothing = await world('main', ['changeset', 'deploy']);
    expect(nothing).toMatchObject({ code: 0, out: ['kit: nothing to deploy: local/main has no changes left to perform'], err: [] });
  });

  it('a deploy the real account refuses half-way: the receipts so far, exit 1; a retry performs only what is left', async () => {
    const product = await stripe('dev', 'POST', '/v1/products', { name: 'Team' });
    await stripe('dev', 'POST', '/v1/prices', { product: product.id, unit_amount: '4900', currency: 'usd' });
    expect((await world('dev', ['changeset', 'cut', '-m', 'Team plan', '--name', 'team'])).out[0]).toMatch(/^kit: cut team: 2 changes/);
    expect((await world('dev', ['changeset', 'push', 'team'])).out).toEqual(['kit: pushed team to the origin: appended stripe 3–4']);
    expect((await world('main', ['changeset', 'verify', 'team'])).code).toBe(0);
    const down = { handlers: [{ name: 'prices-down', match: { method: 'POST', path: '/v1/prices' }, times: 1, respond: { status: 500, body: { error: { type: 'api_error', message: 'down for a moment' } } } }] };
    expect((await worldApi('real', 'PUT', '/twins/stripe/scenario', down)).status).toBe(200);

    const failed = await world('main', ['changeset', 'deploy', '--confirm']);
    expect(failed.code).toBe(1);
    expect(failed.out[0]).toBe('kit: the deploy of the changesets stopped; the receipts so far:');
    expect(failed.out.slice(1)).toEqual([
      expect.stringMatching(new RegExp(`^ {2}change 1 {2}stripe {2}deployed at ${INSTANT}: 200 POST \\S+/v1/products; prod_\\w+ → prod_\\w+$`)),
      expect.stringMatching(new RegExp(`^ {2}change 2 {2}stripe {2}FAILED at ${INSTANT}: 500 POST \\S+/v1/prices: the root answered 500: down for a moment$`)),
    ]);
    expect(failed.err).toEqual([
      "kit: Change #2 of 'team' (POST /v1/prices) failed at the root: the root answered 500: down for a moment. The changes before it are performed; deploy again to go on from it (kit world changeset deploy team --confirm) (deploy_failed)",
    ]);
    expect(row((await world('main', ['changeset', 'list'])).out, 'team')[5]).toBe('partial');
    const plan = await world('main', ['changeset', 'deploy']);
    expect(plan.out.slice(1)).toEqual(['  team  1 change to perform; verified; 0 approvals', '    stripe  POST /v1/prices  (failed before: retried)']);

    const retried = await world('main', ['changeset', 'deploy', 'team', '--confirm']);
    expect(retried.code, retried.err.join('\n')).toBe(0);
    expect(retried.out[0]).toBe('kit: deployed team (all): 2 changes performed on the roots');
    expect(retried.out.slice(1).map((l) => / (deployed|FAILED) at /.exec(l)?.[1])).toEqual(['deployed', 'FAILED', 'deployed']);
    expect(((await stripe('real', 'GET', '/v1/products'))['data'] as { name: string }[]).map((p) => p.name).sort()).toEqual(['Pro', 'Team']);
    expect(((await stripe('real', 'GET', '/v1/prices'))['data'] as unknown[])).toHaveLength(2);
  });
});

describe('when the origin moves', () => {
  let customerKey = '';

  it('a push onto a moved origin is refused with the drift; a pull rebases the changeset, which is verified again, and pushed', async () => {
    await stripe('dev', 'POST', '/v1/customers', { email: 'dev@example.com' });
    expect((await world('dev', ['changeset', 'cut', '-m', 'a customer', '--name', 'cust'])).code).toBe(0);
    expect((await world('dev', ['changeset', 'verify', 'cust'])).code).toBe(0);
    await stripe('main', 'POST', '/v1/customers', { email: 'ops@example.com', name: 'Ops' });

    const refused = await world('dev', ['changeset', 'push', 'cust']);
    expect(refused.code).toBe(1);
    expect(refused.out).toEqual([]);
    expect(refused.err).toEqual([
      "kit: the origin refused cust: it has moved past the changeset's base (stripe is at 5, the changeset applies on 4); kit world origin pull brings its changes here, then push again (base_not_current)",
    ]);

    const pulled = await world('dev', ['origin', 'pull']);
    expect(pulled.code, pulled.err.join('\n')).toBe(0);
    expect(pulled.out[0]).toBe('kit: pulled from the origin: stripe 1 entry');
    expect(pulled.out).toContain('  rebased onto the origin: cust (their hash changed: verify and approve them again)');
    const show = await world('dev', ['changeset', 'show', 'cust']);
    expect(valueOf(show.out, 'base')).toBe('stripe 5');
    expect(valueOf(show.out, 'verified')).toMatch(/^pass: .* \(an earlier version: verify again\)$/);
    expect(row((await world('dev', ['changeset', 'list'])).out, 'cust')[3]).toBe('stale');

    expect((await world('dev', ['changeset', 'push', 'cust'])).out).toEqual(['kit: pushed cust to the origin: appended stripe 6']);
    const origin = await world('dev', ['origin']);
    expect(row(origin.out, 'stripe')).toEqual(['stripe', expect.stringMatching(/^\d+$/), '6']);
  });

  it('a field both worlds changed is a conflict: listed, nothing written, exit 1; --resolve and --take choose', async () => {
    const customers = (await stripe('dev', 'GET', '/v1/customers'))['data'] as { id: string; email: string }[];
    const ops = customers.find((c) => c.email === 'ops@example.com') as { id: string };
    await stripe('dev', 'POST', `/v1/customers/${ops.id}`, { email: 'ops-dev@example.com', name: 'Ops (dev)' });
    await stripe('main', 'POST', `/v1/customers/${ops.id}`, { email: 'ops-main@example.com', name: 'Ops (main)' });

    const conflicted = await world('dev', ['origin', 'pull']);
    expect(conflicted.code).toBe(1);
    expect(conflicted.out[0]).toBe('kit: 2 conflicts with the origin; nothing was written:');
    expect(conflicted.out[1]).toMatch(/^ {2}KEY +BASE +OURS +THEIRS$/);
    const email = (conflicted.out.find((l) => l.includes('#o.email ')) ?? '').trim().split(/ {2,}/);
    expect(email.slice(1)).toEqual(['"ops@example.com"', '"ops-dev@example.com"', '"ops-main@example.com"']);
    customerKey = email[0] as string;
    expect(customerKey).toMatch(new RegExp(`^stripe/customer/acct_\\w+/${ops.id}#o\\.email$`));
    expect(conflicted.out.some((l) => l.includes('#o.name') && l.includes('"Ops (dev)"') && l.includes('"Ops (main)"'))).toBe(true);
    expect(conflicted.err).toEqual(['kit: the origin changed 2 fields this world changed too; nothing was pulled: choose with --resolve KEY=ours|theirs, or --take ours|theirs for every conflict (pull_conflicts)']);
    expect((await stripe<{ email: string }>('dev', 'GET', `/v1/customers/${ops.id}`)).email).toBe('ops-dev@example.com');

    const resolved = await world('dev', ['origin', 'pull', '--resolve', `${customerKey}=ours`, '--take', 'theirs']);
    expect(resolved.code, resolved.err.join('\n')).toBe(0);
    expect(resolved.out[0]).toBe('kit: pulled from the origin: stripe 1 entry');
    expect(resolved.out).toContain("  this world's own changes since are kept on top (merged)");
    const merged = await stripe<{ email: string; name: string }>('dev', 'GET', `/v1/customers/${ops.id}`);
    expect([merged.email, merged.name]).toEqual(['ops-dev@example.com', 'Ops (main)']);
    expect((await world('dev', ['origin', 'pull'])).out).toEqual(['kit: local/dev is up to date with its origin']);
  });
});

describe('push --to: any world, by its URL and its token', () => {
  it("sends a changeset as it is; that world appends it (and deploys it, under deploy: auto), refuses it twice, refuses a stale base with the drift, and a wrong token", async () => {
    // staging deploys what is pushed to it to the same real account, at once.
    expect((await world('staging', ['root', 'set', 'stripe', `${worlds.real.server.worldUrl}/stripe`, '--deploy', 'auto'])).code).toBe(0);
    expect((await world('staging', ['credential', 'seal', 'stripe', '--bearer-env', 'REAL_TOKEN'])).code).toBe(0);
    const to = ['--to', worlds.staging.server.worldUrl];
    const pushed = await world('main', ['changeset', 'push', 'cs-1', ...to, '--to-token-env', 'STAGING_TOKEN']);
    expect(pushed.code, pushed.err.join('\n')).toBe(0);
    expect(pushed.out.slice(0, 3)).toEqual([
      'kit: pushed cs-1 to local/staging: appended stripe 1–2',
      expect.stringMatching(new RegExp(`^ {2}verified pass: 0 checks over 2 changes at ${INSTANT}$`)),
      '  deployed (deploy: auto): 2 changes performed on the roots',
    ]);
    expect(pushed.out.slice(3)).toEqual([expect.stringMatching(/^ {4}change 1 {2}stripe {2}deployed at .*\/v1\/products; prod_\w+ → prod_\w+$/), expect.stringMatching(/^ {4}change 2 {2}stripe {2}deployed at .*\/v1\/prices; price_\w+ → price_\w+$/)]);
    expect(row((await world('staging', ['changeset', 'list'])).out, 'cs-1')[5]).toBe('all');
    // The same changes with the same idempotency keys: the real account answered the product it made for main's deploy.
    expect(pushed.out[3]?.endsWith(` → ${realProductId}`)).toBe(true);
    const twice = await world('main', ['changeset', 'push', 'cs-1', ...to, '--to-token-env', 'STAGING_TOKEN']);
    expect(twice.code).toBe(1);
    expect(twice.err).toEqual(["kit: local/staging refused cs-1: This world already has a changeset 'cs-1' (pushed twice?). (changeset_exists)"]);
    // The token piped in.
    expect((await world('main', ['changeset', 'push', 'team', ...to, '--stdin'], { stdin: `${worlds.staging.tokens.token}\n` })).out[0]).toBe('kit: pushed team to local/staging: appended stripe 3–4');
    // staging moves past where cust applies (5).
    await stripe('staging', 'POST', '/v1/customers', { email: 'one@example.com' });
    await stripe('staging', 'POST', '/v1/customers', { email: 'two@example.com' });
    const stale = await world('main', ['changeset', 'push', 'cust', ...to, '--to-token-env', 'STAGING_TOKEN']);
    expect(stale.code).toBe(1);
    expect(stale.err).toEqual(["kit: local/staging refused cust: it has moved past the changeset's base (stripe is at 6, the changeset applies on 5) (base_not_current)"]);
    const wrongToken = await world('main', ['changeset', 'push', 'cust', ...to, '--to-token-env', 'MAIN_TOKEN']);
    expect(wrongToken.code).toBe(1);
    expect(wrongToken.err[0]).toMatch(/^kit: local\/staging refused cust: .*\(unauthenticated\)$/);
  });

  it('origin set: a world with history of its own is refused, and a URL that is not a world', async () => {
    const notEmpty = await world('staging', ['origin', 'set', worlds.main.server.worldUrl, '--token-env', 'MAIN_TOKEN']);
    expect(notEmpty.code).toBe(1);
    expect(notEmpty.err[0]).toMatch(/\(origin_needs_empty_world\)$/);
    const notAWorld = await world('staging', ['origin', 'set', `${worlds.main.server.url}/`, '--token-env', 'MAIN_TOKEN']);
    expect(notAWorld.code).toBe(1);
    expect(notAWorld.err[0]).toMatch(/\(invalid_origin\)$/);
  });
});

describe('a world without an origin', () => {
  it('pushes nothing to one, and a changeset that landed here goes on only by URL', async () => {
    const noOrigin = await world('main', ['origin', 'push']);
    expect(noOrigin.code).toBe(1);
    expect(noOrigin.err).toEqual([expect.stringMatching(/: kit world origin set <url> --token-env VAR names one \(no_origin\)$/)]);
    expect((await world('main', ['origin'])).out).toEqual(['local/main has no origin: kit world origin set <url> --token-env VAR names one']);
    const landed = await world('main', ['changeset', 'push', 'cs-1']);
    expect(landed.code).toBe(1);
    expect(landed.err).toEqual(['kit: cs-1 landed here from dev: only the changesets cut in this world go to its origin; --to <url> sends it to a world by URL (not_cut_here)']);
  });
});

describe('a changeset changed outside the world', () => {
  it('is marked in the list and the header, and approval refuses it with the next step', async () => {
    const key = ['#runner', 'main', 'changeset', 'team'];
    const stored = worlds.main.storage.get<{ message: string }>(key);
    expect(stored).toBeDefined();
    worlds.main.storage.transact((w) => w.put(key, { ...stored, message: 'Team plan, edited on disk' }));
    const list = await world('main', ['changeset', 'list']);
    expect(row(list.out, 'team').at(-1)).toBe('(CHANGED) Team plan, edited on disk');
    const show = await world('main', ['changeset', 'show', 'team']);
    expect(valueOf(show.out, 'hash')).toMatch(/^CHANGED outside the world: stored sha256:[\w-]{43}, now sha256:[\w-]{43}$/);
    const refused = await world('main', ['changeset', 'approve', 'team', '--as', 'ana@example.com']);
    expect(refused.code).toBe(1);
    expect(refused.err).toEqual([expect.stringMatching(/^kit: The changeset's body no longer matches the hash it was stored with \(sha256:[\w-]{43} → sha256:[\w-]{43}\): it was changed outside the world, so it is not approved: kit world changeset show team shows it \(changeset_hash_changed\)$/)]);
  });
});

describe('scopes and secrets', () => {
  it('the read token lists and shows; cutting, verifying and the origin need the token', async () => {
    const read = { token: worlds.dev.tokens.readToken };
    expect((await world('dev', ['changeset', 'list'], read)).code).toBe(0);
    expect((await world('dev', ['changeset', 'show', 'cs-1'], read)).code).toBe(0);
    for (const argv of [['changeset', 'cut', '-m', 'x'], ['changeset', 'verify', 'cs-1'], ['origin']]) {
      const r = await world('dev', argv, read);
      expect(r.code, argv.join(' ')).toBe(1);
      expect(r.err[0], argv.join(' ')).toMatch(/\(forbidden\)$/);
    }
  });

  it('no token of another world was ever printed', () => {
    const all = printed.join('\n');
    expect(all).toContain('kit: pushed');
    for (const name of ['real', 'main', 'staging'] as const) expect(all).not.toContain(worlds[name].tokens.token);
  });
});
