/**
 * A GitHub twin with a real repository behind it, end to end through Octokit. The real
 * repository is another world's GitHub twin, reached at `https://api.github.com` through that
 * world's own proxy and CA (the code path of a real root; only the credential and the proxy
 * differ). The copy refreshes from it, an app under `kit world attach` reads its issues and
 * labels with the real numbers, an issue opened at the real repository comes back through its
 * signed hook to the copy's ingest endpoint, and a history cut before the refresh shows the
 * empty twin.
 */
import { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAttach, cleanEnv, run, type Built } from '../attach/harness.js';
import { serveVendorWorld, worldApi as api, type Served } from './served.js';

const REAL = { token: 'tok_real-github-write-token-0123456789abc', readToken: 'tok_r_real-github-read-token-0123456789a' };
const COPY = { token: 'tok_copy-github-write-token-0123456789abc', readToken: 'tok_r_copy-github-read-token-0123456789a' };
const HOOK_SECRET = 'the-real-repository-hook-secret';
const repo = { owner: 'acme', repo: 'shop' };
const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

const worldApi = (s: Served, method: string, path: string, body?: unknown) => api(s, COPY.token, method, path, body);

let real: Served;
let copy: Served;
let built: Built;
let realKit: Octokit;
let beforeRefresh: string;

beforeAll(async () => {
  [real, built] = await Promise.all([serveVendorWorld('github', 'real', REAL), buildAttach()]);
  // The copy reaches the vendor's host as it would the real one, here through the real world's proxy.
  copy = await serveVendorWorld('github', 'copy', COPY, { world: real, token: REAL.token });
  realKit = new Octokit({ baseUrl: `${real.server.worldUrl}/github`, auth: REAL.token, log: quiet });
  await realKit.request('POST /admin/users', { login: 'octocat', email: 'octocat@example.test' });
  await realKit.request('POST /admin/organizations', { login: 'acme', admin: 'octocat' });
  await realKit.rest.repos.createInOrg({ org: 'acme', name: 'shop', description: 'the real shop', auto_init: true });
  for (const [name, color] of [['bug', 'd73a4a'], ['feature', '0e8a16']] as const) await realKit.rest.issues.createLabel({ ...repo, name, color });
  for (let n = 1; n <= 5; n++) await realKit.rest.issues.create({ ...repo, title: `Real issue ${n}`, labels: n % 2 === 0 ? ['bug'] : ['feature'] });
  // The real repository tells the copy of its changes, signed with the hook's secret.
  await realKit.rest.repos.createWebhook({ ...repo, config: { url: `${copy.server.worldApi}/twins/github/ingest`, content_type: 'json', secret: HOOK_SECRET }, events: ['issues', 'label'] });
}, 120_000);

afterAll(async () => {
  await copy?.server.close();
  await real?.server.close();
  await built?.close();
});

describe('a GitHub twin rooted at a real repository', () => {
  it('refreshes the repository, its issues and labels through api.github.com with the sealed token', async () => {
    expect((await worldApi(copy, 'PUT', '/twins/github/root', { url: 'https://api.github.com/repos/acme/shop' })).status).toBe(200);
    expect((await worldApi(copy, 'PUT', '/twins/github/credential', { bearer: REAL.token, signingSecret: HOOK_SECRET })).json).toMatchObject({ sealed: true });
    beforeRefresh = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 5));
    const refreshed = await worldApi(copy, 'POST', '/twins/github/refresh');
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(refreshed.json.refresh).toMatchObject({ ok: true, deleted: 0 });
    for (const path of ['/twins/github/status', '/log/github', '/timeline', '/checkpoint/github']) {
      const text = (await worldApi(copy, 'GET', path)).text;
      expect(text, path).not.toContain(REAL.token);
      expect(text, path).not.toContain(HOOK_SECRET);
    }
  });

  it('an app under kit world attach reads the real issues and labels with Octokit on its default address', async () => {
    const app = [
      "import { Octokit } from '@octokit/rest';",
      // The app's own token, as it reads it; in the copy it is the world's (a user the copy knows would do too).
      'const kit = new Octokit({ auth: process.env.GITHUB_TOKEN });',
      "const issues = await kit.rest.issues.listForRepo({ owner: 'acme', repo: 'shop', state: 'all', per_page: 100 });",
      "const labels = await kit.rest.issues.listLabelsForRepo({ owner: 'acme', repo: 'shop' });",
      "console.log(JSON.stringify({ issues: issues.data.map((i) => [i.number, i.title, i.labels.map((l) => l.name)]), labels: labels.data.map((l) => l.name), observedAt: issues.headers['x-kit-observed-at'] }));",
    ].join('\n');
    const r = await run(process.execPath, [built.kit, 'world', 'attach', copy.server.worldUrl, '--token', COPY.token, '--', 'node', '--input-type=module', '-e', app], cleanEnv({ GITHUB_TOKEN: COPY.token }));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const seen = JSON.parse(r.stdout) as { issues: [number, string, string[]][]; labels: string[]; observedAt: string };
    const realIssues = (await realKit.rest.issues.listForRepo({ ...repo, state: 'all', per_page: 100 })).data;
    expect(seen.issues).toEqual(realIssues.map((i) => [i.number, i.title, i.labels.map((l) => (typeof l === 'string' ? l : l.name))]));
    expect(seen.issues).toHaveLength(5);
    expect(seen.labels.sort()).toEqual(expect.arrayContaining(['bug', 'feature']));
    expect(Date.parse(seen.observedAt)).toBeGreaterThan(Date.parse(beforeRefresh));
  });

  it('an issue opened at the real repository comes back through its signed hook', async () => {
    const opened = (await realKit.rest.issues.create({ ...repo, title: 'Opened after the refresh', labels: ['bug'] })).data;
    const copyKit = new Octokit({ baseUrl: `${copy.server.worldUrl}/github`, auth: COPY.token, log: quiet });
    let title: string | undefined;
    for (let i = 0; i < 100 && title === undefined; i++) {
      await new Promise((r) => setTimeout(r, 100));
      title = await copyKit.rest.issues.get({ ...repo, issue_number: opened.number }).then((r) => r.data.title, () => undefined);
    }
    expect(title).toBe('Opened after the refresh');
    const log = (await worldApi(copy, 'GET', '/log/github')).json.entries as { cause: { kind: string } }[];
    expect(log.at(-1)!.cause.kind).toBe('ingest');
    // An issue the world opens in the copy gets the number after the real ones.
    const own = (await copyKit.rest.issues.create({ ...repo, title: 'Opened in the copy' })).data;
    expect(own.number).toBe(opened.number + 1);
  });

  it('a history cut before the refresh shows the empty twin', async () => {
    const cut = (await worldApi(copy, 'GET', `/history?at=${encodeURIComponent(beforeRefresh)}`)).json;
    expect(cut.views.github.position).toBe(0);
  });
});
