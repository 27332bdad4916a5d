/**
 * End to end: an unmodified Node app (the official Stripe SDK on its default host, nodemailer
 * configured only from SMTP_HOST/SMTP_PORT) runs under `kit world attach`; the Stripe twin
 * then holds its customer and the SMTP twin its mail. And the same Stripe call from curl
 * through the world's proxy, trusting nothing but the manifest's CA.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAttachManifest } from '../../sdk/attach/manifest.js';
import type { AttachManifest } from '../../sdk/attach/manifest.js';
import { buildAttach, cleanEnv, REPO, run, serveWorld, TOKENS } from './harness.js';
import type { Built, ServedWorld } from './harness.js';

const APP = join(REPO, 'test', 'attach', 'fixtures', 'shop-app.mjs');
let served: ServedWorld;
let built: Built;
let manifest: AttachManifest;

beforeAll(async () => {
  [served, built] = await Promise.all([serveWorld(['stripe', 'smtp']), buildAttach()]);
  const r = await fetch(`${served.server.worldUrl}/.well-known/kit-world`, { headers: { 'x-kit-token': TOKENS.token } });
  manifest = parseAttachManifest(await r.json());
});
afterAll(async () => {
  await Promise.all([served?.close(), built?.close()]);
});

const world = (path: string, headers: Record<string, string> = {}) => fetch(`${served.server.worldUrl}${path}`, { headers: { 'x-kit-token': TOKENS.token, ...headers } });

describe('an unmodified app under kit world attach', () => {
  it('creates a Stripe customer and sends a mail that the twins then hold', async () => {
    expect(Object.keys(manifest.streams)).toEqual(['smtp']);
    const r = await run(process.execPath, [built.kit, 'world', 'attach', served.server.worldUrl, '--token', TOKENS.token, '--', 'node', APP], cleanEnv({ SHOP_STRIPE_KEY: 'sk_test_shop_e2e' }));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { customer: string; messageId: string; accepted: string[] };
    expect(out.customer).toMatch(/^cus_/);
    expect(out.accepted).toEqual(['lin@example.com']);

    // The Stripe twin holds the customer, in the account of the app's own key.
    const customer = await world(`/stripe/v1/customers/${out.customer}`, { authorization: 'Bearer sk_test_shop_e2e' });
    expect(customer.status).toBe(200);
    expect(await customer.json()).toMatchObject({ id: out.customer, email: 'lin@example.com', name: 'Lin', metadata: { plan: 'pro' } });

    // The SMTP twin holds the mail.
    const list = (await (await world('/smtp/messages')).json()) as { data: { id: string }[] };
    expect(list.data).toHaveLength(1);
    const mail = (await (await world(`/smtp/messages/${list.data[0]?.id ?? ''}`)).json()) as Record<string, unknown>;
    expect(mail).toMatchObject({
      subject: 'Welcome, Lin',
      from: [{ name: 'Shop', address: 'hello@shop.test' }],
      to: [{ name: '', address: 'lin@example.com' }],
      messageId: out.messageId,
    });
    // The body as sent (a mail body ends with its line break).
    expect((mail['text'] as string).trimEnd()).toBe(`Your customer id is ${out.customer}.`);
  });

  it('lets curl reach https://api.stripe.com/v1/customers on the twin through the proxy, with --cacert from the manifest alone', async () => {
    expect(manifest.proxy?.hosts).toContain('api.stripe.com');
    const dir = await mkdtemp(join(tmpdir(), 'kit-e2e-'));
    try {
      const caFile = join(dir, 'ca.pem');
      await writeFile(caFile, manifest.ca?.pem ?? '');
      const args = ['-sS', '--max-time', '20', '--proxy', manifest.proxy?.url ?? '', '--proxy-user', `kit:${TOKENS.token}`, '--cacert', caFile, '-u', 'sk_test_curl_e2e:'];
      // Only what the command line says: no proxy or CA variables from whoever runs the tests.
      const env = cleanEnv({ HOME: dir });
      const created = await run('curl', [...args, '-d', 'email=curl@example.com', 'https://api.stripe.com/v1/customers'], env);
      expect(created.stderr).toBe('');
      const customer = JSON.parse(created.stdout) as { id: string; object: string };
      expect(customer.object).toBe('customer');
      const listed = await run('curl', [...args, 'https://api.stripe.com/v1/customers'], env);
      expect((JSON.parse(listed.stdout) as { data: { id: string }[] }).data.map((c) => c.id)).toEqual([customer.id]);
      const back = await world(`/stripe/v1/customers/${customer.id}`, { authorization: 'Bearer sk_test_curl_e2e' });
      expect(back.status).toBe(200);
      // Without the token the proxy answers 407 and nothing reaches the twin.
      const refused = await run('curl', ['-sS', '--max-time', '20', '--proxy', manifest.proxy?.url ?? '', '--cacert', caFile, '-o', '/dev/null', '-w', '%{http_connect}', 'https://api.stripe.com/v1/customers'], env);
      expect(refused.stdout).toBe('407');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
