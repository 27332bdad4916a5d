/**
 * The GitHub twin's mirror (twins/github/mirror/) driven in Debian's Chromium as a person would:
 * a repository, a file, an issue and a pull request made with the unmodified Octokit against a
 * world on a multi-world host, then found in the mirror opened through the loopback session; an
 * issue's API URL opened directly in a fresh browser shows that issue. The mirror writes nothing:
 * the twin's log is where the Octokit calls left it. Each step's screenshot is saved to
 * $MIRROR_SHOTS (default the system's temp folder) as mirror-github-<step>.png.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Octokit } from '@octokit/rest';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMultiWorldHost } from '../../host/index.js';
import { loadBuiltinTwins } from '../../sdk/twin/build.js';
import { builtPages } from '../helpers/pages.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = process.env['MIRROR_SHOTS'] ?? tmpdir();
const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

describe('the GitHub mirror in Chromium', () => {
  let dir: string;
  let host: Awaited<ReturnType<typeof startMultiWorldHost>>;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let token: string;
  let readToken: string;
  let gh: Octokit;
  /** `http://shop--acme.localhost:<port>`: the world's own origin. */
  let origin: string;
  const pageErrors: string[] = [];
  const made = { issue: 0, pull: 0, commit: '' };

  const shot = (p: Page, step: string) => p.screenshot({ path: join(SHOTS, `mirror-github-${step}.png`), fullPage: true });
  /** Where the twin's log stands: the mirror must leave it there. */
  const position = async (): Promise<number> => {
    const res = await fetch(`${host.url}/-/acme/shop/map`, { headers: { 'x-kit-token': token } });
    const map = (await res.json()) as { twins: { twin: string; position: number }[] };
    return map.twins.find((t) => t.twin === 'github')!.position;
  };

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: \`make test\` installs Debian's chromium (apt-get install chromium)`);
    // The mirror `make build` built (node pages/build.mjs): tests do not rebuild what another test's host may be reading.
    const pages = builtPages(['github']);
    dir = await mkdtemp(join(tmpdir(), 'kit-mirror-github-'));
    host = await startMultiWorldHost({ dir, twins: [...(await loadBuiltinTwins()).values()], pages });
    const res = await fetch(`${host.url}/-/worlds`, {
      method: 'POST',
      headers: { 'x-kit-token': host.adminToken, 'content-type': 'application/json' },
      body: JSON.stringify({ org: 'acme', world: 'shop', vendors: ['github'] }),
    });
    expect(res.status).toBe(201);
    ({ token, readToken } = (await res.json()) as { token: string; readToken: string });
    origin = `http://shop--acme.localhost:${new URL(host.url).port}`;
    gh = new Octokit({ auth: token, baseUrl: `${host.url}/acme/shop/github`, log: quiet });

    // What an app would have made through the official client.
    const owner = 'admin';
    const repo = 'storefront';
    await gh.rest.repos.createForAuthenticatedUser({ name: repo, description: 'The shop window', auto_init: true });
    const file = await gh.rest.repos.createOrUpdateFileContents({ owner, repo, path: 'src/checkout.ts', message: 'Add the checkout', content: b64('export function checkout(total: number): string {\n  return `paid ${total}`;\n}\n') });
    made.commit = file.data.commit.sha!;
    await gh.rest.issues.createLabel({ owner, repo, name: 'bug', color: 'd73a4a', description: 'Something is broken' });
    const issue = await gh.rest.issues.create({ owner, repo, title: 'Checkout rounds totals down', body: 'A total of **9.99** shows as 9.', labels: ['bug'] });
    made.issue = issue.data.number;
    await gh.rest.issues.createComment({ owner, repo, issue_number: made.issue, body: 'Seen on every order over 9.' });
    await gh.rest.git.createRef({ owner, repo, ref: 'refs/heads/fix-rounding', sha: made.commit });
    const current = await gh.rest.repos.getContent({ owner, repo, path: 'src/checkout.ts', ref: 'fix-rounding' });
    await gh.rest.repos.createOrUpdateFileContents({
      owner, repo, path: 'src/checkout.ts', branch: 'fix-rounding', message: 'Keep the cents', sha: (current.data as { sha: string }).sha,
      content: b64('export function checkout(total: number): string {\n  return `paid ${total.toFixed(2)}`;\n}\n'),
    });
    const pull = await gh.rest.pulls.create({ owner, repo, title: 'Keep the cents at checkout', head: 'fix-rounding', base: 'main', body: `Fixes #${made.issue}.` });
    made.pull = pull.data.number;

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

  it('opens at the mirror\'s address, moves to the world\'s origin and its home view, and lists the repository', async () => {
    const before = await position();
    // At the host's base address: the page moves to the world's own origin, opens the loopback session there, and goes home.
    await page.goto(`${host.url}/acme/shop/github/mirror/`);
    await page.getByRole('link', { name: 'admin/storefront' }).waitFor();
    expect(new URL(page.url()).origin).toBe(origin);
    expect(new URL(page.url()).pathname).toBe('/acme/shop/github/user/repos');
    expect(await page.locator('.repo-item').first().textContent()).toContain('The shop window');
    const cookies = await context.cookies(origin);
    expect(cookies.map((c) => [c.name, c.httpOnly])).toEqual([['kit_session', true]]);
    await shot(page, '1-repositories');
    expect(await position()).toBe(before);
  });

  it('shows the repository\'s files, a folder and a file with its content', async () => {
    await page.getByRole('link', { name: 'admin/storefront' }).click();
    await page.getByRole('table', { name: 'Files' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/acme/shop/github/repos/admin/storefront');
    const files = page.getByRole('table', { name: 'Files' });
    expect(await files.locator('.file-row').allTextContents()).toEqual(['src', expect.stringMatching(/^README\.md\d+ Bytes$/)]);
    // The README is drawn under the files, and the latest commit above them.
    await page.locator('.readme h1').waitFor();
    expect(await page.locator('.readme h1').textContent()).toBe('storefront');
    await expect.poll(() => page.locator('.latest').textContent()).toContain('Add the checkout');
    expect(await page.locator('.latest').textContent()).toContain('2 Commits');
    await shot(page, '2-repository');

    await files.getByRole('link', { name: 'src' }).click();
    await page.getByRole('link', { name: 'checkout.ts' }).click();
    await page.getByRole('table', { name: 'Lines of checkout.ts' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/acme/shop/github/repos/admin/storefront/contents/src/checkout.ts');
    expect(await page.getByRole('table', { name: 'Lines of checkout.ts' }).locator('.line').allTextContents()).toEqual([
      'export function checkout(total: number): string {',
      '  return `paid ${total}`;',
      '}',
    ]);
    await shot(page, '3-file');
    // Back goes back to the folder, in the page.
    await page.goBack();
    await page.getByRole('link', { name: 'checkout.ts' }).waitFor();
  });

  it('shows the page again when an address the mirror has read from is opened again', async () => {
    // The mirror read GET …/repos/admin/storefront (the repository's header) in this browser; the
    // same address opened as a page must be the page, not that JSON from the browser's cache.
    await page.goto(`${origin}/acme/shop/github/repos/admin/storefront`);
    await page.getByRole('table', { name: 'Files' }).waitFor();
    expect(await page.locator('.repo-title').textContent()).toContain('storefront');
  });

  it('shows a commit with its diff, and the branches', async () => {
    await page.goto(`${origin}/acme/shop/github/repos/admin/storefront/commits`);
    await page.getByRole('link', { name: 'Add the checkout' }).click();
    await page.locator('.commit-title').waitFor();
    expect(new URL(page.url()).pathname).toBe(`/acme/shop/github/repos/admin/storefront/commits/${made.commit}`);
    expect(await page.locator('.file-diff .file-name').allTextContents()).toEqual(['src/checkout.ts']);
    expect(await page.locator('.diff tr.add .line').allTextContents()).toEqual(['+export function checkout(total: number): string {', '+  return `paid ${total}`;', '+}']);
    await shot(page, '4-commit');

    await page.goto(`${origin}/acme/shop/github/repos/admin/storefront/branches`);
    await page.locator('.branch-row').first().waitFor();
    expect(await page.locator('.branch-name').allTextContents()).toEqual(['fix-rounding', 'main']);
  });

  it('lists the issue with its label and shows it with its comment', async () => {
    await page.getByRole('navigation', { name: 'Repository' }).getByRole('link', { name: /Issues/ }).click();
    const row = page.locator('.issue-row', { hasText: 'Checkout rounds totals down' });
    await row.waitFor();
    expect(await row.locator('.label').allTextContents()).toEqual(['bug']);
    // The API's list holds the pull request too, with its own icon.
    expect(await page.locator('.issue-row .issue-title').allTextContents()).toEqual(['Keep the cents at checkout', 'Checkout rounds totals down']);
    await shot(page, '5-issues');

    await row.getByRole('link', { name: 'Checkout rounds totals down' }).click();
    await page.locator('.comment-body', { hasText: 'Seen on every order over 9.' }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/acme/shop/github/repos/admin/storefront/issues/${made.issue}`);
    expect(await page.locator('.discussion-head h1').textContent()).toBe(`Checkout rounds totals down #${made.issue}`);
    expect(await page.locator('.comment-body strong').first().textContent()).toBe('9.99');
    expect(await page.locator('.state').textContent()).toContain('Open');
  });

  it('shows the pull request\'s conversation and its changed files', async () => {
    await page.getByRole('navigation', { name: 'Repository' }).getByRole('link', { name: /Pull requests/ }).click();
    await page.getByRole('link', { name: 'Keep the cents at checkout' }).click();
    await page.locator('.merge-box').waitFor();
    expect(await page.locator('.discussion-meta').textContent()).toMatch(/admin wants to merge 1 commit into admin:main from admin:fix-rounding/);
    expect(await page.locator('.merge-box').textContent()).toContain('This branch has no conflicts with the base branch');
    await shot(page, '6-pull');

    await page.getByRole('navigation', { name: 'Pull request' }).getByRole('link', { name: /Files changed/ }).click();
    await page.locator('.diff').waitFor();
    expect(new URL(page.url()).pathname).toBe(`/acme/shop/github/repos/admin/storefront/pulls/${made.pull}/files`);
    expect(await page.locator('.diff tr.del .line').allTextContents()).toEqual(['-  return `paid ${total}`;']);
    expect(await page.locator('.diff tr.add .line').allTextContents()).toEqual(['+  return `paid ${total.toFixed(2)}`;']);
    await shot(page, '7-pull-files');
  });

  it('browses with a read session', async () => {
    const reader = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const tab = await reader.newPage();
      tab.on('pageerror', (e) => pageErrors.push(e.message));
      // A person who pasted the world's read token: a read session at the world's origin (what the sign-in form sends).
      await tab.goto(`${origin}/-/acme/shop/session`);
      const opened = await tab.evaluate(
        async ([read, at]) => {
          const r = await fetch('/-/acme/shop/session', { method: 'POST', headers: { 'x-kit-token': read, 'content-type': 'application/json' }, body: JSON.stringify({ world: 'acme/shop', scope: 'read', origin: at }) });
          return { status: r.status, body: (await r.json()) as { scope: string } };
        },
        [readToken, origin] as const,
      );
      expect(opened).toMatchObject({ status: 200, body: { scope: 'read' } });
      await tab.goto(`${origin}/acme/shop/github/repos/admin/storefront/pulls/${made.pull}/files`);
      await tab.locator('.diff').waitFor();
      expect(await tab.locator('.gh-badge').textContent()).toBe('mirror · read session');
      expect(await tab.locator('.diff tr.add .line').allTextContents()).toEqual(['+  return `paid ${total.toFixed(2)}`;']);
    } finally {
      await reader.close();
    }
  });

  it('shows an issue when its API URL is opened in a fresh browser, and the mirror has written nothing', async () => {
    const before = await position();
    const fresh = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const tab = await fresh.newPage();
      tab.on('pageerror', (e) => pageErrors.push(e.message));
      // No cookie: the twin refuses the navigation (401), so the host answers with the mirror's shell at that URL.
      const url = `${origin}/acme/shop/github/repos/admin/storefront/issues/${made.issue}`;
      const answer = await tab.goto(url);
      expect(answer?.headers()['content-type']).toMatch(/^text\/html/);
      await tab.locator('.comment-body', { hasText: 'Seen on every order over 9.' }).waitFor();
      expect(tab.url()).toBe(url);
      expect(await tab.locator('.discussion-head h1').textContent()).toBe(`Checkout rounds totals down #${made.issue}`);
      await shot(tab, '8-issue-by-url');

      // The pull request's number as an issue moves to the pull request's page, as GitHub's does.
      await tab.goto(`${origin}/acme/shop/github/repos/admin/storefront/issues/${made.pull}`);
      await tab.locator('.merge-box').waitFor();
      expect(new URL(tab.url()).pathname).toBe(`/acme/shop/github/repos/admin/storefront/pulls/${made.pull}`);
    } finally {
      await fresh.close();
    }
    expect(await position()).toBe(before);
    expect(pageErrors).toEqual([]);
  });
});
