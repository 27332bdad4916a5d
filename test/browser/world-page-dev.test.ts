/**
 * The world page under `kit world serve --dev` (docs/world-file.md), in Debian's Chromium: a twin
 * of the app's own whose edit does not build shows the build error (file:line:column and
 * esbuild's message) on its row of the Twins card, while the last good build keeps answering;
 * a good edit clears it. The world is served as the command serves it (`serveWorld`, in this
 * process), its page from dist/pages/ (`node pages/build.mjs`).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';
import { builtPages } from '../helpers/pages.js';
import { openLocalWorld } from '../../runtime/runner/open.js';
import type { TwinBundle } from '../../runtime/runner/types.js';
import { serveWorld, type ServingWorld } from '../../sdk/cli/serve.js';
import { buildGuestRuntime, loadBuiltinTwins } from '../../sdk/twin/build.js';

const CHROMIUM = '/usr/bin/chromium';
const SDK = fileURLToPath(new URL('../../sdk/twin/index.ts', import.meta.url));

function entry(word: string, broken = false): string {
  return `import { defineTwin } from ${JSON.stringify(SDK)};
export default defineTwin({
  vendor: 'acme', version: '0.1.0', protocol: 'http',
  models: { hosts: ['api.acme.test'], resources: ['ping'] },
  routes: [{ name: 'ping', match: { method: 'GET', path: '/v1/ping' }, handle: () => ({ status: 200, body: { word: ${JSON.stringify(word)} } })${broken ? ',,' : ''} }],
});
`;
}

let app: string;
let browser: Browser;
let serving: ServingWorld;
const reported: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: \`make test\` installs Debian's chromium (apt-get install chromium)`);
  builtPages(['world']);
  app = mkdtempSync(join(tmpdir(), 'kit-world-page-dev-'));
  mkdirSync(join(app, 'twins', 'acme', 'twin'), { recursive: true });
  writeFileSync(join(app, 'twins', 'acme', 'twin', 'index.ts'), entry('one'));
  writeFileSync(join(app, 'kit.world.yaml'), 'world: shop\ntwins:\n  hello:\n  acme:\n    path: twins/acme\n');
  const guestRuntime = await buildGuestRuntime();
  serving = await serveWorld(
    { dir: app, port: 0, proxyPort: 0, host: '127.0.0.1', org: 'local', dev: true, report: (l) => reported.push(l) },
    {
      loadTwins: async () => new Map<string, TwinBundle>([['hello', (await loadBuiltinTwins()).get('hello')!]]),
      openWorld: (o) => openLocalWorld({ ...o, guestRuntime }),
    },
  );
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await serving?.server.close();
  if (app !== undefined) rmSync(app, { recursive: true, force: true });
});

describe('the world page under --dev', () => {
  it("shows a twin's build error on its row while its last good build answers, and clears it after a good edit", async () => {
    const ping = async (): Promise<unknown> => ((await (await fetch(`${serving.server.worldUrl}/acme/v1/ping`, { headers: { 'x-kit-token': serving.tokens.token } })).json()) as { word: unknown }).word;
    expect(await ping()).toBe('one');
    writeFileSync(join(app, 'twins', 'acme', 'twin', 'index.ts'), entry('two', true));
    await expect.poll(() => reported.some((l) => l.includes('does not build')), { timeout: 10_000 }).toBe(true);

    const context = await browser.newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    try {
      await page.goto(`${serving.server.pageUrl}/`);
      const row = page.getByRole('table', { name: 'Twins' }).locator('tr[data-key="acme"]');
      await row.waitFor();
      const alert = row.getByRole('alert');
      await alert.waitFor();
      const text = await alert.textContent();
      expect(text).toContain('Does not build');
      expect(text).toContain('twins/acme/twin/index.ts:5:');
      expect(text).toContain('the last good build is serving');
      expect(await row.textContent()).toContain('twins/acme');
      expect(await page.getByRole('table', { name: 'Twins' }).locator('tr[data-key="hello"]').getByRole('alert').count()).toBe(0);
      expect(await ping()).toBe('one');

      writeFileSync(join(app, 'twins', 'acme', 'twin', 'index.ts'), entry('three'));
      await expect.poll(ping, { timeout: 10_000 }).toBe('three');
      await page.getByRole('region', { name: 'Twins', exact: true }).getByRole('button', { name: 'Refresh' }).click();
      await expect.poll(() => row.getByRole('alert').count(), { timeout: 5_000 }).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
