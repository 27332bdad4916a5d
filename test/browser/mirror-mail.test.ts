/**
 * The SMTP and hello mirrors (twins/smtp/mirror/, twins/hello/mirror/) driven in Debian's
 * Chromium as a person uses them, on the single-world server with the built pages: an app
 * sends an HTML mail with an inline image, a remote image, a script and an attachment through
 * the SMTP stream (nodemailer, configured from the attacher's SMTP_HOST and SMTP_PORT); the
 * mirror, opened at `…/smtp/mirror/` on the server's address, moves to the world's origin,
 * opens the loopback session and lists the mail; the message shows its HTML (the script not
 * run, the remote image never fetched), its text, its headers, and saves its attachment; a
 * mailbox API path opened in the browser shows that page. A greeting made over the hello API
 * is found in the hello mirror. Screenshots go to $MIRROR_SHOTS (default the OS's tmpdir) as
 * mirror-mail-<step>.png.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import nodemailer from 'nodemailer';
import { chromium } from 'playwright-core';
import { builtPages } from '../helpers/pages.js';
import type { Browser, Page } from 'playwright-core';
import { startSingleWorldServer, type SingleWorldServer } from '../../host/single-world.js';
import { parseAttachManifest } from '../../sdk/attach/manifest.js';
import { startStreamListeners, type StreamListeners } from '../../sdk/attach/streams.js';
import { HELLO, openStreamWorld, SMTP, twinBundle, type StreamTestWorld } from '../streams/helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = process.env['MIRROR_SHOTS'] ?? tmpdir();
const TOKENS = { token: 'tok_mirror-write-token-0123456789abcdef', readToken: 'tok_r_mirror-read-token-0123456789abcdef' };
/** A host no page may reach: a tracking pixel in the mail points there. */
const TRACKER = 'tracker.mirror-mail.test';
/** A 2×2 PNG, the mail's inline logo. */
const LOGO = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP4z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==', 'base64');
const INVOICE = Buffer.from('%PDF-1.4\n% the invoice for May\n1 0 obj << >> endobj\n%%EOF\n');

describe('the SMTP and hello mirrors in Chromium', () => {
  let world: StreamTestWorld;
  let server: SingleWorldServer;
  let listeners: StreamListeners;
  let browser: Browser;
  let page: Page;
  /** Every URL the page or its frames asked for. */
  const requested: string[] = [];
  /** Every request that did not complete, with why. */
  const failed: string[] = [];
  const pageErrors: string[] = [];
  const shot = (step: string) => page.screenshot({ path: join(SHOTS, `mirror-mail-${step}.png`), fullPage: true });

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: \`make test\` installs Debian's chromium (apt-get install chromium)`);
    world = await openStreamWorld([SMTP, HELLO], 'mail');
    const twins = await Promise.all([twinBundle(HELLO), twinBundle(SMTP)]);
    server = await startSingleWorldServer({
      world: world.runner,
      org: 'local',
      worldName: 'mail',
      tokens: TOKENS,
      budget: false,
      pages: builtPages(['hello', 'smtp']),
      twins: twins.map((t) => ({
        vendor: t.vendor,
        requestScopes: t.manifest.requestScopes,
        protocol: t.manifest.protocol,
        hosts: t.manifest.models.hosts,
        ...(t.manifest.models.endpointEnv ? { endpointEnv: t.manifest.models.endpointEnv } : {}),
      })),
    });
    expect(server.pageUrl).toMatch(/^http:\/\/mail--local\.localhost:\d+$/);
    const manifest = parseAttachManifest(await (await fetch(`${server.worldUrl}/.well-known/kit-world`, { headers: { 'x-kit-token': TOKENS.token } })).json());
    listeners = await startStreamListeners(manifest, TOKENS.token);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    page.on('request', (r) => requested.push(r.url()));
    page.on('requestfailed', (r) => failed.push(`${r.url()} ${r.failure()?.errorText ?? ''}`));
    page.on('pageerror', (e) => pageErrors.push(e.message));
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await listeners?.close();
    await server?.close();
    await world?.close();
  });

  let messageId: string;

  it('lists a mail the app sent through the SMTP stream, at the mailbox API path, after a loopback session', async () => {
    const transport = nodemailer.createTransport({ host: listeners.env['SMTP_HOST'], port: Number(listeners.env['SMTP_PORT']), secure: false });
    const info = await transport.sendMail({
      from: '"Zoë Shop" <billing@shop.test>',
      to: 'Bob <bob@example.test>',
      cc: 'accounts@example.test',
      subject: 'Your invoice for May ✓',
      text: 'Hello Bob,\n\nyour invoice for May is attached.\n\nZoë',
      html: [
        '<h1 id="title">Invoice for May</h1>',
        '<p>Hello <b>Bob</b>, your invoice is attached.</p>',
        '<p><img id="logo" alt="logo" src="cid:logo@shop"> <img id="pixel" alt="pixel" src="http://' + TRACKER + '/open.gif"></p>',
        '<script>document.getElementById("title").textContent = "SCRIPT RAN"</script>',
      ].join(''),
      attachments: [
        { filename: 'invoice-may.pdf', content: INVOICE, contentType: 'application/pdf' },
        { filename: 'logo.png', content: LOGO, contentType: 'image/png', cid: 'logo@shop' },
      ],
    });
    transport.close();
    messageId = /queued as (msg_\w+)/.exec(info.response)![1]!;

    // Opened at the server's own address: the page moves to the world's origin, opens the
    // loopback session there, and replaces `/mirror/` with the inbox's API path.
    await page.goto(`${server.url}/local/mail/smtp/mirror/`);
    const rows = page.getByRole('table', { name: 'Messages' }).locator('tbody tr');
    await rows.first().waitFor();
    expect(page.url()).toBe(`${server.pageUrl}/local/mail/smtp/messages`);
    const session = await page.evaluate(async () => (await fetch('/-/local/mail/session')).json());
    expect(session).toMatchObject({ world: 'local/mail', scope: 'write', local: true });
    expect(await rows.count()).toBe(1);
    const cells = await rows.first().locator('td').allTextContents();
    expect(cells.slice(0, 3)).toEqual(['Zoë Shop', 'Bob', 'Your invoice for May ✓ Hello Bob, your invoice for May is attached. Zoë']);
    expect(await rows.first().getByLabel('2 attachments').count()).toBe(1);
    expect(await page.getByRole('navigation', { name: 'Mailbox' }).textContent()).toContain('Inbox1');
    await shot('1-inbox');
  });

  it('shows the message: its HTML in a sandboxed frame that ran no script and fetched no remote image', async () => {
    await page.getByRole('table', { name: 'Messages' }).getByRole('link', { name: 'Zoë Shop' }).click();
    await page.getByRole('heading', { name: 'Your invoice for May ✓' }).waitFor();
    expect(page.url()).toBe(`${server.pageUrl}/local/mail/smtp/messages/${messageId}`);
    const envelope = page.getByRole('definition');
    expect(await envelope.allTextContents()).toEqual(expect.arrayContaining(['Zoë Shop <billing@shop.test>', 'Bob <bob@example.test>', 'accounts@example.test']));

    const frameElement = page.locator('iframe[title="HTML of the message"]');
    await frameElement.waitFor();
    // No script, no same origin: the sender's HTML cannot reach the page or its session.
    expect(await frameElement.getAttribute('sandbox')).toBe('allow-popups allow-popups-to-escape-sandbox');
    const frame = page.frameLocator('iframe[title="HTML of the message"]');
    await frame.locator('#title').waitFor();
    expect(await frame.locator('#title').textContent()).toBe('Invoice for May');
    // The inline image came in (handed over as data: by the mirror); the remote one never went out.
    await expect.poll(() => frame.locator('#logo').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(2);
    expect(await frame.locator('#pixel').evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(0);
    // Chromium may report an image the page's policy stopped as a request that failed so (seen in loaded
    // runs), its reason `net::ERR_BLOCKED_BY_CSP` or, as blocked before it was sent, `csp`; none may
    // have gone to the network (which would fail resolving the tracker's name).
    const tracked = requested.filter((u) => u.includes(TRACKER));
    const stoppedByPolicy = (u: string): string => {
      const reason = failed.find((f) => f.startsWith(`${u} `))?.slice(u.length + 1);
      return reason === 'net::ERR_BLOCKED_BY_CSP' || reason === 'csp' ? `${u} blocked by the policy` : `${u} ${reason ?? 'went out'}`;
    };
    expect(tracked.map(stoppedByPolicy)).toEqual(tracked.map((u) => `${u} blocked by the policy`));
    expect(await page.getByText('1 remote image is not loaded').isVisible()).toBe(true);
    await shot('2-html');
  });

  it('shows the text and the headers, each at an address of its own', async () => {
    await page.getByRole('tab', { name: 'Text' }).click();
    await expect.poll(() => page.url()).toBe(`${server.pageUrl}/local/mail/smtp/messages/${messageId}#text`);
    expect(await page.getByLabel('Text', { exact: true }).textContent()).toBe('Hello Bob,\n\nyour invoice for May is attached.\n\nZoë');
    await shot('3-text');

    await page.getByRole('tab', { name: /Headers/ }).click();
    const headers = page.getByRole('table', { name: 'Headers' });
    await headers.waitFor();
    const message = (await (await fetch(`${server.worldUrl}/smtp/messages/${messageId}`, { headers: { 'x-kit-token': TOKENS.token } })).json()) as { headers: { name: string; value: string }[] };
    const rows = await headers.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    // Every header, in order, as the twin parsed it.
    expect(rows).toEqual(message.headers.map((h) => [h.name, h.value]));
    expect(rows).toContainEqual(['Subject', 'Your invoice for May ✓']);
    await shot('4-headers');
  });

  it('saves an attachment with the session, its bytes as sent', async () => {
    await page.getByRole('tab', { name: /Attachments/ }).click();
    await expect.poll(() => page.url()).toBe(`${server.pageUrl}/local/mail/smtp/messages/${messageId}/attachments`);
    const table = page.getByRole('table', { name: 'Attachments' });
    await table.waitFor();
    const cells = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 4).map((td) => td.textContent)));
    expect(cells).toEqual([
      ['logo.png', 'image/png', `${LOGO.length} B`, 'inline (cid:logo@shop)'],
      ['invoice-may.pdf', 'application/pdf', `${INVOICE.length} B`, 'attached'],
    ]);
    await shot('5-attachments');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download invoice-may.pdf' }).click()]);
    expect(download.suggestedFilename()).toBe('invoice-may.pdf');
    expect(readFileSync((await download.path())!)).toEqual(INVOICE);
  });

  it('shows the page a mailbox API path names when the browser opens it, and the raw message there', async () => {
    await page.goto(`${server.pageUrl}/local/mail/smtp/messages/${messageId}/raw`);
    const raw = page.getByLabel('Raw message');
    await raw.waitFor();
    const text = (await raw.textContent()) ?? '';
    expect(text).toContain('Content-Type: multipart/mixed');
    expect(text).toContain(`filename=invoice-may.pdf`);
    expect(await page.getByRole('tab', { name: 'Raw' }).getAttribute('aria-selected')).toBe('true');
    await shot('6-raw');
  });

  it('finds a greeting made over the hello API, in the list and on its own page', async () => {
    const made = await fetch(`${server.worldUrl}/hello/v1/greetings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKENS.token}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=Ada&message=Hello%20from%20the%20app&metadata%5Bteam%5D=core',
    });
    expect(made.status).toBe(200);
    const greeting = (await made.json()) as { id: string };

    await page.goto(`${server.url}/local/mail/hello/mirror/`);
    const table = page.getByRole('table', { name: 'Greetings' });
    await table.waitFor();
    expect(page.url()).toBe(`${server.pageUrl}/local/mail/hello/v1/greetings`);
    const cells = await table.locator('tbody tr').first().locator('td').allTextContents();
    expect(cells).toEqual(['Ada', 'Hello from the app', 'active', '2026-01-01 00:00:00 UTC', greeting.id]);
    await shot('7-greetings');

    await table.getByRole('link', { name: 'Ada' }).click();
    const details = page.getByRole('definition');
    await page.getByRole('heading', { name: 'Ada' }).waitFor();
    expect(page.url()).toBe(`${server.pageUrl}/local/mail/hello/v1/greetings/${greeting.id}`);
    expect(await details.allTextContents()).toEqual([greeting.id, 'Hello from the app', 'active', '2026-01-01 00:00:00 UTC', '—', 'core']);
    await shot('8-greeting');
    // Back returns to the list; the `/mirror/` address was replaced, so Back again leaves the mirror.
    await page.goBack();
    await table.waitFor();
    expect(page.url()).toBe(`${server.pageUrl}/local/mail/hello/v1/greetings`);
    expect(pageErrors).toEqual([]);
  });
});
