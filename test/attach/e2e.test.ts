/**
 * End to end: an unmodified Node app (the official Stripe SDK on its default host, nodemailer
 * configured only from SMTP_HOST/SMTP_PORT) runs under `kit world attach`; the Stripe twin
 * then holds its customer and the SMTP twin its mail. And the same Stripe call from curl
 * through the world's proxy, trusting nothing but the manifest's CA.
 *
 * Against two hosts: the single-world server (`kit world serve`, with its CONNECT proxy) and
 * the edge variant (dist/edge/ in workerd through miniflare, `kit edge dev`; the world made with
 * `POST /-/worlds`). The edge runs no proxy (its manifest's `proxy` and `ca` are null): the Node
 * entry still sends the SDK's `https://api.stripe.com` to the twin and the SMTP stream is a
 * WebSocket to the edge, but a tool that only knows HTTPS_PROXY (curl to api.stripe.com) has no
 * door there; it reaches the twin at the manifest's `STRIPE_API_BASE` with `KIT_TWINS_KEY`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAttachManifest } from '../../sdk/attach/manifest.js';
import type { AttachManifest } from '../../sdk/attach/manifest.js';
import { openEdgeWorld } from '../helpers/edge-world.js';
import { buildAttach, cleanEnv, REPO, run, serveWorld, TOKENS } from './harness.js';
import type { Built } from './harness.js';

const APP = join(REPO, 'test', 'attach', 'fixtures', 'shop-app.mjs');

/** A world of the Stripe and SMTP twins on a host, as the app attaches to it. */
interface AttachedHost {
  name: string;
  /** Whether the host runs the CONNECT proxy (and so a CA). */
  proxy: boolean;
  start(): Promise<{ worldUrl: string; close(): Promise<void> }>;
}

const HOSTS: AttachedHost[] = [
  {
    name: 'the single-world server',
    proxy: true,
    async start() {
      const served = await serveWorld(['stripe', 'smtp']);
      return { worldUrl: served.server.worldUrl, close: () => served.close() };
    },
  },
  {
    name: 'the edge variant',
    proxy: false,
    async start() {
      const world = await openEdgeWorld({ vendors: ['stripe', 'smtp'], tokens: TOKENS, org: 'acme', world: 'shop' });
      return { worldUrl: world.url, close: () => world.close() };
    },
  },
];

const NO_PROXY_ON_EDGE = 'the edge runs no CONNECT proxy (its manifest has proxy and ca null): curl through a proxy cannot reach it';

describe.each(HOSTS)('an unmodified app under kit world attach to $name', (host) => {
  let worldUrl = '';
  let closeWorld: (() => Promise<void>) | undefined;
  let built: Built;
  let manifest: AttachManifest;

  beforeAll(async () => {
    let served: Awaited<ReturnType<AttachedHost['start']>>;
    [served, built] = await Promise.all([host.start(), buildAttach()]);
    worldUrl = served.worldUrl;
    closeWorld = served.close;
    const r = await fetch(`${worldUrl}/.well-known/kit-world`, { headers: { 'x-kit-token': TOKENS.token } });
    manifest = parseAttachManifest(await r.json());
  });
  afterAll(async () => {
    await Promise.all([closeWorld?.(), built?.close()]);
  });

  const world = (path: string, headers: Record<string, string> = {}) => fetch(`${worldUrl}${path}`, { headers: { 'x-kit-token': TOKENS.token, ...headers } });

  it('creates a Stripe customer and sends a mail that the twins then hold', async () => {
    expect(Object.keys(manifest.streams)).toEqual(['smtp']);
    const r = await run(process.execPath, [built.kit, 'world', 'attach', worldUrl, '--token', TOKENS.token, '--', 'node', APP], cleanEnv({ SHOP_STRIPE_KEY: 'sk_test_shop_e2e' }));
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

  it.skipIf(!host.proxy)(`lets curl reach https://api.stripe.com/v1/customers on the twin through the proxy, with --cacert from the manifest alone${host.proxy ? '' : ` [skipped on ${host.name}: ${NO_PROXY_ON_EDGE}]`}`, async () => {
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

  it("runs curl with the proxy and CA exactly when the world has them, and curl reaches the twin at the manifest's STRIPE_API_BASE with KIT_TWINS_KEY", async () => {
    expect(manifest.proxy !== null && manifest.ca !== null).toBe(host.proxy);
    const script = [
      'printf "%s|%s|%s\\n" "${HTTPS_PROXY:-}" "${NODE_EXTRA_CA_CERTS:-}" "${SSL_CERT_FILE:-}"',
      // NO_PROXY keeps a loopback world out of the proxy where there is one.
      'curl -sS --max-time 20 -u sk_test_base_e2e: -H "x-twins-key: $KIT_TWINS_KEY" -d email=base@example.com "$STRIPE_API_BASE/v1/customers"',
    ].join('\n');
    const r = await run(process.execPath, [built.kit, 'world', 'attach', worldUrl, '--token', TOKENS.token, '--', 'sh', '-c', script], cleanEnv());
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const [given, answer] = r.stdout.split('\n');
    expect((given ?? '').split('|').map((v) => v !== '')).toEqual([host.proxy, host.proxy, host.proxy]);
    const customer = JSON.parse(answer ?? '') as { id: string; object: string };
    expect(customer.object).toBe('customer');
    const back = await world(`/stripe/v1/customers/${customer.id}`, { authorization: 'Bearer sk_test_base_e2e' });
    expect(await back.json()).toMatchObject({ id: customer.id, email: 'base@example.com' });
  });
});
