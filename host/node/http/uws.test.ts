import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { echoWorld } from '../../echo-world.js';
import type { EchoBody, EchoWorld } from '../../echo-world.js';
import { startSingleWorldServer } from '../../single-world.js';
import type { SingleWorldServer } from '../../single-world.js';
import type { HttpAnswer } from '../../core/types.js';

const tokens = { token: 'tok_test-write-token', readToken: 'tok_r_test-read-token' };
const auth = { 'x-kit-token': tokens.token };

let server: SingleWorldServer | null = null;
let world: EchoWorld;

async function start(extra: { maxBodyBytes?: number } = {}): Promise<SingleWorldServer> {
  world = echoWorld('w', 'code-7');
  server = await startSingleWorldServer({ world, org: 'local', tokens, twins: [], port: 0, ...extra });
  return server;
}

afterEach(async () => {
  await server?.close();
  server = null;
});

/** Sends raw bytes on one connection and collects what comes back until `done` says so or the socket closes. */
function raw(port: number, send: (write: (s: string | Buffer) => boolean) => Promise<void> | void, done: (text: string) => boolean): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let finished = false;
    const finish = (closed: boolean): void => {
      if (finished) return;
      finished = true;
      socket.destroy();
      resolve({ text, closed });
    };
    socket.on('data', (d) => {
      text += d.toString('latin1');
      if (done(text)) finish(false);
    });
    socket.on('close', () => finish(true));
    // A server that refuses a body and closes makes the client's further writes fail (EPIPE);
    // what counts is what was read before that.
    socket.on('error', () => finish(true));
    socket.on('connect', () => {
      const write = (s: string | Buffer): boolean => (finished || socket.destroyed ? false : socket.write(s));
      void Promise.resolve(send(write)).catch(reject);
    });
  });
}

function pattern(size: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + (i >> 8)) & 0xff;
  return bytes;
}

describe('uWS adapter under the single-world server', () => {
  it('passes method, path, query and headers through, and stamps x-kit-world-code', async () => {
    const s = await start();
    const r = await fetch(`${s.worldUrl}/hello/v1/things/a%2Fb?x=1&y=%20`, { headers: { ...auth, 'x-custom': 'v', traceparent: '00-abc-def-01' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-kit-world-code')).toBe('code-7');
    const echo = (await r.json()) as EchoBody;
    expect(echo).toMatchObject({ surface: 'vendor', method: 'GET', path: '/hello/v1/things/a%2Fb', query: 'x=1&y=%20', scope: 'write' });
    expect(echo.headers['x-custom']).toBe('v');
    expect(echo.headers['traceparent']).toBe('00-abc-def-01');
    expect(echo.headers['x-kit-token']).toBeUndefined();
  });

  it('joins a repeated header with ", " as the contract says', async () => {
    const s = await start();
    const { text } = await raw(
      s.port,
      (w) => void w(`GET /local/w/hello/x HTTP/1.1\r\nHost: a\r\nx-kit-token: ${tokens.token}\r\nx-rep: one\r\nx-rep: two\r\n\r\n`),
      (t) => t.includes('}'),
    );
    expect(text).toContain('"x-rep":"one, two"');
  });

  it('copies every body chunk: a streamed 1.5 MB body arrives whole and in order', async () => {
    const s = await start();
    const data = pattern(1_500_000);
    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        for (let i = 0; i < data.length; i += 50_000) {
          controller.enqueue(data.slice(i, i + 50_000));
          await new Promise((r) => setImmediate(r));
        }
        controller.close();
      },
    });
    const r = await fetch(`${s.worldUrl}/hello/upload`, { method: 'POST', headers: auth, body: stream, duplex: 'half' } as RequestInit);
    const echo = (await r.json()) as EchoBody;
    expect(echo.bodyLength).toBe(data.length);
    expect(echo.bodySha256).toBe(createHash('sha256').update(data).digest('hex'));
  });

  it('hands the world each body in an ArrayBuffer of its own, exactly its size (a runner may transfer it)', async () => {
    const s = await start();
    await fetch(`${s.worldUrl}/hello/a`, { method: 'POST', headers: auth, body: 'small body' });
    const chunked = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('two '));
        c.enqueue(new TextEncoder().encode('chunks'));
        c.close();
      },
    });
    await fetch(`${s.worldUrl}/hello/b`, { method: 'POST', headers: auth, body: chunked, duplex: 'half' } as RequestInit);
    await s.dispatch({ method: 'POST', url: '/local/w/hello/c', headers: auth, body: 'in process' });
    const bodies = world.received.map((r) => r.body);
    expect(bodies.map((b) => Buffer.from(b ?? []).toString())).toEqual(['small body', 'two chunks', 'in process']);
    for (const b of bodies) expect([b?.byteOffset, b?.buffer.byteLength]).toEqual([0, b?.byteLength]);
  });

  it('accepts a body of exactly the limit with content-length', async () => {
    const s = await start({ maxBodyBytes: 64 * 1024 });
    const data = pattern(64 * 1024);
    const r = await fetch(`${s.worldUrl}/hello/upload`, { method: 'PUT', headers: auth, body: data });
    expect(r.status).toBe(200);
    expect(((await r.json()) as EchoBody).bodySha256).toBe(createHash('sha256').update(data).digest('hex'));
  });

  it('refuses a declared body over 4 MB with 413 before a byte of it is sent', async () => {
    const s = await start();
    const { text } = await raw(
      s.port,
      (w) => void w(`POST /local/w/hello/x HTTP/1.1\r\nHost: a\r\nx-kit-token: ${tokens.token}\r\ncontent-length: ${4 * 1024 * 1024 + 1}\r\n\r\n`),
      (t) => t.includes('}}'),
    );
    expect(text.startsWith('HTTP/1.1 413 ')).toBe(true);
    expect(text.toLowerCase()).toContain('x-kit-world-code: code-7');
    expect(text).toContain('"code":"body_too_large"');
    expect(world.received).toHaveLength(0);
  });

  it('refuses a chunked body with 413 as soon as it passes 4 MB, while the client is still sending', async () => {
    const s = await start();
    const chunk = Buffer.alloc(256 * 1024, 0x61);
    let sent = 0;
    let answeredAfter = -1;
    const { text } = await raw(
      s.port,
      async (w) => {
        w(`POST /local/w/hello/x HTTP/1.1\r\nHost: a\r\nx-kit-token: ${tokens.token}\r\ntransfer-encoding: chunked\r\n\r\n`);
        // Up to 8 MB, but the answer should come once a little over 4 MB has gone.
        for (let i = 0; i < 32; i++) {
          if (!w(`${chunk.length.toString(16)}\r\n`)) await new Promise((r) => setImmediate(r));
          w(chunk);
          w('\r\n');
          sent += chunk.length;
          await new Promise((r) => setImmediate(r));
        }
      },
      (t) => {
        if (!t.includes('}}')) return false;
        answeredAfter = sent;
        return true;
      },
    );
    expect(text.startsWith('HTTP/1.1 413 ')).toBe(true);
    expect(text.toLowerCase()).toContain('x-kit-world-code: code-7');
    expect(text).toContain('"code":"body_too_large"');
    expect(world.received).toHaveLength(0);
    // The answer came while the client was still sending, not after the whole 8 MB.
    expect(answeredAfter).toBeGreaterThan(4 * 1024 * 1024);
    expect(answeredAfter).toBeLessThan(8 * 1024 * 1024);
  });

  it('answers a fetch that sends a 5 MB body with 413, and the connection serves the next request', async () => {
    const s = await start();
    const r = await fetch(`${s.worldUrl}/hello/x`, { method: 'POST', headers: auth, body: pattern(5 * 1024 * 1024) });
    expect(r.status).toBe(413);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('body_too_large');
    expect((await fetch(`${s.worldUrl}/hello/x`, { headers: auth })).status).toBe(200);
    expect(world.received).toHaveLength(1);
  });

  it('answers HEAD with the GET length and no body', async () => {
    const s = await start();
    const ask = (method: string) =>
      raw(
        s.port,
        (w) => void w(`${method} /local/w/hello/x HTTP/1.1\r\nHost: a\r\nx-kit-token: ${tokens.token}\r\n\r\n`),
        (t) => (method === 'HEAD' ? t.includes('\r\n\r\n') : t.endsWith('}')),
      );
    const get = await ask('GET');
    const length = /content-length: (\d+)/i.exec(get.text)?.[1];
    expect(Number(length)).toBeGreaterThan(0);
    const head = await ask('HEAD');
    // The echo of HEAD differs from GET's only in the method name, one letter longer.
    expect(head.text).toMatch(new RegExp(`content-length: ${Number(length) + 1}\r\n`, 'i'));
    expect(head.text.endsWith('\r\n\r\n')).toBe(true);
    expect(world.received.at(-1)?.method).toBe('HEAD');
  });

  it('stamps x-kit-world-code on 401 and 404 answers too', async () => {
    const s = await start();
    const r401 = await fetch(`${s.worldUrl}/hello/x`);
    expect(r401.status).toBe(401);
    expect(r401.headers.get('x-kit-world-code')).toBe('code-7');
    expect(r401.headers.get('www-authenticate')).toContain('Bearer');
    const r404 = await fetch(`${s.url}/elsewhere`);
    expect(r404.status).toBe(404);
    expect(r404.headers.get('x-kit-world-code')).toBe('code-7');
    expect(((await r404.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('keeps the connection usable after refusing a request whose body it never read', async () => {
    const s = await start();
    const { text } = await raw(
      s.port,
      (w) =>
        void w(
          `POST /local/w/hello/x HTTP/1.1\r\nHost: a\r\ncontent-length: 5\r\n\r\nhello` +
            `GET /local/w/hello/second HTTP/1.1\r\nHost: a\r\nx-kit-token: ${tokens.token}\r\n\r\n`,
        ),
      (t) => t.includes('/hello/second'),
    );
    expect(text.startsWith('HTTP/1.1 401 ')).toBe(true);
    expect(text).toContain('HTTP/1.1 200 ');
  });

  it('waits delayMs with a timer: a later request is answered while a delayed one waits', async () => {
    const s = await start();
    const order: string[] = [];
    const slow = fetch(`${s.worldUrl}/hello/slow`, { headers: { ...auth, 'x-echo-delay': '300' } }).then(async (r) => {
      order.push(`slow ${r.status}`);
      await r.text();
    });
    // Let the slow request reach the world before the fast one is sent.
    while (world.received.length === 0) await new Promise((r) => setTimeout(r, 5));
    const fast = await fetch(`${s.worldUrl}/hello/fast`, { headers: auth });
    order.push(`fast ${fast.status}`);
    await slow;
    expect(order).toEqual(['fast 200', 'slow 200']);
  });

  it('closes the connection without an answer on fault reset', async () => {
    const s = await start();
    await expect(fetch(`${s.worldUrl}/hello/x`, { headers: { ...auth, 'x-echo-fault': 'reset' } })).rejects.toThrow();
    const { text, closed } = await raw(
      s.port,
      (w) => void w(`GET /local/w/hello/x HTTP/1.1\r\nHost: a\r\nx-kit-token: ${tokens.token}\r\nx-echo-fault: reset\r\n\r\n`),
      () => false,
    );
    expect(text).toBe('');
    expect(closed).toBe(true);
    // The server still serves afterwards.
    expect((await fetch(`${s.worldUrl}/hello/x`, { headers: auth })).status).toBe(200);
  });

  it('takes a request head up to 16 KB (a long vendor query), and refuses a larger one with 431', async () => {
    const s = await start();
    const query = `q=${'x'.repeat(10_000)}`;
    const r = await fetch(`${s.worldUrl}/hello/search?${query}`, { headers: auth });
    expect(r.status).toBe(200);
    expect(((await r.json()) as EchoBody).query).toBe(query);
    const big = await fetch(`${s.worldUrl}/hello/search?q=${'x'.repeat(20_000)}`, { headers: auth });
    expect(big.status).toBe(431);
  });

  it('does not let a twin split the response with a header value holding CR LF', async () => {
    const s = await start();
    const r = await fetch(`${s.worldUrl}/hello/x`, { headers: { ...auth, 'x-echo-status': '201' } });
    expect(r.status).toBe(201);
    // A world answer with an unsafe header is written without it (checked at the adapter level).
    const core = await import('./uws.js');
    const http = await core.listenHttp({
      handler: {
        head: () => ({ status: 200, headers: { 'x-bad': 'a\r\nset-cookie: x=1', 'x-good': 'ok', 'bad name': 'v' }, body: 'b' }),
        tooLarge: () => ({ status: 413, headers: {}, body: '' }),
        stopping: () => ({ status: 503, headers: {}, body: '' }),
        badRequest: () => ({ status: 400, headers: {}, body: '' }),
        failed: () => ({ status: 500, headers: {}, body: '' }),
      },
    });
    try {
      const res = await fetch(`http://127.0.0.1:${http.port}/`);
      expect(res.headers.get('x-good')).toBe('ok');
      expect(res.headers.get('x-bad')).toBeNull();
      expect(res.headers.get('set-cookie')).toBeNull();
    } finally {
      await http.close();
    }
  });

  it('rejects with a clear error when the port is taken', async () => {
    const s = await start();
    const other = echoWorld('w');
    await expect(startSingleWorldServer({ world: other, org: 'local', tokens, twins: [], port: s.port })).rejects.toThrow(/cannot listen/);
  });

  it('holds its port exclusively: another process cannot listen beside it (uWS defaults to SO_REUSEPORT)', async () => {
    // A named port: the kernel shares an ephemeral one differently.
    const { createServer } = await import('node:net');
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    world = echoWorld('w', 'code-7');
    server = await startSingleWorldServer({ world, org: 'local', tokens, twins: [], port });
    const s = server;
    const script = `import * as uWS from 'uWebSockets.js';
      uWS.App().listen('127.0.0.1', ${s.port}, (ls) => { console.log(ls ? 'shared' : 'refused'); process.exit(0); });`;
    const { execFileSync } = await import('node:child_process');
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: process.cwd(), encoding: 'utf8' });
    expect(out.trim()).toBe('refused');
  });

  it('survives a client that leaves while the world is still answering', async () => {
    const s = await start();
    const controller = new AbortController();
    const leaving = fetch(`${s.worldUrl}/hello/held`, { headers: { ...auth, 'x-echo-gate': 'left' }, signal: controller.signal });
    while (world.received.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    await expect(leaving).rejects.toThrow();
    // Give uWS time to see the connection close before the answer is ready.
    await new Promise((r) => setTimeout(r, 50));
    world.release('left');
    await new Promise((r) => setTimeout(r, 20));
    expect((await fetch(`${s.worldUrl}/hello/next`, { headers: auth })).status).toBe(200);
  });

  it('writes the answers that are ready in one turn together: each reaches its own client, none is left in flight', async () => {
    const core = await import('./uws.js');
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    let heads = 0;
    const http = await core.listenHttp({
      handler: {
        head: (h) => {
          heads++;
          return async (): Promise<HttpAnswer> => {
            await gate;
            // A body uWS refuses to write (a bug elsewhere) fails that answer alone.
            if (h.path === '/bad') return { status: 200, headers: {}, body: {} as unknown as string };
            return { status: 200, headers: { 'content-type': 'text/plain' }, body: `answer to ${h.path}` };
          };
        },
        failed: () => ({ status: 500, headers: {}, body: '' }),
        tooLarge: () => ({ status: 413, headers: {}, body: '' }),
        stopping: () => ({ status: 503, headers: {}, body: '' }),
        badRequest: () => ({ status: 400, headers: {}, body: '' }),
      },
    });
    try {
      // 24 connections and one whose answer cannot be written, held until one release
      // answers them all in the same turn.
      const bad = raw(http.port, (write) => void write('GET /bad HTTP/1.1\r\nHost: x\r\n\r\n'), () => false);
      const asked = Array.from({ length: 24 }, (_, i) =>
        raw(http.port, (write) => void write(`GET /n${i} HTTP/1.1\r\nHost: x\r\n\r\n`), (text) => text.includes(`answer to /n`)),
      );
      while (heads < 25) await new Promise((r) => setTimeout(r, 5));
      open();
      // Its connection is closed with no whole answer on it (uWS may have sent the status line).
      const refused = await bad;
      expect(refused.closed).toBe(true);
      expect(refused.text).not.toContain('\r\n\r\n');
      const answers = await Promise.all(asked);
      answers.forEach(({ text }, i) => {
        expect(text.startsWith('HTTP/1.1 200 OK\r\n')).toBe(true);
        expect(text.endsWith(`answer to /n${i}`)).toBe(true);
      });
      // Clients that leave as soon as they have asked: their requests are settled too.
      const gone = Array.from({ length: 24 }, () => {
        const socket = connect(http.port, '127.0.0.1', () => {
          // Gone once the request is handed to the kernel, so the server reads it, then the close.
          socket.write('GET /gone HTTP/1.1\r\nHost: x\r\n\r\n', () => socket.destroy());
        });
        return new Promise((r) => socket.on('close', r));
      });
      await Promise.all(gone);
      while (heads < 49) await new Promise((r) => setTimeout(r, 5));
      await new Promise((r) => setTimeout(r, 50));
      expect(http.inFlight()).toBe(0);
    } finally {
      await http.close();
    }
  });

  it('closes the connection of an answer uWS cannot write from within the handler, instead of throwing out of it', async () => {
    const core = await import('./uws.js');
    const http = await core.listenHttp({
      handler: {
        // A body uWS refuses (a bug elsewhere), answered on the head alone: written inside uWS's handler.
        head: (h) => (h.path === '/bad' ? { status: 200, headers: {}, body: {} as unknown as string } : { status: 200, headers: {}, body: 'ok' }),
        tooLarge: () => ({ status: 413, headers: {}, body: '' }),
        stopping: () => ({ status: 503, headers: {}, body: '' }),
        badRequest: () => ({ status: 400, headers: {}, body: '' }),
        failed: () => ({ status: 500, headers: {}, body: '' }),
      },
    });
    try {
      const refused = await raw(http.port, (write) => void write('GET /bad HTTP/1.1\r\nHost: x\r\n\r\n'), () => false);
      expect(refused.closed).toBe(true);
      expect(refused.text).not.toContain('\r\n\r\n');
      expect(await (await fetch(`http://127.0.0.1:${http.port}/`)).text()).toBe('ok');
    } finally {
      await http.close();
    }
  });

  it('forgets a request whose client leaves halfway through its body', async () => {
    const core = await import('./uws.js');
    let bodies = 0;
    const http = await core.listenHttp({
      handler: {
        head: () => async () => {
          bodies++;
          return { status: 200, headers: {}, body: 'ok' };
        },
        tooLarge: () => ({ status: 413, headers: {}, body: '' }),
        stopping: () => ({ status: 503, headers: {}, body: '' }),
        badRequest: () => ({ status: 400, headers: {}, body: '' }),
        failed: () => ({ status: 500, headers: {}, body: '' }),
      },
    });
    try {
      const socket = connect(http.port, '127.0.0.1');
      await new Promise<void>((r) => socket.on('connect', () => r()));
      socket.write('POST /x HTTP/1.1\r\nHost: a\r\ncontent-length: 1000\r\n\r\nonly-part-of-it');
      while (http.inFlight() === 0) await new Promise((r) => setTimeout(r, 5));
      socket.destroy();
      while (http.inFlight() !== 0) await new Promise((r) => setTimeout(r, 5));
      expect(bodies).toBe(0);
      expect((await fetch(`http://127.0.0.1:${http.port}/`)).status).toBe(200);
    } finally {
      await http.close();
    }
  });

  it('while stopping, answers a request on an already open connection 503 shutting_down', async () => {
    const s = await start();
    const socket = connect(s.port, '127.0.0.1');
    await new Promise<void>((r) => socket.on('connect', () => r()));
    let text = '';
    socket.on('data', (d) => {
      text += d.toString('latin1');
    });
    const held = fetch(`${s.worldUrl}/hello/held`, { headers: { ...auth, 'x-echo-gate': 'stop' } });
    while (world.received.length === 0) await new Promise((r) => setTimeout(r, 5));
    const closing = s.close();
    socket.write(`GET /local/w/hello/late HTTP/1.1\r\nHost: a\r\nx-kit-token: ${tokens.token}\r\n\r\n`);
    while (!text.includes('}}')) await new Promise((r) => setTimeout(r, 5));
    expect(text.startsWith('HTTP/1.1 503 ')).toBe(true);
    expect(text.toLowerCase()).toContain('x-kit-world-code: code-7');
    expect(text).toContain('"code":"shutting_down"');
    world.release('stop');
    expect((await held).status).toBe(200);
    await closing;
    socket.destroy();
    server = null;
  });

  it('stops gracefully: refuses new connections, finishes the in-flight request, then closes the world', async () => {
    const s = await start();
    const pending = fetch(`${s.worldUrl}/hello/held`, { headers: { ...auth, 'x-echo-gate': 'g' } });
    while (world.received.length === 0) await new Promise((r) => setTimeout(r, 5));
    const closing = s.close();
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(world.closed.at).toBeNull();
    await expect(fetch(`${s.worldUrl}/hello/x`, { headers: auth })).rejects.toThrow();
    world.release('g');
    const r = await pending;
    expect(r.status).toBe(200);
    await closing;
    expect(world.closed.at).not.toBeNull();
    expect(world.closed.inFlightAtClose).toBe(0);
    server = null;
  });
});
