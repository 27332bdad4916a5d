/**
 * The CONNECT proxy driven by curl (OpenSSL, not Node) in front of the single-world server
 * with an echo world: what a Python, Go or shell app sees with HTTPS_PROXY set.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpsServer } from 'node:https';
import type { Server as HttpsServer } from 'node:https';
import { connect as netConnect, createServer as createNetServer } from 'node:net';
import type { Server as NetServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EchoBody, EchoWorld } from '../../echo-world.js';
import { echoWorld } from '../../echo-world.js';
import { startSingleWorldServer } from '../../single-world.js';
import type { SingleWorldServer } from '../../single-world.js';
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
/** A loopback TCP service that echoes what it gets and counts its connections: what a tunnel must not reach unasked. */
let echo: NetServer;
let echoPort: number;
let echoConnections = 0;

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

  echo = createNetServer((s) => {
    echoConnections++;
    s.on('error', () => undefined);
    s.pipe(s);
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  const echoAddress = echo.address();
  echoPort = typeof echoAddress === 'object' && echoAddress !== null ? echoAddress.port : 0;
});

afterAll(async () => {
  await server?.close();
  outside?.close();
  echo?.close();
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
    // The outside listens on loopback, which no tunnel reaches by default: this proxy allows its port.
    const { proxy, world: own } = await stripeProxy({ allowTunnels: [{ address: '127.0.0.1', port: outsidePort }] });
    try {
      const via = ['--proxy', `http://127.0.0.1:${proxy.port}`, '--proxy-user', `kit:${tokens.token}`];
      const r = await curl([...via, '-v', '--cacert', outsideCaFile, '-H', 'authorization: Bearer real_key', `https://localhost:${outsidePort}/ping`]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('outside says hi to /ping');
      expect(r.stderr).toContain(`CONNECT localhost:${outsidePort}`);
      expect(outsideSeen.at(-1)?.['authorization']).toBe('Bearer real_key');
      expect(outsideSeen.at(-1)?.['x-twins-key']).toBeUndefined();
      expect(own.received.length).toBe(0);
      // The world's CA does not vouch for the outside host: the proxy did not terminate it.
      const mitm = await curl([...via, '--cacert', caFile, `https://localhost:${outsidePort}/ping`]);
      expect(mitm.code).toBe(60);
    } finally {
      await proxy.close();
    }
  });

  it('answers a malformed target 400 and a plain request 405, and keeps serving', async () => {
    const auth = `Proxy-Authorization: Basic ${Buffer.from(`kit:${tokens.token}`).toString('base64')}\r\n`;
    expect(await rawConnect(`CONNECT api.stripe.com HTTP/1.1\r\n${auth}\r\n`)).toMatch(/^HTTP\/1\.1 400 [^]*CONNECT needs host:port/);
    expect(await rawConnect(`CONNECT not a target HTTP/1.1\r\n${auth}\r\n`)).toMatch(/^HTTP\/1\.1 400 /);
    expect(await rawConnect(`GET http://api.stripe.com/v1/customers HTTP/1.1\r\nHost: api.stripe.com\r\n${auth}\r\n`)).toMatch(/^HTTP\/1\.1 405 /);
    // Garbage instead of a TLS handshake costs only that connection.
    expect(await rawConnect(`CONNECT api.stripe.com:443 HTTP/1.1\r\n${auth}\r\n`, 'this is not TLS\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 /);
    const r = await curl([...viaProxy(tokens.token), '--cacert', caFile, 'https://api.stripe.com/v1/customers']);
    expect((JSON.parse(r.stdout) as EchoBody).path).toBe('/stripe/v1/customers');
  });
});

type ProxyOptions = Parameters<typeof startConnectProxy>[0];

/** A proxy of its own in front of an echo world, twinning api.stripe.com, with `limits` set. */
async function stripeProxy(limits: Partial<Omit<ProxyOptions, 'ca' | 'twins' | 'scopeOf' | 'handler' | 'vendorPath'>>, caHosts = ['api.stripe.com']): Promise<{ proxy: ConnectProxy; world: EchoWorld }> {
  const { createSingleWorldCore } = await import('../../single-world.js');
  const own = echoWorld('w');
  const core = createSingleWorldCore({ world: own, org: 'local', tokens, twins: [{ vendor: 'stripe', requestScopes: [] }] });
  const proxy = await startConnectProxy({
    port: 0,
    ca: await createMemoryCa({ hosts: caHosts }),
    twins: new Map([['api.stripe.com', 'stripe']]),
    scopeOf: (t) => (t === tokens.token ? 'write' : t === tokens.readToken ? 'read' : null),
    handler: core.handler,
    vendorPath: core.vendorPath,
    maxBodyBytes: 1024,
    realm: 'test',
    ...limits,
  });
  return { proxy, world: own };
}

describe('a twinned host the CA may not vouch for', () => {
  it('is answered 502 bad_gateway naming why, not with a leaf every client would refuse', async () => {
    const { proxy } = await stripeProxy({}, ['api.github.com']);
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
    const { proxy } = await stripeProxy({ handshakeTimeoutMs: 100 });
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
    const { proxy } = await stripeProxy({ innerTimeouts: { headersMs: 400, requestMs: 2000, idleMs: 600, checkEveryMs: 100 } });
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

describe('what a tunnel may reach', () => {
  const proxyPort = (): number => Number(new URL(proxyUrl).port);

  it('refuses a tunnel to a loopback address, even through a name that resolves to one', async () => {
    const before = echoConnections;
    // Names the system resolver turns into loopback: localhost, and the numeric forms inet_aton reads.
    const targets = ['127.0.0.1', '127.0.0.2', '0.0.0.0', 'localhost', '2130706433', '127.1', '0x7f.1', '[::1]', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[::]'];
    for (const target of targets) {
      const write = await dial(proxyPort(), `CONNECT ${target}:${echoPort} HTTP/1.1\r\n${basic(tokens.token)}\r\n`).closed;
      expect([target, statusOf(write), errorOf(write)?.code]).toEqual([target, 403, 'tunnel_refused']);
      const read = await dial(proxyPort(), `CONNECT ${target}:${echoPort} HTTP/1.1\r\n${basic(tokens.readToken)}\r\n`).closed;
      expect([target, statusOf(read), errorOf(read)?.code]).toEqual([target, 403, 'forbidden']);
    }
    const named = await dial(proxyPort(), `CONNECT localhost:${echoPort} HTTP/1.1\r\n${basic(tokens.token)}\r\n`).closed;
    expect(errorOf(named)?.message).toMatch(/^localhost \((127\.0\.0\.1|::1)\) is a loopback address: the proxy tunnels only to public addresses and the world's own server$/);
    // What a client sees: curl's CONNECT answered 403.
    const r = await curl([...viaProxy(tokens.token), '-o', '/dev/null', '-w', '%{http_connect}', `https://localhost:${echoPort}/`]);
    expect(r.stdout).toBe('403');
    expect(echoConnections).toBe(before);
  });

  it('refuses link-local (cloud metadata), private, shared, multicast, broadcast and reserved addresses, as literals and behind names', async () => {
    const names: Record<string, string[]> = {
      'metadata.test': ['169.254.169.254'],
      'intranet.test': ['10.0.0.5'],
      'office.test': ['192.168.1.20'],
      'docker.test': ['172.17.0.1'],
      'cgnat.test': ['100.64.0.1'],
      'mapped.test': ['::ffff:192.168.1.1'],
      'nat64.test': ['64:ff9b::a9fe:a9fe'],
      'sixtofour.test': ['2002:c0a8:101::1'],
      'ula.test': ['fd00::1'],
      'linklocal6.test': ['fe80::1'],
      'multicast.test': ['ff02::1'],
    };
    const { proxy } = await stripeProxy({ lookup: async (name) => (names[name] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 })) });
    try {
      const literals = ['169.254.169.254', '[fe80::1]', '10.0.0.1', '172.31.0.1', '192.168.0.1', '100.64.0.1', '224.0.0.1', '255.255.255.255', '240.0.0.1', '[fc00::1]', '[ff02::1]', '[64:ff9b::a9fe:a9fe]', '[2002:a00:1::]'];
      for (const target of [...literals, ...Object.keys(names)]) {
        const text = await dial(proxy.port, `CONNECT ${target}:80 HTTP/1.1\r\n${basic(tokens.token)}\r\n`).closed;
        expect([target, statusOf(text), errorOf(text)?.code]).toEqual([target, 403, 'tunnel_refused']);
      }
      const metadata = await dial(proxy.port, `CONNECT metadata.test:80 HTTP/1.1\r\n${basic(tokens.token)}\r\n`).closed;
      expect(errorOf(metadata)?.message).toBe("metadata.test (169.254.169.254) is a link-local address: the proxy tunnels only to public addresses and the world's own server");
      const mapped = await dial(proxy.port, `CONNECT mapped.test:80 HTTP/1.1\r\n${basic(tokens.token)}\r\n`).closed;
      expect(errorOf(mapped)?.message).toMatch(/^mapped\.test \(192\.168\.1\.1\) is a private address/);
    } finally {
      await proxy.close();
    }
  });

  it('connects to the very address it judged, resolving once per CONNECT: a rebinding resolver cannot swap it', async () => {
    let asked = 0;
    // The first answer is the allowed address; any later one would be a private address.
    const lookup = async (): Promise<{ address: string; family: number }[]> => (++asked === 1 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '10.0.0.1', family: 4 }]);
    const { proxy } = await stripeProxy({ lookup, allowTunnels: [{ address: '127.0.0.1', port: echoPort }] });
    try {
      const tunnel = dial(proxy.port, `CONNECT rebind.test:${echoPort} HTTP/1.1\r\n${basic(tokens.token)}\r\n`);
      await tunnel.answered;
      tunnel.socket.write('ping');
      await until(() => tunnel.text().endsWith('ping'));
      expect(statusOf(tunnel.text())).toBe(200);
      expect(asked).toBe(1);
      tunnel.socket.destroy();
      // The next CONNECT asks again, and is judged by that answer.
      const second = await dial(proxy.port, `CONNECT rebind.test:${echoPort} HTTP/1.1\r\n${basic(tokens.token)}\r\n`).closed;
      expect([statusOf(second), errorOf(second)?.code, asked]).toEqual([403, 'tunnel_refused', 2]);
    } finally {
      await proxy.close();
    }
  });

  it("lets the world's token through an allowance to that address and port only, and never the read token", async () => {
    const { proxy } = await stripeProxy({ allowTunnels: [{ address: '127.0.0.1', port: echoPort }] });
    try {
      const tunnel = dial(proxy.port, `CONNECT 127.0.0.1:${echoPort} HTTP/1.1\r\n${basic(tokens.token)}\r\n`);
      await tunnel.answered;
      tunnel.socket.write('ping');
      await until(() => tunnel.text().endsWith('ping'));
      tunnel.socket.destroy();
      const otherPort = await dial(proxy.port, `CONNECT 127.0.0.1:${outsidePort} HTTP/1.1\r\n${basic(tokens.token)}\r\n`).closed;
      expect([statusOf(otherPort), errorOf(otherPort)?.code]).toEqual([403, 'tunnel_refused']);
      const read = await dial(proxy.port, `CONNECT 127.0.0.1:${echoPort} HTTP/1.1\r\n${basic(tokens.readToken)}\r\n`).closed;
      expect([statusOf(read), errorOf(read)?.code]).toEqual([403, 'forbidden']);
      expect(errorOf(read)?.message).toContain('NO_PROXY');
    } finally {
      await proxy.close();
    }
  });

  it("lets either token tunnel to the world's own server (the world URL through HTTPS_PROXY), not to the proxy's own port", async () => {
    for (const token of [tokens.token, tokens.readToken]) {
      const tunnel = dial(proxyPort(), `CONNECT 127.0.0.1:${server.port} HTTP/1.1\r\n${basic(token)}\r\n`);
      await tunnel.answered;
      tunnel.socket.write(`GET /local/shop/.well-known/kit-world HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nx-kit-token: ${token}\r\nConnection: close\r\n\r\n`);
      const text = await tunnel.closed;
      expect(text).toMatch(/^HTTP\/1\.1 200 Connection Established\r\n\r\nHTTP\/1\.1 200 /);
      expect(text).toContain(`"KIT_TWINS_KEY":"${token}"`);
      const loop = await dial(proxyPort(), `CONNECT 127.0.0.1:${proxyPort()} HTTP/1.1\r\n${basic(token)}\r\n`).closed;
      expect(statusOf(loop)).toBe(403);
    }
  });

  it('answers an unreachable host, a name that does not resolve and a resolver that never answers 502 bad_gateway', async () => {
    const lookup = (name: string): Promise<{ address: string; family: number }[]> =>
      name === 'slow.test' ? new Promise(() => undefined) : Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' }));
    const { proxy } = await stripeProxy({ lookup, connectTimeoutMs: 300, allowTunnels: [{ address: '127.0.0.1', port: 1 }] });
    try {
      const refused = await dial(proxy.port, `CONNECT 127.0.0.1:1 HTTP/1.1\r\n${basic(tokens.token)}\r\n`).closed;
      expect([statusOf(refused), errorOf(refused)]).toEqual([502, { code: 'bad_gateway', message: 'cannot reach 127.0.0.1:1: ECONNREFUSED' }]);
      const unknown = await dial(proxy.port, `CONNECT nowhere.test:443 HTTP/1.1\r\n${basic(tokens.token)}\r\n`).closed;
      expect([statusOf(unknown), errorOf(unknown)]).toEqual([502, { code: 'bad_gateway', message: 'cannot resolve nowhere.test: ENOTFOUND' }]);
      const slow = await dial(proxy.port, `CONNECT slow.test:443 HTTP/1.1\r\n${basic(tokens.token)}\r\n`).closed;
      expect([statusOf(slow), errorOf(slow)]).toEqual([502, { code: 'bad_gateway', message: 'cannot reach slow.test:443: no connection within 300 ms' }]);
      expect(proxy.connections).toBeLessThanOrEqual(1);
    } finally {
      await proxy.close();
    }
  });
});

describe('a slow, idle or refused client', () => {
  it('is closed when it never sends its CONNECT head, or drips it a byte at a time', async () => {
    const { proxy } = await stripeProxy({ headTimeoutMs: 300 });
    try {
      const silent = dial(proxy.port);
      expect(await silent.closed).toBe('');
      const drip = dial(proxy.port);
      const head = `CONNECT api.stripe.com:443 HTTP/1.1\r\nX-Slow: ${'x'.repeat(200)}`;
      let at = 0;
      // A byte every 20 ms: never idle, but the head is never done.
      const timer = setInterval(() => {
        if (at < head.length && !drip.socket.destroyed) drip.socket.write(head[at++] as string);
      }, 20);
      try {
        expect(await drip.closed).toBe('');
      } finally {
        clearInterval(timer);
      }
      await until(() => proxy.connections === 0);
    } finally {
      await proxy.close();
    }
  });

  it('is cut after a refusal even when it keeps its side of the connection open', async () => {
    const { proxy } = await stripeProxy({});
    try {
      const refusals = [`CONNECT api.stripe.com:443 HTTP/1.1\r\n\r\n`, `CONNECT 127.0.0.1:${echoPort} HTTP/1.1\r\n${basic(tokens.token)}\r\n`, `CONNECT nope HTTP/1.1\r\n${basic(tokens.token)}\r\n`];
      const held = refusals.map((head) => dial(proxy.port, head, { allowHalfOpen: true }));
      // Each got its answer and the proxy's FIN; none of them closes its own side.
      await Promise.all(held.map((h) => h.ended));
      expect(held.map((h) => statusOf(h.text()))).toEqual([407, 403, 400]);
      expect(held.every((h) => !h.socket.destroyed)).toBe(true);
      await until(() => proxy.connections === 0);
      for (const h of held) h.socket.destroy();
    } finally {
      await proxy.close();
    }
  });

  it('has its tunnel closed after tunnelIdleMs without a byte either way, and kept while bytes flow', async () => {
    const { proxy } = await stripeProxy({ tunnelIdleMs: 1000, allowTunnels: [{ address: '127.0.0.1', port: echoPort }] });
    try {
      const tunnel = dial(proxy.port, `CONNECT 127.0.0.1:${echoPort} HTTP/1.1\r\n${basic(tokens.token)}\r\n`);
      await tunnel.answered;
      // Three idle limits' worth of a byte every 50 ms: the tunnel stays.
      for (let i = 0; i < 60; i++) {
        tunnel.socket.write('.');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(tunnel.socket.destroyed).toBe(false);
      await until(() => tunnel.text().endsWith('.'.repeat(60)));
      // Then nothing: the proxy closes it (the test's own timeout is the bound).
      await tunnel.closed;
      await until(() => proxy.connections === 0);
    } finally {
      await proxy.close();
    }
  });
});

describe('the caps', () => {
  it('refuses a credential more than maxTunnelsPerCredential tunnels and decrypted connections with 429 too_many_tunnels; the other credential is not affected', async () => {
    const { proxy } = await stripeProxy({ maxTunnelsPerCredential: 2, allowTunnels: [{ address: '127.0.0.1', port: echoPort }] });
    const open: Dialled[] = [];
    try {
      open.push(dial(proxy.port, `CONNECT 127.0.0.1:${echoPort} HTTP/1.1\r\n${basic(tokens.token)}\r\n`));
      open.push(dial(proxy.port, `CONNECT api.stripe.com:443 HTTP/1.1\r\n${basic(tokens.token)}\r\n`));
      await Promise.all(open.map((o) => o.answered));
      expect(open.map((o) => statusOf(o.text()))).toEqual([200, 200]);
      for (const target of [`127.0.0.1:${echoPort}`, 'api.stripe.com:443']) {
        const over = await dial(proxy.port, `CONNECT ${target} HTTP/1.1\r\n${basic(tokens.token)}\r\n`).closed;
        expect([statusOf(over), errorOf(over)?.code]).toEqual([429, 'too_many_tunnels']);
      }
      const read = dial(proxy.port, `CONNECT api.stripe.com:443 HTTP/1.1\r\n${basic(tokens.readToken)}\r\n`);
      open.push(read);
      await read.answered;
      expect(statusOf(read.text())).toBe(200);
      // A tunnel closed frees its place.
      open[0]?.socket.destroy();
      await until(() => proxy.connections === 2);
      const again = dial(proxy.port, `CONNECT 127.0.0.1:${echoPort} HTTP/1.1\r\n${basic(tokens.token)}\r\n`);
      open.push(again);
      await again.answered;
      expect(statusOf(again.text())).toBe(200);
    } finally {
      for (const o of open) o.socket.destroy();
      await proxy.close();
    }
  });

  it('holds at most maxConnections under a flood of silent connections; the rest are answered 503 proxy_busy or cut', async () => {
    const { proxy } = await stripeProxy({ maxConnections: 10, headTimeoutMs: 60_000 });
    const flood: Dialled[] = [];
    try {
      let most = 0;
      for (let i = 0; i < 300; i++) {
        flood.push(dial(proxy.port));
        if (i % 50 === 49) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          most = Math.max(most, proxy.connections);
        }
      }
      // Every connection past the first ten is closed by the proxy: after a 503 if it could still be told.
      const rest = flood.slice(10);
      await Promise.all(rest.map((f) => f.closed));
      most = Math.max(most, proxy.connections);
      expect(most).toBe(10);
      const answers = new Set(rest.map((f) => (f.text() === '' ? 'cut' : `${statusOf(f.text())} ${errorOf(f.text())?.code}`)));
      expect([...answers].filter((a) => a !== 'cut')).toEqual(['503 proxy_busy']);
      expect(flood.slice(0, 10).every((f) => !f.socket.destroyed)).toBe(true);
      // Once the flood is gone, the proxy serves again.
      for (const f of flood) f.socket.destroy();
      await until(() => proxy.connections === 0);
      const ok = dial(proxy.port, `CONNECT api.stripe.com:443 HTTP/1.1\r\n${basic(tokens.token)}\r\n`);
      flood.push(ok);
      await ok.answered;
      expect(statusOf(ok.text())).toBe(200);
    } finally {
      for (const f of flood) f.socket.destroy();
      await proxy.close();
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

const basic = (token: string): string => `Proxy-Authorization: Basic ${Buffer.from(`kit:${token}`).toString('base64')}\r\n`;

/** The status of the first answer in `text`, or null. */
function statusOf(text: string): number | null {
  const m = /^HTTP\/1\.1 (\d{3}) /.exec(text);
  return m === null ? null : Number(m[1]);
}

/** The `error` of a JSON answer in `text`, or null. */
function errorOf(text: string): { code: string; message: string } | null {
  const at = text.indexOf('\r\n\r\n');
  if (at < 0) return null;
  try {
    return (JSON.parse(text.slice(at + 4)) as { error: { code: string; message: string } }).error;
  } catch {
    return null;
  }
}

/** Waits until `done()` holds (the test's own timeout is the bound). */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 20));
}

interface Dialled {
  socket: Socket;
  /** What arrived so far. */
  text(): string;
  /** Once an answer's head is in. */
  answered: Promise<void>;
  /** Once the proxy ended its side (FIN). */
  ended: Promise<void>;
  /** Everything that arrived, once the connection is closed. */
  closed: Promise<string>;
}

/** A raw connection to a proxy on loopback, `head` sent first. */
function dial(port: number, head?: string, options: { allowHalfOpen?: boolean } = {}): Dialled {
  const socket = netConnect({ host: '127.0.0.1', port, allowHalfOpen: options.allowHalfOpen ?? false });
  let text = '';
  let answered: () => void = () => undefined;
  const answeredP = new Promise<void>((resolve) => (answered = resolve));
  socket.on('data', (d: Buffer) => {
    text += d.toString('latin1');
    if (text.includes('\r\n\r\n')) answered();
  });
  socket.on('error', () => undefined);
  const ended = new Promise<void>((resolve) => socket.once('end', () => resolve()));
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(text)));
  if (head !== undefined) socket.write(head);
  return { socket, text: () => text, answered: answeredP, ended, closed };
}
