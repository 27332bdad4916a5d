/**
 * A world the user attaches to may be someone else's: its manifest, its redirects and the
 * size of its answers must not reach the user's machine. Each case runs through the real
 * `kit` (bundled) and the Node attach entry, against a small hostile HTTP server.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createConnection } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { runAttach } from '../../sdk/cli/attach.js';
import { startStreamListeners } from '../../sdk/attach/streams.js';
import { buildAttach, cleanEnv, run } from './harness.js';
import type { Built } from './harness.js';

const TOKEN = 'tok_hostile-test-secret-0123456789abcdef';
const HUGE_BYTES = 64 * 1024 * 1024;

interface Listening {
  server: Server;
  origin: string;
  close(): Promise<void>;
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Listening> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    server,
    origin,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A manifest as a world at `worldUrl` would serve it, with `extra` merged in. */
function manifestAt(worldUrl: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'shop',
    vendors: { stripe: `${worldUrl}/stripe` },
    hosts: { 'api.stripe.com': 'stripe' },
    ca: null,
    proxy: null,
    env: { KIT_TWINS_KEY: TOKEN, STRIPE_API_BASE: `${worldUrl}/stripe` },
    streams: {},
    ...extra,
  };
}

let built: Built;
let worldBin: string;
let marker: string;
/** The hostile world: `/<case>/.well-known/kit-world`. */
let hostile: Listening;
/** Where the hostile world redirects to: records every request and the token it carried. */
let elsewhere: Listening;
const elsewhereSeen: { url: string; token: string | undefined }[] = [];
/** Bytes the hostile world got out before the attacher hung up, by case. */
const sent: Record<string, number> = {};

/** Writes `total` bytes (or forever, when Infinity) with backpressure, counting until the client goes. */
function stream(name: string, res: ServerResponse, total: number): void {
  const chunk = Buffer.alloc(64 * 1024, 0x20); // JSON whitespace
  sent[name] = 0;
  let closed = false;
  res.on('close', () => (closed = true));
  const pump = (): void => {
    while (!closed && sent[name]! < total) {
      sent[name]! += chunk.byteLength;
      if (!res.write(chunk)) {
        res.once('drain', pump);
        return;
      }
    }
    if (!closed) res.end();
  };
  pump();
}

beforeAll(async () => {
  built = await buildAttach();
  worldBin = await mkdtemp(join(tmpdir(), 'kit-hostile-bin-'));
  marker = join(worldBin, 'ran');
  // A program only the world's PATH has: it must never run.
  await writeFile(join(worldBin, 'kit-hostile-probe'), `#!/bin/sh\ntouch ${JSON.stringify(marker)}\necho world-binary-ran\n`);
  await chmod(join(worldBin, 'kit-hostile-probe'), 0o755);
  elsewhere = await listen((req, res) => {
    elsewhereSeen.push({ url: req.url ?? '', token: req.headers['x-kit-token'] as string | undefined });
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(manifestAt(`${elsewhere.origin}/local/shop`)));
  });
  hostile = await listen((req, res) => {
    const m = /^\/([a-z-]+)\/\.well-known\/kit-world$/.exec(req.url ?? '');
    const name = m?.[1] ?? '';
    const world = `${hostile.origin}/${name}`;
    const json = (body: unknown): void => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(body));
    };
    switch (name) {
      case 'good':
        return json(manifestAt(world));
      case 'code':
        return json(manifestAt(world, { env: { KIT_TWINS_KEY: TOKEN, PATH: worldBin, LD_PRELOAD: join(worldBin, 'x.so'), NODE_TLS_REJECT_UNAUTHORIZED: '0' } }));
      case 'good-stream':
        return json(manifestAt(world, { streams: { smtp: { url: `${world.replace(/^http/, 'ws')}/streams/smtp`, protocol: 'smtp', env: { SMTP_HOST: '{host}', SMTP_PORT: '{port}' } } } }));
      case 'stream-code':
        return json(
          manifestAt(world, {
            streams: { smtp: { url: `${world.replace(/^http/, 'ws')}/streams/smtp`, protocol: 'smtp', env: { SMTP_HOST: '{host}', NODE_OPTIONS: '--import=data:text/javascript,console.log(0xBAD)' } } },
          }),
        );
      case 'off-world':
        return json(manifestAt(world, { env: { KIT_TWINS_KEY: TOKEN, STRIPE_API_BASE: 'http://evil.example/stripe' } }));
      case 'redirect-away':
        res.writeHead(302, { location: `${elsewhere.origin}/local/shop/.well-known/kit-world` });
        return void res.end();
      case 'redirect-here':
        res.writeHead(307, { location: `/good/.well-known/kit-world` });
        return void res.end();
      case 'huge':
        res.writeHead(200, { 'content-type': 'application/json' });
        return stream(name, res, HUGE_BYTES);
      case 'huge-declared':
        // Says 8 GiB up front, then sends a little and hangs: the length alone must refuse it.
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(8 * 1024 ** 3) });
        return void res.write(Buffer.alloc(1024, 0x20));
      case 'huge-error':
        res.writeHead(500, { 'content-type': 'text/plain' });
        return stream(name, res, HUGE_BYTES);
      default:
        res.statusCode = 404;
        return void res.end('no such case');
    }
  });
});
afterAll(async () => {
  await Promise.all([built?.close(), hostile?.close(), elsewhere?.close(), worldBin ? rm(worldBin, { recursive: true, force: true }) : undefined]);
});

const kit = (world: string, command: string[], env: Record<string, string> = {}) =>
  run(process.execPath, [built.kit, 'world', 'attach', `${hostile.origin}/${world}`, '--token', TOKEN, '--', ...command], cleanEnv(env));
const entry = (world: string, app = 'console.log("app ran")') =>
  run(process.execPath, ['--import', built.entry, '-e', app], cleanEnv({ KIT_WORLD: `${hostile.origin}/${world}`, KIT_WORLD_TOKEN: TOKEN }));

/** One line on stderr, nothing on stdout, exit 1: the command never ran. */
function refusedOnce(r: { code: number | null; stdout: string; stderr: string }, prefix: string, pattern: RegExp): void {
  expect(r.stdout).toBe('');
  expect(r.stderr.startsWith(prefix), r.stderr).toBe(true);
  expect(r.stderr.endsWith('\n') && r.stderr.indexOf('\n') === r.stderr.length - 1, r.stderr).toBe(true);
  expect(r.stderr).toMatch(pattern);
  expect(r.code).toBe(1);
}

describe('a manifest that sets variables no world may set', () => {
  it('runs the command when the manifest is an honest one (the control)', async () => {
    const r = await kit('good', ['sh', '-c', 'echo "$STRIPE_API_BASE"']);
    expect([r.stderr, r.code]).toEqual(['', 0]);
    expect(r.stdout).toBe(`${hostile.origin}/good/stripe\n`);
  });

  it("kit: PATH, LD_PRELOAD and NODE_TLS_REJECT_UNAUTHORIZED fail the attach, naming them, and the world's binary never runs", async () => {
    const r = await kit('code', ['kit-hostile-probe']);
    refusedOnce(r, `kit: the manifest at ${hostile.origin}/code/.well-known/kit-world is refused: `, /it sets PATH, LD_PRELOAD and NODE_TLS_REJECT_UNAUTHORIZED, which no world may set/);
    expect(existsSync(marker)).toBe(false);
  });

  it("kit: a stream's NODE_OPTIONS (code for every Node the command starts) fails the attach", async () => {
    const r = await kit('stream-code', ['node', '-e', 'console.log("app ran")']);
    refusedOnce(r, 'kit: the manifest at ', /it sets NODE_OPTIONS, which no world may set/);
  });

  it('kit: an endpoint variable pointed off the world fails the attach', async () => {
    const r = await kit('off-world', ['sh', '-c', 'echo ran']);
    refusedOnce(r, 'kit: the manifest at ', /STRIPE_API_BASE at http:\/\/evil\.example, not at the world/);
  });

  it('the Node entry: the same manifest stops the app before its first line', async () => {
    const r = await entry('code', 'console.log(process.env.NODE_TLS_REJECT_UNAUTHORIZED ?? "unset")');
    refusedOnce(r, `kit attach: the manifest at ${hostile.origin}/code/.well-known/kit-world is refused: `, /PATH, LD_PRELOAD and NODE_TLS_REJECT_UNAUTHORIZED/);
  });

  it("kit looks the command up with the user's PATH, whatever the environment it builds says", async () => {
    // A stream listener that hands back a PATH stands in for any way one could slip in.
    const err: string[] = [];
    const code = await runAttach(
      { worldUrl: `${hostile.origin}/good-stream`, token: TOKEN, command: 'kit-hostile-probe', args: [] },
      { out: () => {}, err: (l) => err.push(l) },
      {
        attachEntry: built.entry,
        env: cleanEnv(),
        startStreams: async () => ({ env: { PATH: worldBin }, close: async () => {} }),
      },
    );
    expect(code).toBe(127);
    expect(existsSync(marker)).toBe(false);
    expect(err).toEqual(['kit: cannot run kit-hostile-probe: not found']);
  });
});

describe('a world that redirects', () => {
  it('kit: refuses to follow, names where it went, and the token never reaches the other host', async () => {
    elsewhereSeen.length = 0;
    const r = await kit('redirect-away', ['sh', '-c', 'echo ran']);
    refusedOnce(
      r,
      `kit: the world at ${hostile.origin}/redirect-away redirected to ${elsewhere.origin}/local/shop/.well-known/kit-world`,
      new RegExp(`attach to ${elsewhere.origin.replace(/[.]/g, '\\.')}/local/shop directly`),
    );
    expect(elsewhereSeen).toEqual([]);
  });

  it('the Node entry: the same', async () => {
    elsewhereSeen.length = 0;
    const r = await entry('redirect-away');
    refusedOnce(r, `kit attach: the world at ${hostile.origin}/redirect-away redirected to ${elsewhere.origin}/local/shop/.well-known/kit-world`, /directly/);
    expect(elsewhereSeen).toEqual([]);
  });

  it('kit: refuses a redirect to the same origin too', async () => {
    const r = await kit('redirect-here', ['sh', '-c', 'echo ran']);
    refusedOnce(r, `kit: the world at ${hostile.origin}/redirect-here redirected to ${hostile.origin}/good/.well-known/kit-world`, /attach to .*\/good directly/);
  });
});

describe('a world whose answer is huge', () => {
  it('kit: stops reading past 1 MiB and says so in one line', async () => {
    const r = await kit('huge', ['sh', '-c', 'echo ran']);
    refusedOnce(r, `kit: the manifest at ${hostile.origin}/huge/.well-known/kit-world is larger than 1 MiB`, /larger than 1 MiB/);
    // It hung up long before the end: socket buffers hold a few MiB at most.
    expect(sent['huge']).toBeLessThan(HUGE_BYTES / 2);
  });

  it('the Node entry: refuses a declared length over the cap without waiting for the body', async () => {
    const started = Date.now();
    const r = await entry('huge-declared');
    refusedOnce(r, `kit attach: the manifest at ${hostile.origin}/huge-declared/.well-known/kit-world is larger than 1 MiB`, /larger than 1 MiB/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('kit: reads no more than a little of a huge error answer', async () => {
    const r = await kit('huge-error', ['sh', '-c', 'echo ran']);
    refusedOnce(r, `kit: the world at ${hostile.origin}/huge-error/.well-known/kit-world answered 500`, /answered 500/);
    expect(r.stderr.length).toBeLessThan(400);
    expect(sent['huge-error']).toBeLessThan(HUGE_BYTES / 2);
  });
});

describe("a stream's WebSocket", () => {
  it('is closed (1009) when the world sends a message over 1 MiB, and the app gets none of it', async () => {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    wss.on('connection', (ws) => ws.once('message', () => ws.send(Buffer.alloc(4 * 1024 * 1024, 0x41), { binary: true })));
    const refusals: number[] = [];
    const listeners = await startStreamListeners(
      { streams: { big: { url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/s`, protocol: 'big', env: {} } } },
      TOKEN,
      { onRefused: (_id, code) => refusals.push(code) },
    );
    try {
      const received = await new Promise<number>((resolve) => {
        let n = 0;
        const socket = createConnection({ host: '127.0.0.1', port: listeners.ports['big'] as number });
        socket.on('data', (d: Buffer) => (n += d.byteLength));
        socket.on('close', () => resolve(n));
        socket.on('error', () => undefined);
        setTimeout(() => socket.destroy(), 10_000);
      });
      expect(received).toBe(0);
      expect(refusals).toEqual([1009]);
    } finally {
      await listeners.close();
      await new Promise((resolve) => wss.close(resolve));
    }
  });

  it('follows no redirect: the token never reaches the host the upgrade answer names', async () => {
    const tokens: string[] = [];
    const other = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise<void>((resolve) => other.once('listening', () => resolve()));
    other.on('connection', (ws) => ws.once('message', (d: Buffer) => tokens.push(d.toString('utf8'))));
    const redirector = await listen((_req, res) => res.end());
    redirector.server.on('upgrade', (_req, socket) => {
      socket.end(`HTTP/1.1 302 Found\r\nLocation: ws://127.0.0.1:${(other.address() as AddressInfo).port}/s\r\nContent-Length: 0\r\n\r\n`);
    });
    const listeners = await startStreamListeners({ streams: { r: { url: `${redirector.origin.replace(/^http/, 'ws')}/s`, protocol: 'r', env: {} } } }, TOKEN, { onRefused: () => {} });
    try {
      await new Promise<void>((resolve) => {
        const socket = createConnection({ host: '127.0.0.1', port: listeners.ports['r'] as number });
        socket.on('close', () => resolve());
        socket.on('error', () => undefined);
        setTimeout(() => socket.destroy(), 5_000);
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(tokens).toEqual([]);
    } finally {
      await listeners.close();
      await redirector.close();
      await new Promise((resolve) => other.close(resolve));
    }
  });
});
