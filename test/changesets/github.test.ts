/**
 * Changesets end to end through Octokit, over three served worlds. `real` plays the GitHub
 * repository (reached at `https://api.github.com` through its own proxy and CA, as in
 * test/roots/); `main` is rooted on `https://api.github.com/repos/acme/shop` with the token
 * sealed; `dev` names `main` as its origin. An app under `kit world attach` adds two labels and
 * a hook in `dev`; they are cut, pushed, refused by a check on `main` (the hook is plain http),
 * fixed in `dev`, verified, approved and deployed, and found at the real repository under the
 * ids the receipts name. The real repository moved on after `main` was refreshed, so its new
 * labels and hooks are numbered past the twin's: every later path must name the real ones,
 * and an issue's number is not a label's id. Then a field changed on both sides.
 */
import { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAttach, cleanEnv, run, type Built } from '../attach/harness.js';
import { serveVendorWorld, worldApi, type Served } from '../roots/served.js';

const REAL = { token: 'tok_real-github-write-token-0123456789abc', readToken: 'tok_r_real-github-read-token-0123456789a' };
const MAIN = { token: 'tok_main-github-write-token-0123456789abc', readToken: 'tok_r_main-github-read-token-0123456789a' };
const DEV = { token: 'tok_dev-github-write-token-0123456789abcd', readToken: 'tok_r_dev-github-read-token-0123456789ab' };
const HOOK_SECRET = 'the-shop-hook-secret';
const repo = { owner: 'acme', repo: 'shop' };
const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** A check that every hook delivers over https: each hook an entry writes, as the world holds it now. */
const HTTPS_HOOKS = `export const check = { name: 'hooks-over-https', run(entry, tree) {
  const plain = [];
  for (const w of entry.writes) {
    if (w.type !== 'hook') continue;
    const now = tree.get('hook', w.id);
    if (now && now.active && !now.config.url.startsWith('https://')) plain.push(now.config.url);
  }
  return plain.length === 0 ? true : ['hooks deliver over https only: ' + plain.join(', ')];
} };`;

let real: Served;
let main: Served;
let dev: Served;
let built: Built;
/** What the app made in `dev`, under the twin's ids. */
let made: { triage: number; billing: number; hook: number };
/** The real repository's ids of the same, from the receipts. */
let deployed: { triage: number; billing: number; hook: number };

const kitAt = (s: Served, token: string): Octokit => new Octokit({ baseUrl: `${s.server.worldUrl}/github`, auth: token, log: quiet });
const mainApi = (method: string, path: string, body?: unknown) => worldApi(main, MAIN.token, method, path, body);
const devApi = (method: string, path: string, body?: unknown) => worldApi(dev, DEV.token, method, path, body);
const realKit = (): Octokit => kitAt(real, REAL.token);

interface ReceiptView {
  change: number;
  ok: boolean;
  status: number | null;
  request: { method: string; url: string };
  answer: { id?: number } | null;
}

const routes = (cs: { changes: { request: { method: string; path: string } }[] }): string[] => cs.changes.map((c) => `${c.request.method} ${c.request.path}`);
const names = (labels: (string | { name?: string })[]): string[] => labels.map((l) => (typeof l === 'string' ? l : l.name!)).sort();

async function putCheck(s: Served, token: string, name: string, source: string): Promise<void> {
  const res = await fetch(`${s.server.worldApi}/checks/${name}`, { method: 'PUT', headers: { 'x-kit-token': token, 'content-type': 'text/javascript' }, body: source });
  expect(res.status, await res.text()).toBe(200);
}

/** Verifies, approves and deploys one changeset at `main`; its receipts. */
async function shipAtMain(name: string): Promise<ReceiptView[]> {
  expect((await mainApi('POST', `/changesets/${name}/verify`)).json, name).toMatchObject({ pass: true });
  expect((await mainApi('POST', `/changesets/${name}/approve`, { as: 'ana@example.com' })).status).toBe(201);
  const deploy = await mainApi('POST', `/deploy/${name}`);
  expect(deploy.status, deploy.text).toBe(200);
  expect(deploy.json.deployed).toBe('all');
  return deploy.json.receipts;
}

beforeAll(async () => {
  [real, built] = await Promise.all([serveVendorWorld('github', 'real', REAL), buildAttach()]);
  main = await serveVendorWorld('github', 'main', MAIN, { world: real, token: REAL.token });
  dev = await serveVendorWorld('github', 'dev', DEV, 'loopback');
  await realKit().request('POST /admin/users', { login: 'octocat', email: 'octocat@example.test' });
  await realKit().request('POST /admin/organizations', { login: 'acme', admin: 'octocat' });
  await realKit().rest.repos.createInOrg({ org: 'acme', name: 'shop', description: 'the real shop', auto_init: true });
  for (const [name, color] of [['bug', 'd73a4a'], ['feature', '0e8a16']] as const) await realKit().rest.issues.createLabel({ ...repo, name, color });
  for (let n = 1; n <= 5; n++) await realKit().rest.issues.create({ ...repo, title: `Real issue ${n}` });

  expect((await mainApi('PUT', '/twins/github/root', { url: 'https://api.github.com/repos/acme/shop' })).status).toBe(200);
  expect((await mainApi('PUT', '/twins/github/credential', { bearer: REAL.token })).json).toMatchObject({ sealed: true });
  const refreshed = await mainApi('POST', '/twins/github/refresh');
  expect(refreshed.status, refreshed.text).toBe(200);
  // Both served on loopback, so the origin may be named over http.
  const origin = await devApi('PUT', '/origin', { url: main.server.worldUrl, token: MAIN.token });
  expect(origin.status, origin.text).toBe(200);
  expect(origin.json.brought.github).toBeGreaterThan(0);

  // The real repository moves on after the refresh: a label and a hook made there.
  await realKit().rest.issues.createLabel({ ...repo, name: 'made-at-real', color: '000000' });
  await realKit().rest.repos.createWebhook({ ...repo, config: { url: 'https://ci.example.test/hook', content_type: 'json' }, events: ['push'] });
}, 120_000);

afterAll(async () => {
  await dev?.server.close();
  await main?.server.close();
  await real?.server.close();
  await built?.close();
});

describe('changesets through Octokit', () => {
  it('cuts what an app under kit world attach made in the world, and pushes it to the origin', async () => {
    const app = [
      "import { Octokit } from '@octokit/rest';",
      'const kit = new Octokit({ auth: process.env.GITHUB_TOKEN });',
      "const triage = await kit.rest.issues.createLabel({ owner: 'acme', repo: 'shop', name: 'triage', color: 'fbca04', description: 'Needs a look' });",
      "const billing = await kit.rest.issues.createLabel({ owner: 'acme', repo: 'shop', name: 'billing', color: '5319e7' });",
      `const hook = await kit.rest.repos.createWebhook({ owner: 'acme', repo: 'shop', config: { url: 'http://hooks.shop.example.test/github', content_type: 'json', secret: ${JSON.stringify(HOOK_SECRET)} }, events: ['label', 'issues'] });`,
      'console.log(JSON.stringify({ triage: triage.data.id, billing: billing.data.id, hook: hook.data.id }));',
    ].join('\n');
    const r = await run(process.execPath, [built.kit, 'world', 'attach', dev.server.worldUrl, '--token', DEV.token, '--', 'node', '--input-type=module', '-e', app], cleanEnv({ GITHUB_TOKEN: DEV.token }));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    made = JSON.parse(r.stdout);
    expect((await devApi('GET', '/changesets')).json.unpushed).toEqual({ github: 3 });

    const cut = await devApi('POST', '/changesets', { message: 'Labels for triage and billing, and a hook' });
    expect(cut.status, cut.text).toBe(201);
    expect(routes(cut.json)).toEqual(['POST /repos/acme/shop/labels', 'POST /repos/acme/shop/labels', 'POST /repos/acme/shop/hooks']);
    const pushed = await devApi('POST', '/origin/push');
    expect(pushed.status, pushed.text).toBe(200);
    expect(pushed.json.pushed.map((p: { changeset: string }) => p.changeset)).toEqual(['cs-1']);
    const atMain = kitAt(main, MAIN.token);
    expect(names((await atMain.rest.issues.listLabelsForRepo(repo)).data)).toEqual(['billing', 'bug', 'feature', 'triage']);
    expect((await atMain.rest.repos.getWebhook({ ...repo, hook_id: made.hook })).data.config.url).toBe('http://hooks.shop.example.test/github');
  });

  it('a check on the origin refuses the plain-http hook, naming its change, and the deploy with it', async () => {
    await putCheck(main, MAIN.token, 'hooks-over-https', HTTPS_HOOKS);
    const verdict = await mainApi('POST', '/changesets/cs-1/verify');
    expect(verdict.json).toMatchObject({ pass: false, checks: 1, changes: 3 });
    expect(verdict.json.failures).toEqual([{ change: 2, twin: 'github', check: 'hooks-over-https', failures: ['hooks deliver over https only: http://hooks.shop.example.test/github'] }]);
    const refused = await mainApi('POST', '/deploy/cs-1');
    expect(refused.status).toBe(409);
    expect(refused.json.error.code).toBe('verification_failed');
    expect(names((await realKit().rest.issues.listLabelsForRepo(repo)).data)).toEqual(['bug', 'feature', 'made-at-real']);
  });

  it('fixed in the world, pushed, verified, approved and deployed: found at the real repository under the receipts’ ids', async () => {
    await kitAt(dev, DEV.token).rest.repos.updateWebhook({ ...repo, hook_id: made.hook, config: { url: 'https://hooks.shop.example.test/github', content_type: 'json' } });
    const fix = await devApi('POST', '/changesets', { message: 'The hook over https' });
    expect(fix.status, fix.text).toBe(201);
    expect(routes(fix.json)).toEqual([`PATCH /repos/acme/shop/hooks/${made.hook}`]);
    expect((await devApi('POST', '/origin/push')).json.pushed.map((p: { changeset: string }) => p.changeset)).toEqual(['cs-2']);

    const first = await shipAtMain('cs-1');
    expect(first.map((r) => [r.ok, r.request.method, r.request.url])).toEqual([
      [true, 'POST', 'https://api.github.com/repos/acme/shop/labels'],
      [true, 'POST', 'https://api.github.com/repos/acme/shop/labels'],
      [true, 'POST', 'https://api.github.com/repos/acme/shop/hooks'],
    ]);
    deployed = { triage: first[0]!.answer!.id!, billing: first[1]!.answer!.id!, hook: first[2]!.answer!.id! };
    // The real repository numbered them past what it made after the refresh.
    for (const k of ['triage', 'billing', 'hook'] as const) expect(deployed[k]).not.toBe(made[k]);
    const second = await shipAtMain('cs-2');
    expect(second.map((r) => [r.ok, r.request.method, r.request.url])).toEqual([[true, 'PATCH', `https://api.github.com/repos/acme/shop/hooks/${deployed.hook}`]]);

    // At the real repository, through Octokit, under the receipts' ids.
    const labels = (await realKit().rest.issues.listLabelsForRepo(repo)).data;
    expect(names(labels)).toEqual(['billing', 'bug', 'feature', 'made-at-real', 'triage']);
    expect(labels.find((l) => l.name === 'triage')).toMatchObject({ id: deployed.triage, color: 'fbca04', description: 'Needs a look' });
    expect(labels.find((l) => l.name === 'billing')).toMatchObject({ id: deployed.billing, color: '5319e7' });
    const hook = (await realKit().rest.repos.getWebhook({ ...repo, hook_id: deployed.hook })).data;
    expect([hook.config.url, hook.events.sort()]).toEqual(['https://hooks.shop.example.test/github', ['issues', 'label']]);
    // The hook made at the real repository is untouched.
    const hooks = (await realKit().rest.repos.listWebhooks(repo)).data;
    expect(hooks.map((h) => h.config.url).sort()).toEqual(['https://ci.example.test/hook', 'https://hooks.shop.example.test/github']);
  });

  it('an issue named by its number reaches the same issue at the real repository, not the one a label id maps to', async () => {
    await kitAt(dev, DEV.token).rest.issues.addLabels({ ...repo, issue_number: 3, labels: ['triage'] });
    expect((await devApi('POST', '/changesets', { message: 'Triage issue 3', name: 'triage-3' })).status).toBe(201);
    expect((await devApi('POST', '/origin/push')).status).toBe(200);
    const receipts = await shipAtMain('triage-3');
    expect(receipts.map((r) => [r.ok, r.request.url])).toEqual([[true, 'https://api.github.com/repos/acme/shop/issues/3/labels']]);
    const issues = (await realKit().rest.issues.listForRepo({ ...repo, state: 'all', per_page: 100 })).data;
    expect(issues.filter((i) => names(i.labels).includes('triage')).map((i) => [i.number, i.title])).toEqual([[3, 'Real issue 3']]);
  });

  it('names a field changed on both sides by record and field on pull, takes the resolution, and cuts and pushes it', async () => {
    await kitAt(dev, DEV.token).rest.issues.updateLabel({ ...repo, name: 'billing', description: 'Money matters (dev)' });
    await kitAt(main, MAIN.token).rest.issues.updateLabel({ ...repo, name: 'billing', description: 'Money matters (main)', color: '0052cc' });

    const conflict = await devApi('POST', '/origin/pull');
    expect(conflict.status).toBe(409);
    expect(conflict.json.error.code).toBe('pull_conflicts');
    const conflicts = conflict.json.error.conflicts as { key: string; type: string; id: string; field: string | null }[];
    const labels = conflicts.filter((c) => c.type === 'label');
    expect(labels).toEqual([expect.objectContaining({ twin: 'github', field: 'description', base: null, ours: 'Money matters (dev)', theirs: 'Money matters (main)' })]);
    expect(labels[0]!.id).toMatch(/:billing$/);
    expect(labels[0]!.key).toBe(`github/label/${labels[0]!.id}#description`);
    // Besides it: the hook's delivery of the label event, which both sides numbered the same.
    for (const c of conflicts.filter((x) => x.type !== 'label')) expect([c.type, c.field, c.id]).toEqual(['delivery', null, expect.stringMatching(new RegExp(`:0*${made.hook}:\\d+$`))]);

    const resolved = await devApi('POST', '/origin/pull', { resolve: Object.fromEntries(conflicts.map((c) => [c.key, 'ours'])) });
    expect(resolved.status, resolved.text).toBe(200);
    expect(resolved.json.merged).toBe(true);
    const merged = (await kitAt(dev, DEV.token).rest.issues.getLabel({ ...repo, name: 'billing' })).data;
    expect([merged.description, merged.color]).toEqual(['Money matters (dev)', '0052cc']);

    expect((await devApi('POST', '/changesets', { message: 'Describe billing', name: 'describe-billing' })).status).toBe(201);
    const pushed = await devApi('POST', '/origin/push');
    expect(pushed.status, pushed.text).toBe(200);
    const atMain = (await kitAt(main, MAIN.token).rest.issues.getLabel({ ...repo, name: 'billing' })).data;
    expect([atMain.description, atMain.color]).toEqual(['Money matters (dev)', '0052cc']);

    const receipts = await shipAtMain('describe-billing');
    expect(receipts.map((r) => [r.ok, r.request.method, r.request.url])).toEqual([[true, 'PATCH', 'https://api.github.com/repos/acme/shop/labels/billing']]);
    expect((await realKit().rest.issues.getLabel({ ...repo, name: 'billing' })).data).toMatchObject({ id: deployed.billing, description: 'Money matters (dev)' });
  });
});
