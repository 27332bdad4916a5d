/**
 * `kit world attach` as a process (the bundled `kit` executable) in front of a served world:
 * the environment it gives a command, curl reaching a twin from that environment alone,
 * exit codes and signals.
 */
import { spawn, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAttach, cleanEnv, run, serveWorld, TOKENS } from './harness.js';
import type { Built, ServedWorld } from './harness.js';

const hasPython = spawnSync('python3', ['-c', 'import ssl, urllib.request'], { stdio: 'ignore' }).status === 0;
let served: ServedWorld;
let built: Built;

beforeAll(async () => {
  [served, built] = await Promise.all([serveWorld(['stripe', 'hello']), buildAttach()]);
});
afterAll(async () => {
  await Promise.all([served?.close(), built?.close()]);
});

const attach = (command: string[], env: Record<string, string> = {}) =>
  run(process.execPath, [built.kit, 'world', 'attach', served.server.worldUrl, '--token', TOKENS.token, '--', ...command], cleanEnv(env));

describe('kit world attach', () => {
  it('gives the command the world, the entry, the manifest env, the proxy and the CA', async () => {
    const script = [
      'const fs = require("node:fs");',
      'const e = process.env;',
      'const names = ["KIT_WORLD","KIT_WORLD_TOKEN","KIT_TWINS_KEY","NODE_OPTIONS","HTTPS_PROXY","https_proxy","NO_PROXY","no_proxy","NODE_EXTRA_CA_CERTS","SSL_CERT_FILE","REQUESTS_CA_BUNDLE","CURL_CA_BUNDLE","STRIPE_API_BASE","HELLO_API_URL"];',
      'const out = {}; for (const n of names) out[n] = e[n];',
      'out.bundle = fs.readFileSync(e.SSL_CERT_FILE, "utf8"); out.extra = fs.readFileSync(e.NODE_EXTRA_CA_CERTS, "utf8");',
      'console.log(JSON.stringify(out));',
    ].join('\n');
    // A script that is not ESM needs no import; NODE_OPTIONS carries one anyway, before the app runs.
    const r = await attach(['node', '-e', script], { NODE_OPTIONS: '--max-old-space-size=256', NO_PROXY: 'db.internal' });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const env = JSON.parse(r.stdout) as Record<string, string>;
    const manifest = (await (await fetch(`${served.server.worldUrl}/.well-known/kit-world`, { headers: { 'x-kit-token': TOKENS.token } })).json()) as {
      ca: { pem: string };
      proxy: { url: string };
    };
    expect(env['KIT_WORLD']).toBe(served.server.worldUrl);
    expect(env['KIT_WORLD_TOKEN']).toBe(TOKENS.token);
    expect(env['KIT_TWINS_KEY']).toBe(TOKENS.token);
    expect(env['STRIPE_API_BASE']).toBe(`${served.server.worldUrl}/stripe`);
    expect(env['HELLO_API_URL']).toBe(`${served.server.worldUrl}/hello`);
    expect(env['NODE_OPTIONS']).toBe(`--max-old-space-size=256 --import ${built.entry}`);
    const proxy = new URL(env['HTTPS_PROXY'] as string);
    expect(`${proxy.protocol}//${proxy.host}`).toBe(manifest.proxy.url);
    expect(decodeURIComponent(proxy.password)).toBe(TOKENS.token);
    expect(env['https_proxy']).toBe(env['HTTPS_PROXY']);
    // The proxy tunnels to no loopback address: the app's own local services are left out of it, beside the user's.
    expect(env['NO_PROXY']).toBe('db.internal,localhost,127.0.0.1,::1');
    expect(env['no_proxy']).toBe(env['NO_PROXY']);
    expect(env['REQUESTS_CA_BUNDLE']).toBe(env['SSL_CERT_FILE']);
    expect(env['CURL_CA_BUNDLE']).toBe(env['SSL_CERT_FILE']);
    // The bundle is the usual roots plus the world's CA; Node's extra file is the world's CA.
    expect(env['bundle']).toContain(manifest.ca.pem.trim());
    expect((env['bundle'] as string).split('BEGIN CERTIFICATE').length).toBeGreaterThan(50);
    expect(new X509Certificate(env['extra'] as string).fingerprint256).toBe(new X509Certificate(manifest.ca.pem).fingerprint256);
    // Removed once the command ended.
    expect(existsSync(env['SSL_CERT_FILE'] as string)).toBe(false);
    expect(existsSync(env['NODE_EXTRA_CA_CERTS'] as string)).toBe(false);
  });

  it('runs a small Node app whose Stripe SDK, on its default host, reaches the twin', async () => {
    const app = [
      "import Stripe from 'stripe';",
      "const stripe = new Stripe('sk_test_kit_attach', { maxNetworkRetries: 0 });",
      "const c = await stripe.customers.create({ email: 'grace@example.com' });",
      'console.log(c.id);',
    ].join('\n');
    const r = await attach(['node', '--input-type=module', '-e', app]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const id = r.stdout.trim();
    expect(id).toMatch(/^cus_/);
    const back = await fetch(`${served.server.worldUrl}/stripe/v1/customers/${id}`, { headers: { 'x-kit-token': TOKENS.token, authorization: 'Bearer sk_test_kit_attach' } });
    expect(((await back.json()) as { email: string }).email).toBe('grace@example.com');
  });

  it('lets curl, configured by nothing but that environment, reach https://api.stripe.com on the twin', async () => {
    const r = await attach(['curl', '-sS', '--max-time', '20', '-u', 'sk_test_curl_env:', '-d', 'email=curl@example.com', 'https://api.stripe.com/v1/customers']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const created = JSON.parse(r.stdout) as { id: string; object: string; email: string };
    expect(created).toMatchObject({ object: 'customer', email: 'curl@example.com' });
    const back = await fetch(`${served.server.worldUrl}/stripe/v1/customers/${created.id}`, { headers: { 'x-kit-token': TOKENS.token, authorization: 'Bearer sk_test_curl_env' } });
    expect(back.status).toBe(200);
  });

  // Python is not part of the toolchain; where it is installed, it proves "any language" once more.
  it.skipIf(!hasPython)('lets Python (urllib, standard library only) reach the twin at the vendor address from that environment', async () => {
    const script = [
      'import base64, json, urllib.request',
      "req = urllib.request.Request('https://api.stripe.com/v1/customers', data=b'email=py@example.com', headers={'Authorization': 'Basic ' + base64.b64encode(b'sk_test_py:').decode()})",
      'print(json.load(urllib.request.urlopen(req, timeout=20))["email"])',
    ].join('\n');
    const r = await attach(['python3', '-c', script]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('py@example.com\n');
  });

  it("exits with the command's code, 127 for a command that does not exist", async () => {
    expect((await attach(['sh', '-c', 'exit 7'])).code).toBe(7);
    const missing = await attach(['no-such-command-kit-test']);
    expect(missing.code).toBe(127);
    expect(missing.stderr).toBe('kit: cannot run no-such-command-kit-test: not found\n');
  });

  it('refuses a wrong token before running anything, exit 1', async () => {
    const r = await run(process.execPath, [built.kit, 'world', 'attach', served.server.worldUrl, '--token', 'tok_wrong', '--', 'sh', '-c', 'echo ran'], cleanEnv());
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^kit: the world at .* refused the token \(401\); check KIT_WORLD_TOKEN\n$/);
  });

  it('passes SIGTERM on to the command and exits as it does', async () => {
    const child = spawn(
      process.execPath,
      [built.kit, 'world', 'attach', served.server.worldUrl, '--token', TOKENS.token, '--', 'sh', '-c', 'trap "echo got TERM; exit 42" TERM; echo ready; while :; do sleep 0.05; done'],
      // A process group of its own, so a hung run is cleaned up whole.
      { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const ready = await new Promise<boolean>((resolve) => {
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString('utf8');
        if (stdout.includes('ready')) resolve(true);
      });
      child.on('close', () => resolve(false));
    });
    expect([ready, stderr]).toEqual([true, '']);
    child.kill('SIGTERM');
    const code = await new Promise<number | null | 'hung'>((resolve) => {
      // Never left running: a kit that did not pass the signal on is killed, and the test says so.
      const guard = setTimeout(() => {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        resolve('hung');
      }, 15_000);
      child.on('close', (c) => {
        clearTimeout(guard);
        resolve(c);
      });
    });
    expect(stdout).toContain('got TERM');
    expect(code).toBe(42);
  });
});
