/**
 * The Node attach entry (`node --import twinkit/attach`): an unmodified app using the official
 * Stripe SDK on its default host, fetch, node:http(s) and the undici package reaches the Stripe
 * twin; hosts no twin models are reached untouched.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import { buildAttach, cleanEnv, REPO, run, serveWorld, startOutside, TOKENS } from './harness.js';
import type { Built, Outside, ServedWorld } from './harness.js';

const APP = join(REPO, 'test', 'attach', 'fixtures', 'probe-app.mjs');
const KEY = 'sk_test_probe_app_key';
let served: ServedWorld;
let outside: Outside;
let built: Built;

beforeAll(async () => {
  [served, outside, built] = await Promise.all([serveWorld(['stripe', 'hello']), startOutside(), buildAttach()]);
});
afterAll(async () => {
  await Promise.all([served?.close(), outside?.close(), built?.close()]);
});

interface Report {
  stripeCreated: { id: string; email: string };
  stripeRetrieved: string;
  fetch: { status: number; id: string };
  httpsGet: { status: number; id: string };
  httpsRequest: { status: number; count: number };
  undiciRequest: { status: number; id: string };
  undiciFetch: { status: number; id: string };
  endpointEnv: { base: string; status: number };
  worldApi: { status: number };
  outsideFetch: { outside: boolean; url: string };
  outsideHttpGet: { outside: boolean; url: string };
  outsideUndici: { outside: boolean; url: string };
  twinsKeyInEnv: boolean;
}

describe('node --import <the attach entry>', () => {
  it('sends the Stripe SDK, fetch, http(s) and undici to the twin, and other hosts untouched', async () => {
    const r = await run(process.execPath, ['--import', built.entry, APP, outside.url], cleanEnv({ KIT_WORLD: served.server.worldUrl, KIT_WORLD_TOKEN: TOKENS.token }));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    const id = report.stripeCreated.id;
    expect(id).toMatch(/^cus_/);
    expect(report).toMatchObject({
      stripeCreated: { email: 'ada@example.com' },
      stripeRetrieved: id,
      fetch: { status: 200, id },
      httpsGet: { status: 200, id },
      httpsRequest: { status: 200, count: 1 },
      undiciRequest: { status: 200, id },
      undiciFetch: { status: 200, id },
      endpointEnv: { base: `${served.server.worldUrl}/stripe`, status: 200 },
      worldApi: { status: 200 },
      twinsKeyInEnv: true,
    });

    // The twin holds the customer, in the account of the app's own key: its Authorization reached the twin.
    const own = await fetch(`${served.server.worldUrl}/stripe/v1/customers/${id}`, { headers: { 'x-kit-token': TOKENS.token, authorization: `Bearer ${KEY}` } });
    expect(own.status).toBe(200);
    expect(((await own.json()) as { email: string }).email).toBe('ada@example.com');
    const otherKey = await fetch(`${served.server.worldUrl}/stripe/v1/customers/${id}`, { headers: { 'x-kit-token': TOKENS.token, authorization: 'Bearer sk_test_someone_else' } });
    expect(otherKey.status).toBe(404);

    // The outside saw the app's requests as sent: its Authorization, no token, no rewriting.
    expect(outside.seen.map((s) => s.url)).toEqual(['/from-fetch', '/from-http-get', '/from-undici']);
    for (const s of outside.seen) {
      expect(s.headers['x-twins-key']).toBeUndefined();
      expect(s.headers['x-kit-token']).toBeUndefined();
    }
    expect(outside.seen[0]?.headers['authorization']).toBe('Bearer outside-key');
    expect(outside.seen[1]?.headers['authorization']).toBe('Bearer outside-key');
  });

  it('stops the app (exit 1, one clear line) when the world refuses the token or cannot be reached', async () => {
    const refused = await run(process.execPath, ['--import', built.entry, '-e', 'console.log("app ran")'], cleanEnv({ KIT_WORLD: served.server.worldUrl, KIT_WORLD_TOKEN: 'tok_wrong' }));
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^kit attach: the world at .* refused the token \(401\); check KIT_WORLD_TOKEN\n$/);

    const port = await closedPort();
    const gone = await run(process.execPath, ['--import', built.entry, '-e', 'console.log("app ran")'], cleanEnv({ KIT_WORLD: `http://127.0.0.1:${port}/local/shop`, KIT_WORLD_TOKEN: TOKENS.token }));
    expect(gone.code).toBe(1);
    expect(gone.stdout).toBe('');
    expect(gone.stderr).toBe(`kit attach: cannot reach the world at http://127.0.0.1:${port}/local/shop/.well-known/kit-world (ECONNREFUSED)\n`);

    const noToken = await run(process.execPath, ['--import', built.entry, '-e', 'console.log("app ran")'], cleanEnv({ KIT_WORLD: served.server.worldUrl }));
    expect(noToken.code).toBe(1);
    expect(noToken.stderr).toContain('KIT_WORLD_TOKEN is not');
  });

  it('leaves an app alone, with a warning, when KIT_WORLD is not set', async () => {
    const r = await run(process.execPath, ['--import', built.entry, '-e', 'console.log(typeof fetch)'], cleanEnv());
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('function\n');
    expect(r.stderr).toContain('KIT_WORLD is not set');
  });

  it('reaches the twin from CommonJS too (require of https and of the Stripe SDK)', async () => {
    const app = [
      "const Stripe = require('stripe');",
      "const https = require('https');",
      "new Stripe('sk_test_cjs', { maxNetworkRetries: 0 }).customers.create({ email: 'cjs@example.com' }).then((c) => {",
      "  https.get('https://api.stripe.com/v1/customers/' + c.id, { headers: { authorization: 'Bearer sk_test_cjs' } }, (res) => {",
      "    let body = ''; res.on('data', (d) => (body += d)); res.on('end', () => console.log(res.statusCode, JSON.parse(body).email));",
      '  });',
      '});',
    ].join('\n');
    const r = await run(process.execPath, ['--import', built.entry, '-e', app], cleanEnv({ KIT_WORLD: served.server.worldUrl, KIT_WORLD_TOKEN: TOKENS.token }));
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('200 cjs@example.com\n');
  });

  it('rewrites the request forms Node takes: raw header arrays, URL plus options, agent: false, headers set later', async () => {
    const app = [
      "const http = require('http'); const https = require('https');",
      'const done = (label) => (res) => { let b = ""; res.on("data", (d) => (b += d)); res.on("end", () => console.log(label, res.statusCode, JSON.parse(b).object)); };',
      "const a = http.request({ hostname: 'api.hello.test', path: '/v1/greetings', headers: ['Accept', 'application/json', 'Host', 'api.hello.test'], agent: false }, done('array'));",
      'a.end();',
      "const b = https.request(new URL('https://api.hello.test/v1/greetings?limit=1'), { method: 'POST' }, done('url+options'));",
      "b.setHeader('content-type', 'application/json');",
      "b.end(JSON.stringify({ name: 'Ada' }));",
    ].join('\n');
    const r = await run(process.execPath, ['--import', built.entry, '-e', app], cleanEnv({ KIT_WORLD: served.server.worldUrl, KIT_WORLD_TOKEN: TOKENS.token }));
    expect(r.stderr).toBe('');
    expect(r.stdout.split('\n').filter((l) => l !== '').sort()).toEqual(['array 200 list', 'url+options 200 greeting']);
  });

  it('gives the read token reads through the twin and refuses its writes', async () => {
    const app = [
      "import Stripe from 'stripe';",
      "const s = new Stripe('sk_test_reader', { maxNetworkRetries: 0 });",
      'const list = await s.customers.list();',
      "let refused = '';",
      "try { await s.customers.create({ email: 'x@example.com' }); } catch (e) { refused = String(e.statusCode); }",
      'console.log(JSON.stringify({ listed: list.object, refused }));',
    ].join('\n');
    const r = await run(process.execPath, ['--import', built.entry, '--input-type=module', '-e', app], cleanEnv({ KIT_WORLD: served.server.worldUrl, KIT_WORLD_TOKEN: TOKENS.readToken }));
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ listed: 'list', refused: '403' });
  });

  it('is exported as twinkit/attach (the compiled entry: needs `make build`)', async () => {
    expect(existsSync(join(REPO, 'dist', 'sdk', 'attach', 'register.js')), 'dist/sdk/attach/register.js is missing: run `make build`').toBe(true);
    const app = "const r = await fetch('https://api.hello.test/v1/greetings'); console.log(r.status, (await r.json()).object);";
    const r = await run(process.execPath, ['--import', 'twinkit/attach', '--input-type=module', '-e', app], cleanEnv({ KIT_WORLD: served.server.worldUrl, KIT_WORLD_TOKEN: TOKENS.token }));
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('200 list\n');
  });
});

/** A loopback port nothing listens on (one that was just free). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address !== null ? address.port : 0;
}
