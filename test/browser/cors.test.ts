/**
 * A page of another origin calls twins from a real browser (Debian's Chromium, driven by
 * playwright-core), as a front end calls api.stripe.com or api.github.com: at the world's
 * address, and at the vendor's own address through the world's proxy. Without the host's
 * CORS answers (host/core/cors.ts) every call here fails in the browser with "Failed to fetch".
 */
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { serveWorld, TOKENS } from '../attach/harness.js';
import type { ServedWorld } from '../attach/harness.js';

const CHROMIUM = '/usr/bin/chromium';

/** What a page's fetch saw, or the error the browser gave it. */
interface Seen {
  status?: number;
  json?: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience
  requestId?: string | null;
  error?: string;
}

/** Runs `fetch(url, init)` inside the page (so from its origin) and reads the answer as the page can. */
function pageFetch(page: Page, url: string, init: { method?: string; headers?: Record<string, string>; body?: string; credentials?: 'include' | 'omit' }): Promise<Seen> {
  return page.evaluate(async ({ url, init }) => {
    try {
      const res = await fetch(url, init);
      return { status: res.status, json: await res.json(), requestId: res.headers.get('request-id') };
    } catch (e) {
      return { error: String(e) };
    }
  }, { url, init });
}

describe('a page of another origin calls twins in Chromium', () => {
  let served: ServedWorld;
  let pageServer: Server;
  let pageOrigin: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: \`make test\` installs Debian's chromium (apt-get install chromium)`);
    served = await serveWorld(['stripe', 'github']);
    // The app's page: its own origin (another port), nothing of the world's.
    pageServer = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end('<!doctype html><title>app</title><p>app');
    });
    await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
    const address = pageServer.address();
    pageOrigin = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage();
    await page.goto(`${pageOrigin}/`);
  }, 60_000);

  /** The email of a customer the twin holds, read from Node (no browser, no Origin). */
  const emailHeld = async (id: string, apiKey?: string): Promise<string> => {
    const headers: Record<string, string> = apiKey === undefined ? { authorization: `Bearer ${TOKENS.token}` } : { 'x-kit-token': TOKENS.token, authorization: `Bearer ${apiKey}` };
    const res = await fetch(`${served.server.worldUrl}/stripe/v1/customers/${id}`, { headers });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    return ((await res.json()) as { email: string }).email;
  };

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (pageServer === undefined ? resolve() : pageServer.close(() => resolve())));
    await served?.close();
  });

  it('creates a Stripe customer with the token as the API key, reads the answer and its request id', async () => {
    const twin = `${served.server.worldUrl}/stripe`;
    expect(new URL(twin).origin).not.toBe(pageOrigin);
    const created = await pageFetch(page, `${twin}/v1/customers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKENS.token}`, 'content-type': 'application/x-www-form-urlencoded', 'stripe-version': '2025-10-29.clover' },
      body: 'email=page%40example.com&name=From%20a%20page',
    });
    expect(created.error).toBeUndefined();
    expect(created.status).toBe(200);
    expect(created.json).toMatchObject({ object: 'customer', email: 'page@example.com', name: 'From a page' });
    expect(created.requestId).toMatch(/^req_/);
    expect(await emailHeld(created.json.id)).toBe('page@example.com');
  });

  it('reads GitHub the same way, and reads a refusal as JSON instead of a network error', async () => {
    const user = await pageFetch(page, `${served.server.worldUrl}/github/user`, { headers: { authorization: `token ${TOKENS.token}`, accept: 'application/vnd.github+json' } });
    expect([user.error, user.status, typeof user.json?.login]).toEqual([undefined, 200, 'string']);
    const refused = await pageFetch(page, `${served.server.worldUrl}/stripe/v1/customers`, { headers: { authorization: 'Bearer sk_test_not_the_world_token' } });
    expect([refused.error, refused.status, refused.json?.error?.code]).toEqual([undefined, 401, 'unauthenticated']);
  });

  it('refuses a call that would carry cookies: no page elsewhere acts with a session of the world', async () => {
    const withCookies = await pageFetch(page, `${served.server.worldUrl}/stripe/v1/customers`, {
      headers: { authorization: `Bearer ${TOKENS.token}` },
      credentials: 'include',
    });
    expect(withCookies.status).toBeUndefined();
    expect(withCookies.error).toMatch(/Failed to fetch/);
  });

  it("reaches the twin at the vendor's own address through the world's proxy", async () => {
    const proxy = served.server.proxy;
    if (proxy === null) throw new Error('the world was served without its proxy');
    // The browser trusts no world CA here; what is under test is the page's calls, not the certificate.
    const context = await browser.newContext({
      // The page's own origin is loopback, which Playwright would send through the proxy too.
      proxy: { server: proxy.url, username: 'kit', password: TOKENS.token, bypass: '127.0.0.1' },
      ignoreHTTPSErrors: true,
    });
    try {
      const proxied = await context.newPage();
      await proxied.goto(`${pageOrigin}/`);
      // A plain request first: Playwright answers the proxy's Basic challenge for it, but not
      // for a preflight (Chromium asks no one then). Its answer is the vendor's own 401: no key.
      const keyless = await pageFetch(proxied, 'https://api.stripe.com/v1/customers', {});
      expect([keyless.error, keyless.status, keyless.json?.error?.type]).toEqual([undefined, 401, 'invalid_request_error']);
      const created = await pageFetch(proxied, 'https://api.stripe.com/v1/customers', {
        method: 'POST',
        // Through the proxy the world's token is the proxy's credential; the app keeps its own key.
        headers: { authorization: 'Bearer sk_test_page_proxy', 'content-type': 'application/x-www-form-urlencoded' },
        body: 'email=proxied%40example.com',
      });
      expect([created.error, created.status, created.json?.email]).toEqual([undefined, 200, 'proxied@example.com']);
      expect(await emailHeld(created.json.id, 'sk_test_page_proxy')).toBe('proxied@example.com');
    } finally {
      await context.close();
    }
  });
});
