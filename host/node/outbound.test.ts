/**
 * The Node outbound fetch against loopback servers (answers, caps, timeouts, redirects), names
 * resolved at connect time through an injected resolver (there is no DNS here), and the CONNECT
 * path through a served world's real proxy: `https://api.stripe.com` reaches that world's twin.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo, Server as NetServer } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import type { Server as TlsServer } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusal, startStandInVendor, type Seen, type StandIn } from '../../test/helpers/vendor-stand-in.js';
import type { OutboundFetch, OutboundLimits } from '../../runtime/roots/outbound.js';
import { loadBuiltinTwins } from '../../sdk/twin/build.js';
import { openTestWorld } from '../../test/helpers/world.js';
import type { TestWorld } from '../../test/helpers/world.js';
import { startSingleWorldServer } from '../single-world.js';
import type { SingleWorldServer, TwinScopes } from '../single-world.js';
import { createNodeOutbound } from '../../runtime/roots/node-outbound.js';
import { createMemoryCa } from './proxy/ca.js';
import type { WorldCa } from './proxy/ca.js';

const LIMITS: OutboundLimits = { timeoutMs: 5_000, maxBytes: 1_000_000 };
const text = (body: Uint8Array): string => new TextDecoder().decode(body);

function listen<S extends Server | NetServer | TlsServer>(server: S): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}
function close(server: Server | NetServer | TlsServer | undefined): Promise<void> {
  if (server === undefined) return Promise.resolve();
  if ('closeAllConnections' in server) server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

let vendor: StandIn;
let direct: OutboundFetch;
let strict: OutboundFetch;

beforeAll(async () => {
  vendor = await startStandInVendor();
  direct = createNodeOutbound({ loopback: true });
  strict = createNodeOutbound({ loopback: false });
});
afterAll(() => vendor.close());

const at = (path: string): string => vendor.at(path);

describe('createNodeOutbound, direct', () => {
  it('answers status, headers and body; sends the method and body; sets host and content-length itself', async () => {
    vendor.seen.length = 0;
    const body = new TextEncoder().encode('name=Ada');
    const answer = await direct({ method: 'post', url: at('/echo?x=1'), headers: { 'content-type': 'application/x-www-form-urlencoded', host: 'evil.example', connection: 'upgrade', 'content-length': '999', 'x-kept': 'yes' }, body }, LIMITS);
    expect(answer.status).toBe(200);
    expect(JSON.parse(text(answer.body))).toEqual({ method: 'POST', body: 'name=Ada' });
    expect(answer.headers['content-type']).toBe('application/json');
    expect(answer.headers['set-cookie']).toBe('a=1; Path=/\nb=2; Expires=Wed, 21 Oct 2037 07:28:00 GMT');
    expect(answer.headers['x-many']).toBe('one, two');
    expect(vendor.seen).toHaveLength(1);
    expect(vendor.seen[0]?.url).toBe('/echo?x=1');
    expect(vendor.seen[0]?.headers.host).toBe(`127.0.0.1:${vendor.port}`);
    expect(vendor.seen[0]?.headers['content-length']).toBe('8');
    expect(vendor.seen[0]?.headers['x-kept']).toBe('yes');
    expect(vendor.seen[0]?.headers.connection).not.toBe('upgrade');
  });

  it('never follows a redirect: the 3xx is the answer', async () => {
    vendor.seen.length = 0;
    const answer = await direct({ method: 'GET', url: at('/redirect'), headers: {} }, LIMITS);
    expect(answer.status).toBe(302);
    expect(answer.headers.location).toBe('/echo');
    expect(text(answer.body)).toBe('moved');
    expect(vendor.seen.map((s) => s.url)).toEqual(['/redirect']);
  });

  it('refuses an answer over maxBytes, declared or streamed, and takes one of exactly maxBytes', async () => {
    const small = { timeoutMs: 5_000, maxBytes: 1000 };
    const declared = await refusal(direct({ method: 'GET', url: at('/big-declared'), headers: {} }, small));
    expect([declared.code, declared.message]).toEqual(['outbound_too_large', "GET http://127.0.0.1:" + vendor.port + ": the answer's body is over 1000 bytes"]);
    const chunked = await refusal(direct({ method: 'GET', url: at('/big-chunked'), headers: {} }, small));
    expect(chunked.code).toBe('outbound_too_large');
    const exact = await direct({ method: 'GET', url: at('/exactly-1000'), headers: {} }, small);
    expect(exact.body.byteLength).toBe(1000);
  });

  it('gives up after timeoutMs, whether the head or the rest of the body is late', async () => {
    for (const path of ['/hang', '/stall-body']) {
      const started = Date.now();
      const e = await refusal(direct({ method: 'GET', url: at(path), headers: {} }, { timeoutMs: 300, maxBytes: 1000 }));
      const took = Date.now() - started;
      expect([path, e.code]).toEqual([path, 'outbound_timeout']);
      expect(e.message).toBe(`GET http://127.0.0.1:${vendor.port}: no complete answer within 300 ms`);
      expect(took).toBeGreaterThanOrEqual(290);
      expect(took).toBeLessThan(2_000);
    }
  });

  it('fails a refused connection and a body cut short as outbound_failed', async () => {
    const gone = createNetServer();
    const port = await listen(gone);
    await close(gone);
    const refused = await refusal(direct({ method: 'GET', url: `http://127.0.0.1:${port}/`, headers: {} }, LIMITS));
    expect([refused.code, refused.message]).toEqual(['outbound_failed', `GET http://127.0.0.1:${port}: the connection was refused (ECONNREFUSED)`]);
    const cut = await refusal(direct({ method: 'GET', url: at('/cut-body'), headers: {} }, LIMITS));
    expect(cut.code).toBe('outbound_failed');
  });

  it("never puts a header's value, the path or the query in an error", async () => {
    const e = await refusal(direct({ method: 'GET', url: at('/echo?api_key=sk_live_query'), headers: { authorization: 'Bearer sk_live_secret\r\nx-injected: 1' } }, LIMITS));
    expect(e.code).toBe('outbound_failed');
    expect(e.message).toBe(`GET http://127.0.0.1:${vendor.port}: a request header holds a character HTTP does not allow (ERR_INVALID_CHAR)`);
    const t = await refusal(direct({ method: 'GET', url: at('/hang?api_key=sk_live_query'), headers: { authorization: 'Bearer sk_live_secret' } }, { timeoutMs: 100, maxBytes: 10 }));
    expect(t.message).not.toMatch(/sk_live|hang/);
  });

  it('refuses a destination the URL check refuses, before connecting', async () => {
    vendor.seen.length = 0;
    for (const url of [at('/echo'), `http://localhost:${vendor.port}/echo`, `https://2130706433:${vendor.port}/echo`, `https://[::ffff:127.0.0.1]:${vendor.port}/echo`]) {
      const e = await refusal(strict({ method: 'GET', url, headers: {} }, LIMITS));
      expect([url, e.code]).toEqual([url, 'destination_refused']);
    }
    const meta = await refusal(direct({ method: 'GET', url: 'http://169.254.169.254/latest/meta-data/', headers: {} }, LIMITS));
    expect([meta.code, meta.message]).toEqual(['destination_refused', 'the destination host 169.254.169.254 is the cloud metadata address']);
    expect(vendor.seen).toHaveLength(0);
  });
});

describe('createNodeOutbound, names resolved at connect', () => {
  /** A loopback TCP listener that counts connections: what a refused name must never reach. */
  let counter: NetServer;
  let counterPort: number;
  let connections = 0;
  let ca: WorldCa;
  let tlsServer: TlsServer;
  let tlsPort: number;

  beforeAll(async () => {
    counter = createNetServer((socket) => {
      connections++;
      socket.destroy();
    });
    counterPort = await listen(counter);
    ca = await createMemoryCa({ label: 'outbound test', hosts: ['api.stripe.com'] });
    tlsServer = createTlsServer({ SNICallback: (name, cb) => void ca.contextFor(name).then((c) => cb(null, c), (e: Error) => cb(e)) }, (socket) => socket.end());
    tlsPort = await listen(tlsServer);
  });
  afterAll(async () => {
    await close(counter);
    await close(tlsServer);
  });

  it('connects to the address the resolver gave, asked once, from inside the connect', async () => {
    const asked: string[] = [];
    const outbound = createNodeOutbound({ loopback: true, resolve: async (name) => (asked.push(name), ['127.0.0.1']) });
    vendor.seen.length = 0;
    const answer = await outbound({ method: 'GET', url: `http://api.localhost:${vendor.port}/echo`, headers: {} }, LIMITS);
    expect(answer.status).toBe(200);
    expect(asked).toEqual(['api.localhost']);
    expect(vendor.seen[0]?.headers.host).toBe(`api.localhost:${vendor.port}`);
  });

  it('refuses a public-looking name that resolves to loopback, private or metadata addresses, and never connects', async () => {
    const cases: [boolean, readonly string[], string][] = [
      [false, ['127.0.0.1'], '127.0.0.1 is a loopback address (loopback is allowed for local tests only)'],
      [false, ['93.184.216.34', '10.0.0.1'], '10.0.0.1 is a private address'],
      [false, ['::ffff:169.254.169.254'], '::ffff:169.254.169.254 is the cloud metadata address (169.254.169.254, inside an IPv4-mapped IPv6 address)'],
      [true, ['fd00::1'], 'fd00::1 is a private (unique local) address'],
      [true, ['0.0.0.0'], '0.0.0.0 is an unspecified ("this network") address'],
    ];
    connections = 0;
    for (const [loopback, addresses, why] of cases) {
      const outbound = createNodeOutbound({ loopback, resolve: async () => addresses });
      const e = await refusal(outbound({ method: 'GET', url: `https://rebind.example.com:${counterPort}/x?token=sk_live_q`, headers: {} }, LIMITS));
      expect([addresses, e.code, e.message]).toEqual([addresses, 'destination_refused', `the destination host rebind.example.com resolves to an address it must not reach: ${why}`]);
    }
    expect(connections).toBe(0);
  });

  it('judges each connect by its own resolution: a name that rebinds to a private address is refused that time', async () => {
    let calls = 0;
    const outbound = createNodeOutbound({ loopback: true, resolve: async () => (++calls === 1 ? ['127.0.0.1'] : ['192.168.1.10']) });
    expect((await outbound({ method: 'GET', url: `http://api.localhost:${vendor.port}/echo`, headers: {} }, LIMITS)).status).toBe(200);
    const again = await refusal(outbound({ method: 'GET', url: `http://api.localhost:${vendor.port}/echo`, headers: {} }, LIMITS));
    expect(again.code).toBe('destination_refused');
    expect(calls).toBe(2);
  });

  it('fails a name that does not resolve, and a certificate no default CA vouches for', async () => {
    const nowhere = createNodeOutbound({ loopback: false, resolve: async () => Promise.reject(Object.assign(new Error('nope'), { code: 'ENOTFOUND' })) });
    const e = await refusal(nowhere({ method: 'GET', url: 'https://api.nowhere.example/', headers: {} }, LIMITS));
    expect([e.code, e.message]).toEqual(['outbound_failed', 'GET https://api.nowhere.example: the name does not resolve (ENOTFOUND)']);

    // The world's CA signs this leaf; nothing here trusts it.
    const outbound = createNodeOutbound({ loopback: true, resolve: async () => ['127.0.0.1'] });
    const tlsError = await refusal(outbound({ method: 'GET', url: `https://api.stripe.com:${tlsPort}/v1/customers`, headers: {} }, LIMITS));
    expect(tlsError.code).toBe('outbound_failed');
    expect(tlsError.message).toMatch(new RegExp(`^GET https://api.stripe.com:${tlsPort}: the TLS handshake failed \\([A-Z_]+\\)$`));
  });
});

describe('createNodeOutbound, webhook deliveries of a world of this machine alone', () => {
  it("reach any receiver the app registered (a compose network's dot-less name, a private address), and only them", async () => {
    // `app` resolves to this machine, standing in for a container's private address.
    const local = createNodeOutbound({ loopback: true, webhooksAnywhere: true, resolve: async () => ['127.0.0.1'] });
    const hook = vendor.at('/echo').replace('127.0.0.1', 'app');
    const delivered = await local({ method: 'POST', url: hook, headers: {}, body: new TextEncoder().encode('{}'), purpose: 'webhook' }, LIMITS);
    expect(delivered.status).toBe(200);
    // The same URL as a vendor call (a root, a link) is refused, as on a shared host every delivery is.
    expect((await refusal(local({ method: 'GET', url: hook, headers: {} }, LIMITS))).code).toBe('destination_refused');
    const shared = createNodeOutbound({ loopback: false, resolve: async () => ['10.0.0.7'] });
    expect((await refusal(shared({ method: 'POST', url: 'https://hooks.example.com/in', headers: {}, purpose: 'webhook' }, LIMITS))).code).toBe('destination_refused');
  });
});

describe('createNodeOutbound, through a proxy', () => {
  const TOKENS = { token: 'tok_outbound-write-token-0123456789abcdef', readToken: 'tok_r_outbound-read-token-0123456789abcdef' };
  let world: TestWorld;
  let server: SingleWorldServer;
  let ca: WorldCa;
  let proxyUrl: string;
  const noResolve = async (): Promise<readonly string[]> => {
    throw new Error('a proxied destination must not be resolved here');
  };

  beforeAll(async () => {
    world = await openTestWorld({ vendors: ['stripe'], world: 'real' });
    const builtins = await loadBuiltinTwins();
    const stripe = builtins.get('stripe')?.manifest;
    if (stripe === undefined) throw new Error('no stripe twin');
    const twins: TwinScopes[] = [{ vendor: 'stripe', requestScopes: stripe.requestScopes, protocol: stripe.protocol, hosts: stripe.models.hosts }];
    ca = await createMemoryCa({ label: 'kit world local/real', hosts: stripe.models.hosts });
    server = await startSingleWorldServer({ world: world.runner, org: 'local', worldName: 'real', tokens: TOKENS, twins, ca, proxyPort: 0 });
    const port = server.proxy?.port;
    if (port === undefined) throw new Error('no proxy');
    proxyUrl = `http://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    await server?.close();
  });

  const withToken = (token: string): string => proxyUrl.replace('http://', `http://kit:${encodeURIComponent(token)}@`);

  it("reaches https://api.stripe.com through a served world's proxy: that world's Stripe twin answers", async () => {
    const outbound = createNodeOutbound({ loopback: false, proxy: { url: withToken(TOKENS.token), ca: ca.certPem }, resolve: noResolve });
    const key = { authorization: 'Bearer sk_test_outbound' };
    const made = await outbound({ method: 'POST', url: 'https://api.stripe.com/v1/customers', headers: { ...key, 'content-type': 'application/x-www-form-urlencoded' }, body: new TextEncoder().encode('email=ada%40example.com') }, LIMITS);
    expect(made.status).toBe(200);
    const customer = JSON.parse(text(made.body)) as { id: string; object: string; email: string };
    expect([customer.object, customer.email]).toEqual(['customer', 'ada@example.com']);

    const listed = await outbound({ method: 'GET', url: 'https://api.stripe.com/v1/customers?limit=10', headers: key }, LIMITS);
    expect(listed.status).toBe(200);
    expect((JSON.parse(text(listed.body)) as { data: { id: string }[] }).data.map((c) => c.id)).toEqual([customer.id]);

    // The same customer, in the served world, asked at its world URL.
    const there = await fetch(`${server.worldUrl}/stripe/v1/customers/${customer.id}`, { headers: { 'x-kit-token': TOKENS.token, ...key } });
    expect(there.status).toBe(200);
    expect(((await there.json()) as { email: string }).email).toBe('ada@example.com');
  });

  it("fails without the proxy's credential (407) or without trusting the world's CA, and names neither secret", async () => {
    const wrong = createNodeOutbound({ loopback: false, proxy: { url: withToken('tok_wrong-token-0123456789abcdefghij'), ca: ca.certPem } });
    const e407 = await refusal(wrong({ method: 'GET', url: 'https://api.stripe.com/v1/customers', headers: { authorization: 'Bearer sk_test_outbound' } }, LIMITS));
    expect([e407.code, e407.message]).toEqual(['outbound_failed', 'GET https://api.stripe.com: the proxy refused the tunnel (407)']);

    const untrusting = createNodeOutbound({ loopback: false, proxy: { url: withToken(TOKENS.token) } });
    const eTls = await refusal(untrusting({ method: 'GET', url: 'https://api.stripe.com/v1/customers', headers: { authorization: 'Bearer sk_test_outbound' } }, LIMITS));
    expect(eTls.code).toBe('outbound_failed');
    expect(eTls.message).toMatch(/^GET https:\/\/api\.stripe\.com: the TLS handshake failed \([A-Z_]+\)$/);
    expect(`${e407.message} ${eTls.message}`).not.toMatch(/tok_|sk_test/);
  });

  it('still refuses a destination the URL check refuses, before the proxy is asked', async () => {
    let asked = 0;
    const counting = createNetServer((socket) => {
      asked++;
      socket.destroy();
    });
    const port = await listen(counting);
    try {
      const outbound = createNodeOutbound({ loopback: false, proxy: { url: `http://kit:x@127.0.0.1:${port}` } });
      for (const url of ['https://169.254.169.254/', 'https://metadata.google.internal/', 'http://api.stripe.com/', 'https://10.0.0.1/', 'https://api.stripe.com@10.0.0.1/']) {
        expect((await refusal(outbound({ method: 'GET', url, headers: {} }, LIMITS))).code).toBe('destination_refused');
      }
      // The same outbound does reach the proxy for an allowed destination (which this listener cuts).
      expect((await refusal(outbound({ method: 'GET', url: 'https://api.stripe.com/', headers: {} }, LIMITS))).code).toBe('outbound_failed');
      expect(asked).toBe(1);
    } finally {
      await close(counting);
    }
  });

  it('sends an http destination to the proxy in absolute form, with the Proxy-Authorization of its URL', async () => {
    const asked: Seen[] = [];
    const forwardProxy = createServer((req, res) => {
      asked.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: '' });
      req.resume();
      res.end('via proxy');
    });
    const port = await listen(forwardProxy);
    try {
      const outbound = createNodeOutbound({ loopback: true, proxy: { url: `http://us%40er:p%3Ass@127.0.0.1:${port}` }, resolve: noResolve });
      const answer = await outbound({ method: 'GET', url: 'http://localhost:9/refresh?page=2', headers: { 'proxy-authorization': 'Basic caller' } }, LIMITS);
      expect(text(answer.body)).toBe('via proxy');
      expect(asked.map((a) => [a.url, a.headers.host, a.headers['proxy-authorization']])).toEqual([['http://localhost:9/refresh?page=2', 'localhost:9', `Basic ${Buffer.from('us@er:p:ss').toString('base64')}`]]);
    } finally {
      await close(forwardProxy);
    }
  });

  it('takes an http:// proxy URL only, and never echoes it', () => {
    for (const url of ['https://kit:tok_secret@proxy.example:8443', 'not a url tok_secret', 'socks5://kit:tok_secret@127.0.0.1:1080']) {
      expect(() => createNodeOutbound({ loopback: false, proxy: { url } })).toThrow('the outbound proxy must be an http://[user:password@]host:port URL');
    }
  });
});
