/**
 * Browser access as a person meets it, in Debian's Chromium: a world's page opened through a
 * pass a platform signed (the pass spent once, out of the address), a page of another origin
 * trying to write with the world's session (refused: nothing changes), and the world page and a
 * mirror on the edge variant (workerd through miniflare), opened by the loopback session.
 * Screenshots go to $ACCESS_SHOTS (default: a new temporary directory).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { builtPages } from '../helpers/pages.js';
import { createPassVerifier } from '../../host/core/access/passes.js';
import { startEdgeDev, type EdgeDev } from '../../host/edge/dev.js';
import { startMultiWorldHost, type MultiWorldHost } from '../../host/index.js';
import { startPassIssuer, type PassIssuer } from '../../sdk/passes/index.js';
import { loadBuiltinTwins } from '../../sdk/twin/build.js';

const CHROMIUM = '/usr/bin/chromium';
let shots: string;
let browser: Browser;
const pageErrors: string[] = [];
const shot = (p: Page, step: string) => p.screenshot({ path: join(shots, `access-${step}.png`), fullPage: true });

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: \`make test\` installs Debian's chromium (apt-get install chromium)`);
  shots = process.env['ACCESS_SHOTS'] ?? (await mkdtemp(join(tmpdir(), 'kit-access-shots-')));
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (process.env['ACCESS_SHOTS'] === undefined && shots !== undefined) console.log(`access screenshots: ${shots}`);
  expect(pageErrors).toEqual([]);
});

interface MadeWorld {
  token: string;
  origin: string;
}

async function makeWorld(base: string, adminToken: string, world: string): Promise<MadeWorld> {
  const a = await fetch(`${base}/-/worlds`, {
    method: 'POST',
    headers: { 'x-kit-token': adminToken, 'content-type': 'application/json' },
    body: JSON.stringify({ org: 'acme', world, vendors: ['hello', 'stripe'] }),
  });
  expect(a.status).toBe(201);
  const row = (await a.json()) as { token: string };
  return { token: row.token, origin: `http://${world}--acme.localhost:${new URL(base).port}` };
}

async function greetings(base: string, world: string, token: string): Promise<number> {
  const a = await fetch(`${base}/acme/${world}/hello/v1/greetings`, { headers: { authorization: `Bearer ${token}` } });
  return ((await a.json()) as { data: unknown[] }).data.length;
}

describe('passes and other origins on the multi-world host, in Chromium', () => {
  let dir: string;
  let host: MultiWorldHost;
  let issuer: PassIssuer;
  let shop: MadeWorld;
  let other: MadeWorld;
  let evil: Server;
  let evilUrl: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kit-access-'));
    issuer = await startPassIssuer();
    host = await startMultiWorldHost({
      dir,
      twins: [...(await loadBuiltinTwins()).values()],
      pages: builtPages(['world', 'hello', 'stripe']),
      passes: createPassVerifier({ trusted: [issuer.url] }),
      consoleDir: null,
    });
    shop = await makeWorld(host.url, host.adminToken, 'shop');
    other = await makeWorld(host.url, host.adminToken, 'other');
    // A page elsewhere that posts to the world as soon as it loads: a form (a top-level POST
    // navigation, which sends cookies where they may go) and a no-cors fetch with credentials.
    evil = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(`<!doctype html><title>win a prize</title>
        <form id="f" method="POST" action="${shop.origin}/acme/shop/hello/v1/greetings" enctype="text/plain"><input name="name" value="Evil form"></form>
        <script>
          fetch(${JSON.stringify(`${shop.origin}/acme/shop/hello/v1/greetings`)}, { method: 'POST', mode: 'no-cors', credentials: 'include', body: 'name=Evil fetch' })
            .finally(() => document.getElementById('f').submit());
        </script>`);
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    evilUrl = `http://evil.localhost:${(evil.address() as { port: number }).port}/`;
  }, 60_000);

  afterAll(async () => {
    await new Promise((resolve) => evil?.close(resolve));
    await host?.close();
    await issuer?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("opens the world page through a pass a platform signed: the person's session, the pass gone from the address, spent once", async () => {
    const pass = await issuer.sign({ world: 'acme/shop', origin: shop.origin, scope: 'write', subject: 'usr_ada', name: 'Ada Lovelace' });
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(`${shop.origin}/#pass=${pass}`);
    await page.getByRole('table', { name: 'Twins' }).waitFor();
    expect(await page.locator('header.top .top-session').textContent()).toBe('write · Ada Lovelace');
    expect(page.url()).toBe(`${shop.origin}/`);
    await shot(page, 'pass-opened');
    // A reload keeps the session (the cookie), with no pass.
    await page.reload();
    await page.getByRole('table', { name: 'Twins' }).waitFor();
    expect(await page.locator('header.top .top-session').textContent()).toBe('write · Ada Lovelace');
    await context.close();

    // The same link opened again (another browser, a forwarded mail): the pass is spent.
    const again = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const second = await again.newPage();
    second.on('pageerror', (e) => pageErrors.push(e.message));
    await second.goto(`${shop.origin}/#pass=${pass}`);
    await second.getByRole('alert').waitFor();
    expect(await second.getByRole('alert').textContent()).toContain('pass_spent');
    expect(await second.getByRole('table', { name: 'Twins' }).count()).toBe(0);
    await shot(second, 'pass-spent');
    await again.close();
  });

  it("refuses a write a page of another origin makes with the world's session: nothing changes", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    // The person has the world's page open: a write session of this machine.
    await page.goto(`${shop.origin}/`);
    await page.getByRole('table', { name: 'Twins' }).waitFor();
    const before = await greetings(host.url, 'shop', shop.token);

    // Another world's page (the same host, another origin) tries with the session, every way a script may.
    await page.goto(`${other.origin}/`);
    await page.getByRole('table', { name: 'Twins' }).waitFor();
    const tried = await page.evaluate(async (target) => {
      const out: string[] = [];
      for (const init of [
        { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Cross JSON' }) },
        { method: 'POST', credentials: 'include', mode: 'no-cors', body: 'name=Cross no-cors' },
      ] as RequestInit[]) {
        try {
          const r = await fetch(target, init);
          out.push(`${r.type} ${r.status}`);
        } catch (e) {
          out.push(`failed: ${String(e)}`);
        }
      }
      return out;
    }, `${shop.origin}/acme/shop/hello/v1/greetings`);
    // Neither leaves the page: its policy lets it reach its own origin only (and a credentialed
    // CORS request would fail anyway: the host allows any origin, never with credentials).
    expect(tried).toEqual([expect.stringMatching(/^failed/), expect.stringMatching(/^failed/)]);

    // A page on another site entirely: a form and a fetch fired on load.
    await page.goto(evilUrl);
    await page.waitForURL((u) => u.href.startsWith(shop.origin), { timeout: 10_000 });
    await shot(page, 'evil-form-landed');
    // The form's POST came without the session (SameSite=Strict): the host refused it.
    expect(await page.textContent('body')).toContain('"code":"unauthenticated"');
    expect(await greetings(host.url, 'shop', shop.token)).toBe(before);
    await context.close();
  });
});

describe('the world page and a mirror on the edge variant, in Chromium', () => {
  let dir: string;
  let edge: EdgeDev;
  let shop: MadeWorld;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kit-access-edge-'));
    const adminToken = `tok_a_${'b'.repeat(32)}`;
    edge = await startEdgeDev({ port: 0, adminToken, persist: dir });
    shop = await makeWorld(edge.url, adminToken, 'shop');
  }, 60_000);

  afterAll(async () => {
    await edge?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("opens at the world's origin with this machine's session, shows the twins, and opens the hello mirror on a greeting made over the API", async () => {
    const made = await fetch(`${edge.url}/acme/shop/hello/v1/greetings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${shop.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Edge' }),
    });
    const greeting = (await made.json()) as { id: string };
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(`${shop.origin}/`);
    const twins = page.getByRole('table', { name: 'Twins' });
    await twins.waitFor();
    expect(await page.locator('header.top .top-session').textContent()).toBe('write · this machine');
    expect(await twins.textContent()).toContain('stripe');
    await shot(page, 'edge-world-page');
    // The greeting's API address, opened in the browser: the mirror shows it.
    await page.goto(`${shop.origin}/acme/shop/hello/v1/greetings/${greeting.id}`);
    await page.getByText('Edge', { exact: true }).first().waitFor();
    await shot(page, 'edge-hello-mirror');
    await context.close();
  });
});
