/**
 * The CONNECT proxy driven by curl (OpenSSL, not Node) in front of the single-world server
 * with an echo world: what a Python, Go or shell app sees with HTTPS_PROXY set.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpsServer } from 'node:https';
import type { Server as HttpsServer } from 'node:https';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EchoBody, EchoWorld } from '../echo-world.js';
import { echoWorld } from '../echo-world.js';
import { startSingleWorldServer } from '../single-world.js';
import type { SingleWorldServer } from '../single-world.js';
import { createMemoryCa } from './ca.js';
import { parseAuthority, startConnectProxy } from './proxy.js';
import type { ConnectProxy } from './proxy.js';

const tokens = { token: 'tok_proxy-write-token-0123456789abcdef', readToken: 'tok_r_proxy-read-token-0123456789abcdef' };
let world: EchoWorld;
let server: SingleWorldServer;
let proxyUrl: string;
let dir: string;
let caFile: string;
let outside: HttpsServer;
let outsidePort: number;
let outsideCaFile: string;
const outsideSeen: Record<string, string | string[] | undefined>[] = [];

interface CurlResult {
  code: number;
  stdout: string;
  stderr: string;
}

function curl(args: string[]): Promise<CurlResult> {
  return new Promise((resolve) => {
    // No proxy variables from the environment: each test names its proxy.
    const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir };
    execFile('curl', ['-sS', '--max-time', '20', ...args], { env, encoding: 'utf8' }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
    });
  });
}

const viaProxy = (token: string | null): string[] => ['--proxy', proxyUrl, ...(token === null ? [] : ['--proxy-user', `kit:${token}`])];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kit-proxy-'));
  world = echoWorld('shop');
  server = await startSingleWorldServer({
    world,
    org: 'local',
    worldName: 'shop',
    tokens,
    twins: [
      { vendor: 'stripe', requestScopes: [], protocol: 'http', hosts: ['api.stripe.com'] },
      { vendor: 'hello', requestScopes: [], hosts: ['api.hello.test'] },
    ],
    ca: await createMemoryCa({ label: 'kit world local/shop', hosts: ['api.stripe.com', 'api.hello.test'] }),
    proxyPort: 0,
  });
  const manifest = (await (await fetch(`${server.worldUrl}/.well-known/kit-world`, { headers: { 'x-kit-token': tokens.token } })).json()) as {
    ca: { pem: string };
    proxy: { url: string; hosts: string[] };
  };
  proxyUrl = manifest.proxy.url;
  caFile = join(dir, 'world-ca.pem');
  await writeFile(caFile, manifest.ca.pem);

  // "The outside": an HTTPS server with a certificate from a CA the world knows nothing of.
  const outsideCa = await createMemoryCa({ label: 'outside CA', hosts: ['localhost'] });
  outsideCaFile = join(dir, 'outside-ca.pem');
  await writeFile(outsideCaFile, outsideCa.certPem);
  outside = createHttpsServer({ SNICallback: (name, cb) => outsideCa.contextFor(name).then((c) => cb(null, c), (e: Error) => cb(e)) }, (req, res) => {
    outsideSeen.push(req.headers);
    res.setHeader('content-type', 'text/plain');
    res.end(`outside says hi to ${req.url ?? ''}`);
  });
  await new Promise<void>((resolve) => outside.listen(0, '127.0.0.1', resolve));
  const address = outside.address();
  outsidePort = typeof address === 'object' && address !== null ? address.port : 0;
});

afterAll(async () => {
  await server?.close();
  outside?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the CONNECT proxy', () => {
  it('answers https://api.stripe.com from the twin, trusted with the manifest CA alone, with the app Authorization kept', async () => {
    const r = await curl([...viaProxy(tokens.token), '--cacert', caFile, '-H', 'authorization: Bearer sk_test_app_key', 'https://api.stripe.com/v1/customers?limit=3']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const echo = JSON.parse(r.stdout) as EchoBody;
    expect(echo).toMatchObject({ surface: 'vendor', method: 'GET', path: '/stripe/v1/customers', query: 'limit=3', scope: 'write' });
    expect(echo.headers['authorization']).toBe('Bearer sk_test_app_key');
    expect(echo.headers['host']).toBe('api.stripe.com');
    // The twin's links start where the app addressed it: the vendor's own origin.
    expect(echo.headers['x-kit-twin-url']).toBe('https://api.stripe.com');
    // The host took the credential and stripped it before the twin saw the request.
    expect(echo.headers['x-twins-key']).toBeUndefined();
    expect(echo.headers['x-kit-auth']).toBeUndefined();
  });

  it('carries request bodies and several requests on one kept-alive tunnel', async () => {
    const r = await curl([
      ...viaProxy(tokens.token),
      '--cacert',
      caFile,
      '-d',
      'email=ada@example.com',
      'https://api.stripe.com/v1/customers',
      '--next',
      ...viaProxy(tokens.token),
      '--cacert',
      caFile,
      'https://api.hello.test/v1/greetings',
    ]);
    expect(r.code).toBe(0);
    const [first, second] = r.stdout.split(/(?<=\})(?=\{)/).map((s) => JSON.parse(s) as EchoBody);
    expect(first).toMatchObject({ method: 'POST', path: '/stripe/v1/customers', bodyLength: 'email=ada@example.com'.length });
    expect(second).toMatchObject({ method: 'GET', path: '/hello/v1/greetings' });
  });

  it('refuses a missing or wrong credential with 407 and a Basic challenge', async () => {
    for (const token of [null, 'tok_wrong']) {
      const r = await curl([...viaProxy(token), '--cacert', caFile, '-o', '/dev/null', '-w', '%{http_connect}', 'https://api.stripe.com/v1/customers']);
      expect(r.stdout).toBe('407');
      expect(r.code).not.toBe(0);
    }
    const raw = await rawConnect('CONNECT api.stripe.com:443 HTTP/1.1\r\nHost: api.stripe.com:443\r\n\r\n');
    expect(raw).toMatch(/^HTTP\/1\.1 407 /);
    expect(raw.toLowerCase()).toContain('proxy-authenticate: basic realm="kit world local/shop"');
    expect(raw).toContain('"code":"unauthenticated"');
  });

  it('lets the read token read through the proxy and refuses its writes as the server does', async () => {
    const read = await curl([...viaProxy(tokens.readToken), '--cacert', caFile, 'https://api.stripe.com/v1/customers']);
    expect((JSON.parse(read.stdout) as EchoBody).scope).toBe('read');
    const write = await curl([...viaProxy(tokens.readToken), '--cacert', caFile, '-d', 'x=1', '-w', '\n%{http_code}', 'https://api.stripe.com/v1/customers']);
    const [body, status] = write.stdout.split('\n');
    expect(status).toBe('403');
    expect(JSON.parse(body as string)).toMatchObject({ error: { code: 'read_only' } });
  });

  it("refuses a body over the server's limit with 413, the world never called", async () => {
    const big = join(dir, 'big.bin');
    await writeFile(big, Buffer.alloc(4 * 1024 * 1024 + 1, 0x61));
    const before = world.received.length;
    const r = await curl([...viaProxy(tokens.token), '--cacert', caFile, '--data-binary', `@${big}`, '-w', '\n%{http_code}', 'https://api.stripe.com/v1/files']);
    const [body, status] = r.stdout.split('\n');
    expect(status).toBe('413');
    expect(JSON.parse(body as string)).toMatchObject({ error: { code: 'body_too_large' } });
    expect(world.received.length).toBe(before);
  });

  it('tunnels a host no twin models untouched: its own certificate, no token, nothing through the world', async () => {
    const before = world.received.length;
    const r = await curl([...viaProxy(tokens.token), '-v', '--cacert', outsideCaFile, '-H', 'authorization: Bearer real_key', `https://localhost:${outsidePort}/ping`]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('outside says hi to /ping');
    expect(r.stderr).toContain(`CONNECT localhost:${outsidePort}`);
    expect(outsideSeen.at(-1)?.['authorization']).toBe('Bearer real_key');
    expect(outsideSeen.at(-1)?.['x-twins-key']).toBeUndefined();
    expect(world.received.length).toBe(before);
    // The world's CA does not vouch for the outside host: the proxy did not terminate it.
    const mitm = await curl([...viaProxy(tokens.token), '--cacert', caFile, `https://localhost:${outsidePort}/ping`]);
    expect(mitm.code).toBe(60);
  });

  it('answers an unreachable host 502, a malformed target 400 and a plain request 405, and keeps serving', async () => {
    const auth = `Proxy-Authorization: Basic ${Buffer.from(`kit:${tokens.token}`).toString('base64')}\r\n`;
    expect(await rawConnect(`CONNECT 127.0.0.1:1 HTTP/1.1\r\n${auth}\r\n`)).toMatch(/^HTTP\/1\.1 502 [^]*"code":"bad_gateway"/);
    expect(await rawConnect(`CONNECT api.stripe.com HTTP/1.1\r\n${auth}\r\n`)).toMatch(/^HTTP\/1\.1 400 [^]*CONNECT needs host:port/);
    expect(await rawConnect(`CONNECT not a target HTTP/1.1\r\n${auth}\r\n`)).toMatch(/^HTTP\/1\.1 400 /);
    expect(await rawConnect(`GET http://api.stripe.com/v1/customers HTTP/1.1\r\nHost: api.stripe.com\r\n${auth}\r\n`)).toMatch(/^HTTP\/1\.1 405 /);
    // Garbage instead of a TLS handshake costs only that connection.
    expect(await rawConnect(`CONNECT api.stripe.com:443 HTTP/1.1\r\n${auth}\r\n`, 'this is not TLS\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 /);
    const r = await curl([...viaProxy(tokens.token), '--cacert', caFile, 'https://api.stripe.com/v1/customers']);
    expect((JSON.parse(r.stdout) as EchoBody).path).toBe('/stripe/v1/customers');
  });
});

/** A proxy of its own in front of an echo world, twinning api.stripe.com, with `limits` set. */
async function stripeProxy(limits: Pick<Parameters<typeof startConnectProxy>[0], 'handshakeTimeoutMs' | 'innerTimeouts'>, caHosts = ['api.stripe.com']): Promise<ConnectProxy> {
  const { createSingleWorldCore } = await import('../single-world.js');
  const core = createSingleWorldCore({ world: echoWorld('w'), org: 'local', tokens, twins: [{ vendor: 'stripe', requestScopes: [] }] });
  return startConnectProxy({
    port: 0,
    ca: await createMemoryCa({ hosts: caHosts }),
    twins: new Map([['api.stripe.com', 'stripe']]),
    authenticate: (t) => t === tokens.token,
    handler: core.handler,
    vendorPath: core.vendorPath,
    maxBodyBytes: 1024,
    realm: 'test',
    ...limits,
  });
}

describe('a twinned host the CA may not vouch for', () => {
  it('is answered 502 bad_gateway naming why, not with a leaf every client would refuse', async () => {
    const proxy = await stripeProxy({}, ['api.github.com']);
    try {
      const socket = netConnect({ host: '127.0.0.1', port: proxy.port });
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      socket.on('error', () => undefined);
      socket.write(`CONNECT api.stripe.com:443 HTTP/1.1\r\nProxy-Authorization: Basic ${Buffer.from(`k:${tokens.token}`).toString('base64')}\r\n\r\n`);
      await closed;
      expect(text).toMatch(/^HTTP\/1\.1 502 /);
      const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { error: { code: string; message: string } };
      expect(body.error).toEqual({ code: 'bad_gateway', message: 'no certificate could be issued for api.stripe.com: api.stripe.com is outside the names this CA may vouch for (api.github.com)' });
    } finally {
      await proxy.close();
    }
  });
});

describe('a stalled client', () => {
  it('is dropped when it never finishes the TLS handshake of a twinned host', async () => {
    const proxy = await stripeProxy({ handshakeTimeoutMs: 100 });
    try {
      const socket = netConnect({ host: '127.0.0.1', port: proxy.port });
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
      const closed = new Promise<'closed'>((resolve) => socket.on('close', () => resolve('closed')));
      socket.on('error', () => undefined);
      socket.write(`CONNECT api.stripe.com:443 HTTP/1.1\r\nProxy-Authorization: Basic ${Buffer.from(`k:${tokens.token}`).toString('base64')}\r\n\r\n`);
      // Nothing more is sent; the proxy ends it (the test's own timeout is the bound).
      expect(await closed).toBe('closed');
      expect(text).toMatch(/^HTTP\/1\.1 200 /);
    } finally {
      await proxy.close();
    }
  });
});

describe('a stalled decrypted connection', () => {
  /** A proxy with short limits, and a TLS connection to the twinned host through it. */
  async function decrypted(): Promise<{ tls: import('node:tls').TLSSocket; closed: Promise<number>; close(): Promise<void> }> {
    const { connect: tlsConnect } = await import('node:tls');
    const proxy = await stripeProxy({ innerTimeouts: { headersMs: 400, requestMs: 2000, idleMs: 600, checkEveryMs: 100 } });
    const socket = netConnect({ host: '127.0.0.1', port: proxy.port });
    socket.on('error', () => undefined);
    socket.write(`CONNECT api.stripe.com:443 HTTP/1.1\r\nProxy-Authorization: Basic ${Buffer.from(`k:${tokens.token}`).toString('base64')}\r\n\r\n`);
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    const tls = tlsConnect({ socket, servername: 'api.stripe.com', rejectUnauthorized: false });
    tls.on('error', () => undefined);
    await new Promise<void>((resolve) => tls.once('secureConnect', () => resolve()));
    const started = Date.now();
    const closed = new Promise<number>((resolve) => tls.once('close', () => resolve(Date.now() - started)));
    return { tls, closed, close: () => proxy.close() };
  }

  it('is closed when its request head stalls, when it drips the head a byte at a time, and when it sends nothing', async () => {
    const partial = await decrypted();
    try {
      partial.tls.write('GET /v1/customers HTTP/1.1\r\nHost: api.stripe.com\r\n');
      expect(await partial.closed).toBeLessThan(1500);
    } finally {
      await partial.close();
    }
    const drip = await decrypted();
    const head = 'GET /v1/customers HTTP/1.1\r\nHost: api.stripe.com\r\nX-Slow: ' + 'x'.repeat(200);
    let at = 0;
    // A byte every 50 ms: never idle, but the head is not done within 400 ms.
    const timer = setInterval(() => {
      if (at < head.length && !drip.tls.destroyed) drip.tls.write(head[at++] as string);
    }, 50);
    try {
      expect(await drip.closed).toBeLessThan(1500);
    } finally {
      clearInterval(timer);
      await drip.close();
    }
    const idle = await decrypted();
    try {
      expect(await idle.closed).toBeLessThan(1500);
    } finally {
      await idle.close();
    }
  });
});

describe('parseAuthority', () => {
  it('reads host:port and bracketed IPv6, and nothing else', () => {
    expect(parseAuthority('API.Stripe.com:443')).toEqual({ host: 'api.stripe.com', port: 443 });
    expect(parseAuthority('[::1]:8443')).toEqual({ host: '::1', port: 8443 });
    expect(parseAuthority('api.stripe.com.:443')).toEqual({ host: 'api.stripe.com', port: 443 });
    for (const bad of ['api.stripe.com', 'api.stripe.com:0', 'api.stripe.com:65536', '.:443', '[nope]:443', 'a b:443', ':443', 'x:443/']) {
      expect(parseAuthority(bad)).toBeNull();
    }
  });
});

/** Sends raw bytes to the proxy and answers everything it gets until it closes (or 2 s pass). */
function rawConnect(head: string, after?: string): Promise<string> {
  const { hostname, port } = new URL(proxyUrl);
  return new Promise((resolve) => {
    const socket = netConnect({ host: hostname, port: Number(port) });
    let text = '';
    const done = (): void => {
      socket.destroy();
      resolve(text);
    };
    const timer = setTimeout(done, 2000);
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      if (after !== undefined && text.includes('\r\n\r\n')) {
        socket.write(after);
        after = undefined;
      }
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(text);
    });
    socket.on('error', () => undefined);
    socket.write(head);
  });
}
