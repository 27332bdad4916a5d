/**
 * The host's console page (`/-/console/`, console/) driven in Debian's Chromium as an operator
 * drives it: the admin token first (a wrong one refused), then a world made, looked into (clock,
 * map, timeline), its clock set, a Stripe customer made through its vendor API and seen in the
 * timeline, its tokens rotated (shown once), its removal refused while it has a branch, and the
 * world removed. Each step's screenshot is saved to $CONSOLE_SHOTS (default /tmp) as
 * console-<step>.png. What the page shows is checked against what the host answers from Node.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { startMultiWorldHost } from '../../host/index.js';
import { loadBuiltinTwins } from '../../sdk/twin/build.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = process.env['CONSOLE_SHOTS'] ?? tmpdir();
const TOKEN_KEY = 'kit-console-admin-token';

interface Row {
  name: string;
  base: string | null;
  token: string;
  readToken: string;
  twins: { vendor: string }[];
}

describe('the host console in Chromium', () => {
  let dir: string;
  let host: Awaited<ReturnType<typeof startMultiWorldHost>>;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  /** The host's admin API from Node, as the page's actions should have left it. */
  const admin = async <T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<{ status: number; json: T }> => {
    const res = await fetch(`${host.url}${path}`, {
      method: init.method ?? 'GET',
      headers: { 'x-kit-token': host.adminToken, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    const text = await res.text();
    return { status: res.status, json: (text === '' ? null : JSON.parse(text)) as T };
  };
  const rows = async (): Promise<Row[]> => (await admin<{ worlds: Row[] }>('/-/worlds')).json.worlds;
  const row = async (name: string): Promise<Row | undefined> => (await rows()).find((r) => r.name === name);
  /** One world's own endpoint with its token, from Node. */
  const worldApi = async <T>(name: string, token: string, path: string, init: { method?: string; body?: unknown } = {}): Promise<{ status: number; json: T }> => {
    const res = await fetch(`${host.url}/-/${name}/${path}`, {
      method: init.method ?? 'GET',
      headers: { 'x-kit-token': token, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    return { status: res.status, json: (await res.json()) as T };
  };
  const shot = (step: string) => page.screenshot({ path: join(SHOTS, `console-${step}.png`), fullPage: true });
  const panel = () => page.getByRole('region', { name: 'World acme/shop' });
  const worldRow = (name: string) => page.locator(`tr[data-world="${name}"]`);

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: \`make test\` installs Debian's chromium (apt-get install chromium)`);
    // The page the host serves is dist/console/, built from console/src here so the test drives the source as it is.
    const built = spawnSync(process.execPath, ['console/build.mjs'], { encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`console/build.mjs failed:\n${built.stdout}${built.stderr}`);
    dir = await mkdtemp(join(tmpdir(), 'kit-console-'));
    // consoleDir: the host's default is dist/console/ beside its compiled tree; run from source here, it is named.
    host = await startMultiWorldHost({ dir, twins: [...(await loadBuiltinTwins()).values()], consoleDir: join(process.cwd(), 'dist', 'console') });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (e) => pageErrors.push(e.message));
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await host?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('asks for the admin token, says when the host refuses it, and keeps a good one for the tab', async () => {
    await page.goto(`${host.url}/-/console/`);
    await expect.poll(() => page.getByRole('heading', { name: 'Admin token' }).isVisible()).toBe(true);
    await expect.poll(() => page.locator('header.top').textContent()).toContain(host.url);
    await shot('1-token');

    await page.getByLabel('Admin token').fill('tok_not-the-admin-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/refused this admin token \(401/);
    expect(await page.evaluate((key) => sessionStorage.getItem(key), TOKEN_KEY)).toBeNull();
    await shot('2-refused');

    await page.getByLabel('Admin token').fill(host.adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Worlds' }).waitFor();
    expect(await page.evaluate((key) => sessionStorage.getItem(key), TOKEN_KEY)).toBe(host.adminToken);
    // A reload in the same tab does not ask again.
    await page.reload();
    await page.getByRole('heading', { name: 'Worlds' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Admin token' }).count()).toBe(0);
    expect(await page.getByText('No worlds yet').isVisible()).toBe(true);
  });

  it('creates a world with stripe, shows its tokens once, and lists it', async () => {
    const vendors = (await admin<{ vendors: string[] }>('/-/vendors')).json.vendors;
    const form = page.getByRole('form', { name: 'Create a world' });
    for (const vendor of vendors) await form.getByLabel(vendor, { exact: true }).waitFor();
    // The host's refusal of a bad name is shown in the form, with its code.
    await form.getByLabel('Org').fill('Acme Inc');
    await form.getByLabel('World', { exact: true }).fill('shop');
    await form.getByLabel('stripe', { exact: true }).check();
    await form.getByRole('button', { name: 'Create world' }).click();
    await expect.poll(async () => (await form.getByRole('alert').count()) > 0 && form.getByRole('alert').textContent()).toMatch(/The world was not created: .*\(400 invalid_name\)/);
    expect(await rows()).toEqual([]);
    await shot('3-invalid-name');

    await form.getByLabel('Org').fill('acme');
    await form.getByRole('button', { name: 'Create world' }).click();

    const reveal = page.getByRole('region', { name: 'New tokens' });
    await reveal.waitFor();
    const created = await row('acme/shop');
    expect(created?.twins.map((t) => t.vendor)).toEqual(['stripe']);
    expect(await reveal.getByLabel('Token (opens everything)').inputValue()).toBe(created?.token);
    expect(await reveal.getByLabel('Read token (reads only)').inputValue()).toBe(created?.readToken);
    await worldRow('acme/shop').waitFor();
    expect(await worldRow('acme/shop').textContent()).toContain('stripe');
    await shot('4-created');

    await reveal.getByRole('button', { name: /hide/ }).click();
    expect(await page.content()).not.toContain(created?.token);
  });

  it('opens the world: its clock and its map', async () => {
    await page.getByRole('button', { name: 'Open acme/shop', exact: true }).click();
    await panel().getByRole('table', { name: 'Map' }).waitFor();
    expect(await panel().getByRole('table', { name: 'Map' }).textContent()).toContain('stripe');
    expect(await panel().locator('.clock').textContent()).toContain('wall clock: not set');
    expect(await panel().getByText('Nothing has happened in this world yet.').isVisible()).toBe(true);
    await shot('5-opened');
  });

  it('sets the clock, and shows a customer made through the vendor API in the timeline and the map', async () => {
    await panel().getByLabel('Set to').fill('2026-05-01T09:00:00Z');
    await panel().getByRole('button', { name: 'Set clock' }).click();
    await expect.poll(() => panel().locator('.clock').textContent()).toContain('2026-05-01 09:00:00 UTC');
    const world = (await row('acme/shop'))!;
    expect((await worldApi<{ at: string; frozen: boolean }>('acme/shop', world.token, 'clock')).json).toEqual({ at: '2026-05-01T09:00:00.000Z', frozen: true });

    const res = await fetch(`${host.url}/acme/shop/stripe/v1/customers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${world.token}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'email=ada%40example.com&name=Ada',
    });
    expect(res.status).toBe(200);
    const customer = (await res.json()) as { id: string };

    await panel().getByRole('button', { name: 'Refresh' }).click();
    const timeline = panel().getByRole('table', { name: 'Timeline' });
    await timeline.waitFor();
    const first = timeline.locator('tbody tr').first();
    await expect.poll(() => first.textContent()).toContain(customer.id);
    const cells = await first.locator('td').allTextContents();
    expect(cells.slice(0, 4)).toEqual(['2026-05-01 09:00:00 UTC', 'stripe', '1', 'request']);
    // The row says what the host's own timeline says of its newest entry.
    const newest = (await worldApi<{ entries: { entry: { cause: { method: string; path: string; status: number } } }[] }>('acme/shop', world.token, 'timeline?limit=1')).json.entries[0]!.entry.cause;
    expect(newest.path).toMatch(/\/v1\/customers$/);
    expect(cells[4]).toContain(`POST ${newest.path} → 200`);
    expect(cells[4]).toContain('events customer.created');

    const map = (await worldApi<{ twins: { twin: string; position: number; resources: { type: string; count: number }[] }[] }>('acme/shop', world.token, 'map')).json;
    const stripe = map.twins.find((t) => t.twin === 'stripe')!;
    const mapRow = panel().getByRole('table', { name: 'Map' }).locator('tbody tr').first();
    expect((await mapRow.locator('td').allTextContents()).slice(0, 2)).toEqual(['stripe', String(stripe.position)]);
    expect(stripe.resources).toContainEqual({ type: 'customer', count: 1 });
    expect((await mapRow.locator('.resource').allTextContents()).sort()).toEqual(stripe.resources.map((r) => `${r.type} ${r.count}`).sort());
    await shot('6-timeline');

    await panel().getByLabel('Advance by').fill('2h');
    await panel().getByRole('button', { name: 'Advance' }).click();
    await expect.poll(() => panel().locator('.clock').textContent()).toContain('2026-05-01 11:00:00 UTC');
    await panel().getByLabel('Advance by').fill('soon');
    await panel().getByRole('button', { name: 'Advance' }).click();
    await expect.poll(() => panel().getByRole('alert').textContent()).toMatch(/The clock did not change.*400/);
  });

  it('rotates the tokens: the new ones shown once, the old one refused, the panel reading with the new one', async () => {
    const before = (await row('acme/shop'))!;
    await page.getByRole('button', { name: 'Rotate tokens of acme/shop', exact: true }).click();
    await page.getByRole('button', { name: 'Yes, rotate' }).click();
    const reveal = page.getByRole('region', { name: 'New tokens' });
    await reveal.waitFor();
    const after = (await row('acme/shop'))!;
    expect(after.token).not.toBe(before.token);
    expect(await reveal.getByLabel('Token (opens everything)').inputValue()).toBe(after.token);
    expect(await reveal.getByLabel('Read token (reads only)').inputValue()).toBe(after.readToken);
    expect((await worldApi('acme/shop', before.token, 'clock')).status).toBe(401);
    await expect.poll(() => panel().locator('.clock').textContent()).toContain('2026-05-01 11:00:00 UTC');
    await shot('7-rotated');

    await reveal.getByRole('button', { name: /hide/ }).click();
    expect(await page.getByRole('region', { name: 'New tokens' }).count()).toBe(0);
    expect(await page.content()).not.toContain(after.token);
    await shot('8-hidden');
  });

  it('refuses to remove a world with a branch in words, then removes the branch and the world', async () => {
    const world = (await row('acme/shop'))!;
    const branch = await worldApi<{ name: string }>('acme/shop', world.token, 'branches', { method: 'POST', body: { label: 'try' } });
    expect(branch.status).toBe(201);
    await page.getByRole('button', { name: 'Refresh', exact: true }).first().click();
    await worldRow(branch.json.name).waitFor();

    await page.getByRole('button', { name: 'Remove acme/shop', exact: true }).click();
    await page.getByRole('button', { name: 'Yes, remove' }).click();
    const refusal = page.locator('tr.confirm').getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain(`acme/shop has branches (${branch.json.name}). Remove its branches first`);
    expect(await refusal.textContent()).toContain('409 world_has_branches');
    await shot('9-has-branches');
    await page.getByRole('button', { name: 'Cancel' }).click();

    await page.getByRole('button', { name: `Remove ${branch.json.name}`, exact: true }).click();
    await page.getByRole('button', { name: 'Yes, remove' }).click();
    await expect.poll(() => worldRow(branch.json.name).count()).toBe(0);
    await page.getByRole('button', { name: 'Remove acme/shop', exact: true }).click();
    await page.getByRole('button', { name: 'Yes, remove' }).click();
    await expect.poll(() => worldRow('acme/shop').count()).toBe(0);
    expect(await rows()).toEqual([]);
    // The panel of the removed world went with it.
    expect(await panel().count()).toBe(0);
    await shot('10-removed');
    expect(pageErrors).toEqual([]);
  });
});
