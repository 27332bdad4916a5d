/**
 * The loopback relay in front of the world's proxy: what it sends on (the world token's
 * credential, never the client's), what it refuses, and whose connections it takes.
 */
import { spawn } from 'node:child_process';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startProxyRelay, type ProxyRelay } from './proxy-relay.js';

/** A stand-in for the world's proxy: records each CONNECT head, answers 200, then echoes. */
interface FakeProxy {
  port: number;
  heads: string[];
  close(): Promise<void>;
}

async function startFakeProxy(): Promise<FakeProxy> {
  const heads: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    let buffered = Buffer.alloc(0);
    let tunnelled = false;
    socket.on('data', (chunk: Buffer) => {
      if (tunnelled) {
        socket.write(chunk);
        return;
      }
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      heads.push(buffered.subarray(0, end).toString('latin1'));
      tunnelled = true;
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      const rest = buffered.subarray(end + 4);
      if (rest.length > 0) socket.write(rest);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : 0,
    heads,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Sends `bytes` to the relay and collects what comes back until it closes or `untilText` shows. */
function exchange(port: number, bytes: string, untilText?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let got = '';
    socket.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (untilText !== undefined && got.includes(untilText)) {
        socket.destroy();
        resolve(got);
      }
    });
    socket.once('close', () => resolve(got));
    socket.once('error', reject);
  });
}

const TOKEN = 'tok_relay-test-0123456789';
let upstream: FakeProxy;
let relay: ProxyRelay;

beforeEach(async () => {
  upstream = await startFakeProxy();
  relay = await startProxyRelay({ upstream: `http://kit:${encodeURIComponent(TOKEN)}@127.0.0.1:${upstream.port}` });
});
afterEach(async () => {
  await relay.close();
  await upstream.close();
});

describe('the proxy relay', () => {
  it("sends the CONNECT on with the world token's credential in place of the client's, then carries bytes both ways", async () => {
    const got = await exchange(relay.port, 'CONNECT api.stripe.com:443 HTTP/1.1\r\nHost: api.stripe.com:443\r\nProxy-Authorization: Basic bm90OnRoZS10b2tlbg==\r\nUser-Agent: Java/17\r\n\r\nhello through', 'hello through');
    expect(got).toBe('HTTP/1.1 200 Connection Established\r\n\r\nhello through');
    expect(upstream.heads).toEqual([`CONNECT api.stripe.com:443 HTTP/1.1\r\nHost: api.stripe.com:443\r\nProxy-Authorization: Basic ${Buffer.from(`kit:${TOKEN}`).toString('base64')}`]);
  });

  it('tunnels only: any other method is refused with 405 and never reaches the world', async () => {
    const got = await exchange(relay.port, 'GET http://api.stripe.com/v1/customers HTTP/1.1\r\nHost: api.stripe.com\r\n\r\n');
    expect(got).toMatch(/^HTTP\/1\.1 405 Method Not Allowed\r\n/);
    expect(got).toContain('"code":"method_not_allowed"');
    expect(upstream.heads).toEqual([]);
  });

  it('refuses a target that is not host:port (nothing that could end a header line goes on)', async () => {
    for (const target of ['api.stripe.com', 'api.stripe.com:443\rX-Injected:1', 'a b:443']) {
      const got = await exchange(relay.port, `CONNECT ${target} HTTP/1.1\r\n\r\n`);
      expect([target, got.split('\r\n')[0]]).toEqual([target, 'HTTP/1.1 400 Bad Request']);
    }
    expect(upstream.heads).toEqual([]);
  });

  it('answers 431 to a head past 16 KiB', async () => {
    const got = await exchange(relay.port, `CONNECT api.stripe.com:443 HTTP/1.1\r\nX-Long: ${'a'.repeat(17 * 1024)}\r\n\r\n`);
    expect(got).toMatch(/^HTTP\/1\.1 431 /);
    expect(upstream.heads).toEqual([]);
  });

  it("answers 502, naming the proxy, when the world's proxy cannot be reached", async () => {
    await upstream.close();
    const got = await exchange(relay.port, 'CONNECT api.stripe.com:443 HTTP/1.1\r\n\r\n');
    expect(got).toMatch(/^HTTP\/1\.1 502 Bad Gateway\r\n/);
    expect(got).toContain(`the world's proxy at 127.0.0.1:${upstream.port} cannot be reached (ECONNREFUSED)`);
  });

  it('close() ends the tunnels it carries and stops listening', async () => {
    const socket = connect(relay.port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write('CONNECT api.stripe.com:443 HTTP/1.1\r\n\r\n');
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    await relay.close();
    await closed;
    const again = await new Promise<string>((resolve) => connect(relay.port, '127.0.0.1').once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? '')).once('connect', () => resolve('connected')));
    expect(again).toBe('ECONNREFUSED');
  });

  it("takes its own user's connections, from IPv4 sockets and from IPv6 ones (as Java opens)", async () => {
    const v4 = await exchange(relay.port, 'CONNECT api.stripe.com:443 HTTP/1.1\r\n\r\nping', 'ping');
    expect(v4).toBe('HTTP/1.1 200 Connection Established\r\n\r\nping');
    // A dual-stack socket connecting to 127.0.0.1 is listed in /proc/net/tcp6 as ::ffff:127.0.0.1.
    const v6 = await new Promise<string>((resolve, reject) => {
      const socket = connect({ host: '::ffff:127.0.0.1', port: relay.port, family: 6 }, () => socket.write('CONNECT api.stripe.com:443 HTTP/1.1\r\n\r\npong'));
      let got = '';
      socket.on('data', (d: Buffer) => {
        got += d.toString('latin1');
        if (got.endsWith('pong')) {
          socket.destroy();
          resolve(got);
        }
      });
      socket.once('close', () => resolve(got));
      socket.once('error', reject);
    });
    expect(v6).toBe('HTTP/1.1 200 Connection Established\r\n\r\npong');
  });
});

// Another user's process can only be started as root; the check exists only where /proc/net/tcp does.
const otherUserPossible = process.platform === 'linux' && process.getuid?.() === 0;
describe.skipIf(!otherUserPossible)(`the proxy relay and other users${otherUserPossible ? '' : ' (skipped: needs Linux and root to start a process as another user)'}`, () => {
  it("refuses a connection from another user's process with 403, and never sends the token on", async () => {
    const script = `const s=require('net').connect(${relay.port},'127.0.0.1',()=>s.write('CONNECT api.stripe.com:443 HTTP/1.1\\r\\n\\r\\n'));let g='';s.on('data',d=>g+=d);s.on('close',()=>process.stdout.write(g));setTimeout(()=>s.destroy(),5000).unref();`;
    const child = spawn(process.execPath, ['-e', script], { uid: 65534, gid: 65534, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await new Promise((resolve) => child.once('close', resolve));
    expect(out).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
    expect(out).toContain(`serves only the user who attached (uid 0), not uid 65534`);
    expect(upstream.heads).toEqual([]);
  });
});
