/**
 * The world page (pages/world/) driven in Debian's Chromium as a person on this machine drives
 * it, at the world's own origin (`http://shop--acme.localhost:<port>/`), on the multi-world host
 * and on the single-world server: the page opens its loopback write session by itself, shows
 * the twins, sets and advances the clock, keeps the timeline live and narrows it by twin and by
 * trace, makes a branch and opens it at the branch's own origin (the host only), refuses a
 * scenario with a mistake and marks the line, makes a key (shown once) and revokes it, and,
 * signed out, opens again for reading with a read key pasted into its form. What the page shows
 * is checked against what the host answers from Node. Screenshots go to $WORLD_PAGE_SHOTS
 * (default: a new temporary directory), named world-page-<host>-<step>.png.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium } from 'playwright-core';
import { builtPages } from '../helpers/pages.js';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startMultiWorldHost, startSingleWorldServer, twinScopesOf } from '../../host/index.js';
import type { PageFiles } from '../../host/core/pages.js';
import { openWorldRunner } from '../../runtime/runner/index.js';
import { MemoryStorage } from '../../runtime/store/index.js';
import { loadBuiltinTwins } from '../../sdk/twin/build.js';

const CHROMIUM = '/usr/bin/chromium';
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

let shots: string;
let pages: PageFiles;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: \`make test\` installs Debian's chromium (apt-get install chromium)`);
  pages = builtPages(['world']);
  shots = process.env['WORLD_PAGE_SHOTS'] ?? (await mkdtemp(join(tmpdir(), 'kit-world-page-shots-')));
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (process.env['WORLD_PAGE_SHOTS'] === undefined && shots !== undefined) console.log(`world page screenshots: ${shots}`);
});

/** One host serving acme/shop (stripe and hello), as each suite starts it. */
interface Served {
  /** The base URL (`http://127.0.0.1:<port>`). */
  base: string;
  /** The world's own origin, where its page is. */
  origin: string;
  token: string;
  close(): Promise<void>;
}

/** The world's endpoint `path` from Node with `credential` (the world's token unless said). */
async function worldApi<T>(served: Served, path: string, init: { method?: string; body?: unknown; credential?: string } = {}): Promise<{ status: number; json: T }> {
  const res = await fetch(`${served.base}/-/acme/shop${path}`, {
    method: init.method ?? 'GET',
    headers: { 'x-kit-token': init.credential ?? served.token, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  let json: unknown = text;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    // A document (a scenario) answered as it is.
  }
  return { status: res.status, json: json as T };
}

function worldPageSuite(hostName: 'host' | 'single', start: () => Promise<Served>): void {
  let served: Served;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];
  const shot = (p: Page, step: string) => p.screenshot({ path: join(shots, `world-page-${hostName}-${step}.png`), fullPage: true });
  const nav = (name: string) => page.getByRole('navigation', { name: 'World' }).getByRole('link', { name, exact: true });
  const card = (name: string) => page.getByRole('region', { name, exact: true });

  beforeAll(async () => {
    served = await start();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    await served?.close();
    expect(pageErrors).toEqual([]);
  });

  it('opens at the world origin with a write session of this machine, its cookie HttpOnly, and shows the twins', async () => {
    expect(served.origin).toMatch(/^http:\/\/shop--acme\.localhost:\d+$/);
    await page.goto(`${served.origin}/`);
    const twins = page.getByRole('table', { name: 'Twins' });
    await twins.waitFor();
    expect(await page.locator('header.top').textContent()).toContain('acme/shop');
    expect(await page.locator('header.top .top-session').textContent()).toBe('write · this machine');
    const cookies = await context.cookies(served.origin);
    const session = cookies.find((c) => c.name === 'kit_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', domain: new URL(served.origin).hostname });
    // The cookie is the world origin's alone: the base origin has none.
    expect((await context.cookies(served.base)).find((c) => c.name === 'kit_session')).toBeUndefined();

    for (const vendor of ['hello', 'stripe']) {
      const row = twins.locator(`tr[data-key="${vendor}"]`);
      // The address an app reaches the twin at: the host's own, not the origin browsers use.
      expect(await row.textContent()).toContain(`${served.base}/acme/shop/${vendor}/`);
      // A link to the mirror where the twin has one built, and says so where it has none.
      if (pages.has(vendor)) expect(await row.getByRole('link', { name: 'Open mirror' }).getAttribute('href')).toBe(`/acme/shop/${vendor}/mirror/`);
      else expect(await row.textContent()).toContain('no mirror');
    }
    expect(await card('Latest').getByText('Nothing has happened in this world yet.').isVisible()).toBe(true);
    // Branches only where the host makes them.
    expect(await nav('Branches').count()).toBe(hostName === 'host' ? 1 : 0);
    await shot(page, '1-opened');
  });

  it('sets and advances the clock, and says why an advance by nonsense is refused', async () => {
    const clock = card('Clock');
    expect(await clock.locator('.clock').textContent()).toContain('wall clock: not set');
    await clock.getByLabel('Set to').fill('2026-05-01T09:00:00Z');
    await clock.getByRole('button', { name: 'Set clock' }).click();
    await expect.poll(() => clock.locator('.clock').textContent()).toContain('2026-05-01 09:00:00 UTC');
    await clock.getByLabel('Advance by').fill('2h');
    await clock.getByRole('button', { name: 'Advance' }).click();
    await expect.poll(() => clock.locator('.clock').textContent()).toContain('2026-05-01 11:00:00 UTC');
    expect((await worldApi<unknown>(served, '/clock')).json).toEqual({ at: '2026-05-01T11:00:00.000Z', frozen: true });

    await clock.getByLabel('Advance by').fill('soon');
    await clock.getByRole('button', { name: 'Advance' }).click();
    await expect.poll(async () => (await clock.getByRole('alert').count()) > 0 && clock.getByRole('alert').textContent()).toMatch(/The clock did not change: .*\(400 invalid_duration\)/);
    expect((await worldApi<{ at: string }>(served, '/clock')).json.at).toBe('2026-05-01T11:00:00.000Z');
    await shot(page, '2-clock');
  });

  it('shows a customer made through the vendor API in the live timeline, and narrows it by twin and by trace', async () => {
    const made = async (email: string, traceparent?: string) => {
      const res = await fetch(`${served.base}/acme/shop/stripe/v1/customers`, {
        method: 'POST',
        headers: { authorization: `Bearer ${served.token}`, 'content-type': 'application/x-www-form-urlencoded', ...(traceparent === undefined ? {} : { traceparent }) },
        body: new URLSearchParams({ email }).toString(),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { id: string }).id;
    };
    const ada = await made('ada@example.com');
    // No reload: the overview asks for the latest entries again by itself.
    await expect.poll(() => card('Latest').getByRole('table', { name: 'Timeline' }).textContent(), { timeout: 10_000 }).toContain(ada);

    await nav('Timeline').click();
    expect(new URL(page.url()).hash).toBe('#timeline');
    const timeline = card('Timeline');
    const rows = timeline.getByRole('table', { name: 'Timeline' }).locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(1);
    const grace = await made('grace@example.com', `00-${TRACE}-00f067aa0ba902b7-01`);
    // Live: the new entry comes in at the top.
    await expect.poll(() => rows.first().textContent(), { timeout: 10_000 }).toContain(grace);
    expect(await rows.count()).toBe(2);

    await timeline.getByLabel('Twin').selectOption('hello');
    await expect.poll(() => timeline.getByText('No entries match.').isVisible()).toBe(true);
    await timeline.getByLabel('Twin').selectOption('');
    await expect.poll(() => rows.count()).toBe(2);
    await rows.first().getByRole('button', { name: `${TRACE.slice(0, 8)}…` }).click();
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain(grace);
    expect(await timeline.getByLabel('Trace').inputValue()).toBe(TRACE);
    const traced = (await worldApi<{ entries: { entry: { writes: { id: string }[] } }[] }>(served, `/timeline?trace=${TRACE}`)).json.entries;
    expect(traced).toHaveLength(1);
    await shot(page, '3-timeline-trace');
    await timeline.getByRole('button', { name: 'Any trace' }).click();
    await expect.poll(() => rows.count()).toBe(2);
  });

  if (hostName === 'host') {
    it('makes a branch with a label and a lifetime, opens it at its own origin, and removes it', async () => {
      await nav('Branches').click();
      const form = page.getByRole('form', { name: 'Make a branch' });
      await form.getByLabel('Label').fill('try');
      await form.getByLabel('Lives').selectOption({ label: '1 hour' });
      await form.getByRole('button', { name: 'Make branch' }).click();
      const reveal = page.getByRole('region', { name: 'New branch' });
      await reveal.waitFor();
      const name = (await reveal.locator('h3 .mono').textContent())!;
      expect(name).toMatch(/^acme\/shop-try-[0-9a-f]{4}$/);
      const branches = (await worldApi<{ name: string; expiresAt: string | null; at: string }[]>(served, '/branches')).json;
      expect(branches.map((b) => b.name)).toEqual([name]);
      expect(Date.parse(branches[0]!.expiresAt!) - Date.parse(branches[0]!.at)).toBeGreaterThan(3500_000);
      // The token shown once opens the branch, whose clock stands where this world's was.
      const branchToken = await reveal.getByLabel('Token (opens everything)').inputValue();
      const branchClock = await fetch(`${served.base}/-/${name}/clock`, { headers: { 'x-kit-token': branchToken } });
      expect(await branchClock.json()).toEqual({ at: '2026-05-01T11:00:00.000Z', frozen: true });
      const row = page.getByRole('table', { name: 'Branches' }).locator(`tr[data-key="${name}"]`);
      await row.waitFor();
      await shot(page, '4-branch-made');

      const world = name.slice('acme/'.length);
      const branchOrigin = `http://${world}--acme.localhost:${new URL(served.origin).port}`;
      expect(await row.getByRole('link', { name: `Open ${name}` }).getAttribute('href')).toBe(`${branchOrigin}/`);
      const [opened] = await Promise.all([context.waitForEvent('page'), row.getByRole('link', { name: `Open ${name}` }).click()]);
      opened.on('pageerror', (e) => pageErrors.push(e.message));
      await opened.getByRole('table', { name: 'Twins' }).waitFor();
      expect(new URL(opened.url()).origin).toBe(branchOrigin);
      expect(await opened.locator('header.top').textContent()).toContain(name);
      expect(await opened.locator('header.top .top-session').textContent()).toBe('write · this machine');
      await expect.poll(() => opened.getByRole('region', { name: 'Clock' }).locator('.clock').textContent()).toContain('2026-05-01 11:00:00 UTC');
      await expect.poll(() => opened.getByRole('region', { name: 'Latest' }).textContent()).toContain('customers');
      await shot(opened, '5-branch-opened');
      await opened.close();

      await row.getByRole('button', { name: 'Remove' }).click();
      await row.getByRole('button', { name: 'Yes, remove' }).click();
      await expect.poll(() => row.count()).toBe(0);
      expect((await worldApi<unknown[]>(served, '/branches')).json).toEqual([]);
    });
  }

  it('refuses a scenario with a mistake and marks the line, keeps the one in force, then puts the fixed one in force', async () => {
    await nav('Scenarios').click();
    const scenarios = card('Scenarios');
    await scenarios.getByRole('tab', { name: 'stripe' }).click();
    const editor = scenarios.getByLabel('Scenario of stripe');
    await editor.waitFor();
    await scenarios.getByText('no scenario in force').waitFor();
    const broken = ['handlers:', '  - name: balance-down', '    match: GET /v1/balance', '    respond:', '      status: 99', '      body: { error: { message: down } }', ''].join('\n');
    await editor.fill(broken);
    await scenarios.getByRole('button', { name: 'Save and put in force' }).click();
    const refusal = scenarios.locator('.refusal');
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/^Line 5: .*handlers\[0\]\.respond\.status: must be an integer 100-599.*\(400 invalid_scenario\)/);
    // The mark is at line 5, whose text is selected in the editor.
    expect(await scenarios.locator('.editor-gutter .marked').textContent()).toBe('5');
    expect(await editor.getAttribute('aria-invalid')).toBe('true');
    expect(await editor.evaluate((el: HTMLTextAreaElement) => el.value.slice(el.selectionStart, el.selectionEnd))).toBe('      status: 99');
    expect((await worldApi<unknown>(served, '/twins/stripe/scenario')).status).toBe(404);
    await shot(page, '6-scenario-refused');

    await editor.fill(broken.replace('status: 99', 'status: 503'));
    expect(await scenarios.locator('.editor-gutter .marked').count()).toBe(0);
    await scenarios.getByRole('button', { name: 'Save and put in force' }).click();
    await expect.poll(() => scenarios.getByRole('status').textContent()).toMatch(/In force since .*: 1 handler\./);
    expect((await worldApi<string>(served, '/twins/stripe/scenario')).json).toBe(broken.replace('status: 99', 'status: 503'));
    const balance = await fetch(`${served.base}/acme/shop/stripe/v1/balance`, { headers: { authorization: `Bearer ${served.token}` } });
    expect(balance.status).toBe(503);
    expect(await balance.json()).toEqual({ error: { message: 'down' } });

    await scenarios.getByRole('button', { name: 'Remove the scenario' }).click();
    await scenarios.getByRole('button', { name: 'Yes, remove it' }).click();
    await expect.poll(() => scenarios.getByText('no scenario in force').isVisible()).toBe(true);
    expect((await worldApi<unknown>(served, '/twins/stripe/scenario')).status).toBe(404);
  });

  it('makes a read key shown once, which reads and does not write, and revokes it', async () => {
    await nav('Keys').click();
    const form = page.getByRole('form', { name: 'Make a key' });
    await form.getByLabel('Name').fill('ci');
    await form.getByLabel('Scope').selectOption('read');
    await form.getByRole('button', { name: 'Make key' }).click();
    const reveal = page.getByRole('region', { name: 'New key' });
    await reveal.waitFor();
    const key = await reveal.getByLabel('Key').inputValue();
    expect(key).toMatch(/^tok_k_/);
    const keys = page.getByRole('table', { name: 'Keys' });
    await expect.poll(() => keys.locator('tbody tr').count()).toBe(1);
    const listed = (await worldApi<{ keys: { id: string; name: string; scope: string; createdBy: string }[] }>(served, '/keys')).json.keys;
    expect(listed).toMatchObject([{ name: 'ci', scope: 'read', createdBy: 'this machine' }]);
    expect(await keys.locator('tbody tr').first().textContent()).toContain(listed[0]!.id);
    await shot(page, '7-key-made');
    await reveal.getByRole('button', { name: /hide/ }).click();
    expect(await page.content()).not.toContain(key);

    expect((await worldApi<unknown>(served, '/clock', { credential: key })).status).toBe(200);
    expect((await worldApi<unknown>(served, '/clock', { method: 'PUT', body: { at: '2026-05-02T00:00:00Z' }, credential: key })).status).toBe(403);

    const row = keys.locator(`tr[data-key="${listed[0]!.id}"]`);
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Yes, revoke' }).click();
    await expect.poll(() => keys.locator('tbody tr').count()).toBe(0);
    expect(await page.getByText('No keys yet.').isVisible()).toBe(true);
    expect((await worldApi<unknown>(served, '/clock', { credential: key })).status).toBe(401);
  });

  it('signed out, opens again for reading with a read key pasted into its form', async () => {
    const reader = (await worldApi<{ key: string }>(served, '/keys', { method: 'POST', body: { name: 'reader', scope: 'read' } })).json.key;
    await page.locator('header.top').getByRole('button', { name: 'Sign out' }).click();
    const form = page.getByRole('form', { name: 'Sign in' });
    await form.waitFor();
    await shot(page, '8-signed-out');
    expect((await context.cookies(served.origin)).find((c) => c.name === 'kit_session')).toBeUndefined();
    await form.getByLabel('Token or key').fill(reader);
    // Asked for changing too: a read key is given reading only, and the page says so.
    await form.getByRole('button', { name: 'Open the world' }).click();
    // The page opens where it was (the keys), now for reading.
    await card('Keys').getByText('a read session cannot see them').waitFor();
    expect(await page.locator('header.top .top-session').textContent()).toMatch(/^read\b/);
    await shot(page, '9-read-session');
    await nav('Overview').click();
    await page.getByRole('table', { name: 'Twins' }).waitFor();
    await expect.poll(() => card('Clock').locator('.clock').textContent()).toContain('2026-05-01 11:00:00 UTC');
    expect(await card('Clock').getByRole('button', { name: 'Set clock' }).count()).toBe(0);
  });
}

describe('the world page on the multi-world host, in Chromium', () => {
  worldPageSuite('host', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kit-world-page-host-'));
    const host = await startMultiWorldHost({ dir, twins: [...(await loadBuiltinTwins()).values()], pages });
    const res = await fetch(`${host.url}/-/worlds`, {
      method: 'POST',
      headers: { 'x-kit-token': host.adminToken, 'content-type': 'application/json' },
      body: JSON.stringify({ org: 'acme', world: 'shop', vendors: ['hello', 'stripe'] }),
    });
    expect(res.status).toBe(201);
    const { token } = (await res.json()) as { token: string };
    const port = new URL(host.url).port;
    return {
      base: host.url,
      origin: `http://shop--acme.localhost:${port}`,
      token,
      close: async () => {
        await host.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  });
});

describe('the world page on the single-world server, in Chromium', () => {
  worldPageSuite('single', async () => {
    const twins = await loadBuiltinTwins();
    const bundles = ['hello', 'stripe'].map((v) => twins.get(v)!);
    const world = await openWorldRunner({ storage: new MemoryStorage(), world: 'shop', twins: bundles });
    const tokens = { token: 'tok_world-page-test-token-0123456789abcdef', readToken: 'tok_r_world-page-test-read-0123456789abcdef' };
    const server = await startSingleWorldServer({ world, org: 'acme', worldName: 'shop', tokens, twins: bundles.map(twinScopesOf), pages });
    expect(server.pageUrl).not.toBeNull();
    return { base: server.url, origin: server.pageUrl!, token: tokens.token, close: () => server.close() };
  });
});
