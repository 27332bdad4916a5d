/**
 * The stream WebSocket `{world_api}/streams/<id>` over real sockets: the single-world server
 * in front of an in-process world with a test stream twin (fixtures/echo) and the SMTP twin.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnection, type Socket } from 'node:net';
import WebSocket from 'ws';
import { MemoryStorage } from '../../runtime/store/index.js';
import { openWorldRunner, type WorldRunner } from '../../runtime/runner/index.js';
import { startSingleWorldServer, type SingleWorldServer } from '../../host/single-world.js';
import { FLOOD_BYTES } from './fixtures/echo/index.js';
import { ECHO, SMTP, twinBundle } from './helpers.js';
import { startStreamListeners } from '../../sdk/attach/streams.js';

const tokens = { token: 'tok_streams-write-token-0123456789abcdef', readToken: 'tok_r_streams-read-token-0123456789abcdef' };
let runner: WorldRunner;
let server: SingleWorldServer;

beforeAll(async () => {
  const [echo, smtp] = await Promise.all([twinBundle(ECHO), twinBundle(SMTP)]);
  runner = await openWorldRunner({ storage: new MemoryStorage(), world: 'streams', twins: [echo!, smtp!], now: () => Date.parse('2026-01-01T00:00:00.000Z') });
  server = await startSingleWorldServer({
    world: runner,
    org: 'local',
    worldName: 'streams',
    tokens,
    twins: [
      { vendor: 'echo', requestScopes: [], protocol: 'echo' },
      { vendor: 'smtp', requestScopes: [], protocol: 'smtp' },
    ],
    streamLimits: { maxBufferBytes: 8 * 1024 * 1024 },
  });
});
afterAll(async () => {
  await server?.close();
});

interface Client {
  ws: WebSocket;
  /** Everything received so far, as one buffer. */
  received(): Buffer;
  /** Resolves once `n` bytes (or the text) have arrived. */
  waitFor(what: number | string): Promise<Buffer>;
  closed: Promise<{ code: number; reason: string }>;
  upgradeHeaders: Promise<Record<string, string | string[] | undefined>>;
}

function connect(id: string, token: string | null = tokens.token): Client {
  const ws = new WebSocket(`${server.worldApi.replace(/^http/, 'ws')}/streams/${id}`, { perMessageDeflate: false });
  const chunks: Buffer[] = [];
  let waiters: (() => void)[] = [];
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    expect(isBinary).toBe(true);
    chunks.push(data);
    const w = waiters;
    waiters = [];
    w.forEach((f) => f());
  });
  if (token !== null) ws.on('open', () => ws.send(token));
  const received = () => Buffer.concat(chunks);
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString() })));
  const upgradeHeaders = new Promise<Record<string, string | string[] | undefined>>((resolve) => ws.on('upgrade', (res) => resolve(res.headers)));
  const waitFor = (what: number | string): Promise<Buffer> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const all = received();
        if (typeof what === 'number' ? all.byteLength >= what : all.toString('latin1').includes(what)) resolve(all);
        else waiters.push(check);
      };
      void closed.then(({ code, reason }) => reject(new Error(`closed ${code} ${reason} before ${String(what)} arrived; got ${received().byteLength} bytes`)));
      check();
    });
  return { ws, received, waitFor, closed, upgradeHeaders };
}

async function until(condition: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (condition()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return condition();
}

describe('stream WebSocket', () => {
  it('opens with the token as first message, greets, and carries every byte value both ways', async () => {
    const c = connect('echo');
    const headers = await c.upgradeHeaders;
    expect(headers['x-kit-world-code']).toBeUndefined();
    await c.waitFor('hello\n');
    const all = Buffer.alloc(256 * 4);
    for (let i = 0; i < all.length; i++) all[i] = i % 256;
    // Split across messages at odd places; the twin sees one byte stream.
    c.ws.send(all.subarray(0, 7));
    c.ws.send(all.subarray(7, 600));
    c.ws.send(all.subarray(600));
    c.ws.send(Buffer.from('\n'));
    const got = await c.waitFor(6 + all.length + 1);
    expect(got.subarray(6).equals(Buffer.concat([all, Buffer.from('\n')]))).toBe(true);
    c.ws.close();
    await c.closed;
  });

  it('refuses a wrong token (4401), the read token (4403) and a stream the world lacks (4404), with reasons', async () => {
    const wrong = connect('echo', 'tok_not-the-token');
    expect(await wrong.closed).toEqual({ code: 4401, reason: 'unauthenticated: the first message must be the world token' });
    const read = connect('echo', tokens.readToken);
    expect(await read.closed).toEqual({ code: 4403, reason: 'read token opens no stream' });
    const unknown = connect('nope');
    expect(await unknown.closed).toEqual({ code: 4404, reason: "unknown stream 'nope'" });
    // An HTTP twin is no stream either.
    expect((await connect('hello').closed).code).toBe(4404);
    expect(wrong.received().byteLength + read.received().byteLength + unknown.received().byteLength).toBe(0);
  });

  it('answers a plain request to a stream 426 upgrade_required', async () => {
    const r = await fetch(`${server.worldApi}/streams/echo`, { headers: { 'x-kit-token': tokens.token } });
    expect(r.status).toBe(426);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('upgrade_required');
  });

  it('closes the socket when the twin closes, and tells the twin when the client closes', async () => {
    const byTwin = connect('echo');
    await byTwin.waitFor('hello\n');
    byTwin.ws.send(Buffer.from('one\nbye\nnever\n'));
    expect(await byTwin.closed).toEqual({ code: 1000, reason: 'closed by the twin' });
    expect(byTwin.received().toString()).toBe('hello\none\nbye\n');

    const byClient = connect('echo');
    await byClient.waitFor('hello\n');
    byClient.ws.send(Buffer.from('save a\n'));
    await byClient.waitFor('saved\n');
    // Sent and closed at once: the twin still reads it before it hears close.
    byClient.ws.send(Buffer.from('save b\n'));
    byClient.ws.close(1000);
    await byClient.closed;
    const closedBefore = (await countsOf()).closed.length;
    expect(await until(() => runner.world.countRecords('echo', 'line') >= 2)).toBe(true);
    expect(await until(() => runner.world.countRecords('echo', 'closed') >= 2)).toBe(true);
    expect(closedBefore).toBeGreaterThanOrEqual(1);
    const closed = (await countsOf()).closed as { value: { lines: number } }[];
    expect(closed.some((c) => c.value.lines === 2)).toBe(true);
  });

  it("closes with 1011 and the twin's failure when its handler throws", async () => {
    const c = connect('echo');
    await c.waitFor('hello\n');
    c.ws.send(Buffer.from('boom\n'));
    const closed = await c.closed;
    expect(closed.code).toBe(1011);
    expect(closed.reason).toMatch(/^handler_error: /);
  });

  /** Pauses the client's reading; sends `flood` lines one by one until the host stops calling the twin. */
  async function floodUntilHeldBack(c: Client): Promise<number> {
    const before = runner.world.countRecords('echo', 'flood');
    (c.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    for (let i = 1; i <= 60; i++) {
      c.ws.send(Buffer.from('flood\n'));
      // A call takes milliseconds; one not made within 2.5 s is being held back.
      if (!(await until(() => runner.world.countRecords('echo', 'flood') - before >= i, 2500))) return i;
    }
    return 0;
  }

  it('holds the twin back while the client does not read (backpressure toward the client), and loses nothing', async () => {
    const c = connect('echo');
    await c.waitFor('hello\n');
    const before = runner.world.countRecords('echo', 'flood');
    const sent = await floodUntilHeldBack(c);
    expect(sent).toBeGreaterThan(0);
    expect(runner.world.countRecords('echo', 'flood') - before).toBe(sent - 1);
    (c.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    const got = await c.waitFor(6 + sent * FLOOD_BYTES);
    expect(got.byteLength).toBe(6 + sent * FLOOD_BYTES);
    expect(runner.world.countRecords('echo', 'flood') - before).toBe(sent);
    c.ws.close();
    await c.closed;
  });

  it('finds the end of DATA split across messages, for a client that sends the message without waiting for 354', async () => {
    const c = connect('smtp');
    await c.waitFor('220 ');
    c.ws.send(Buffer.from('EHLO eager.test\r\nMAIL FROM:<a@eager.test>\r\nRCPT TO:<b@eager.test>\r\nDATA\r\nSubject: eager\r\n\r\nbody\r\n'));
    await c.waitFor('354 ');
    // The terminator's CRLF came with the last message; only '.\r\n' follows.
    c.ws.send(Buffer.from('.\r'));
    c.ws.send(Buffer.from('\n'));
    const all = (await c.waitFor('queued as')).toString();
    const id = /queued as (msg_\w+)/.exec(all)![1]!;
    const msg = await fetch(`${server.worldUrl}/smtp/messages/${id}`, { headers: { 'x-kit-token': tokens.token } });
    expect(await msg.json()).toMatchObject({ subject: 'eager', text: 'body\n' });
    c.ws.close();
    await c.closed;
  });

  it('takes a large SMTP DATA in 64 KiB messages as one call, and the message is whole', async () => {
    const c = connect('smtp');
    await c.waitFor('220 ');
    c.ws.send(Buffer.from('EHLO big.test\r\nMAIL FROM:<a@big.test>\r\nRCPT TO:<b@big.test>\r\nDATA\r\n'));
    await c.waitFor('354 ');
    const line = `${'z'.repeat(76)}\r\n`;
    const body = Buffer.from(`Subject: big\r\n\r\n${line.repeat(30_000)}`); // ~2.3 MB
    const headBefore = runner.world.head('smtp');
    for (let at = 0; at < body.length; at += 64 * 1024) c.ws.send(body.subarray(at, at + 64 * 1024));
    c.ws.send(Buffer.from('.\r\nQUIT\r\n'));
    const all = (await c.waitFor('221 ')).toString();
    const id = /queued as (msg_\w+)/.exec(all)![1]!;
    expect(runner.world.head('smtp')).toBe(headBefore + 1);
    const msg = await fetch(`${server.worldUrl}/smtp/messages/${id}`, { headers: { 'x-kit-token': tokens.token } });
    const json = (await msg.json()) as { size: number; text: string; subject: string };
    expect([json.size, json.subject, json.text.length]).toEqual([body.length, 'big', 78 * 30_000 - 30_000]);
    expect((await c.closed).code).toBe(1000);
  });
});

describe('the attacher (sdk/attach/streams.ts)', () => {
  it("pipes an app's TCP connection, and an app that stops reading holds the twin back through it", async () => {
    const url = `${server.worldApi.replace(/^http/, 'ws')}/streams/echo`;
    const listeners = await startStreamListeners({ streams: { echo: { url, protocol: 'echo', env: { ECHO_HOST: '{host}', ECHO_PORT: '{port}', ECHO_URL: 'echo://{host}:{port}' } } } }, tokens.token);
    try {
      const port = listeners.ports['echo']!;
      expect(listeners.env).toEqual({ ECHO_HOST: '127.0.0.1', ECHO_PORT: String(port), ECHO_URL: `echo://127.0.0.1:${port}` });
      const app: Socket = createConnection({ host: '127.0.0.1', port });
      const chunks: Buffer[] = [];
      app.on('data', (b: Buffer) => chunks.push(b));
      const size = () => chunks.reduce((n, b) => n + b.byteLength, 0);
      expect(await until(() => Buffer.concat(chunks).toString() === 'hello\n')).toBe(true);
      const before = runner.world.countRecords('echo', 'flood');
      app.pause();
      let sent = 0;
      for (let i = 1; i <= 60; i++) {
        app.write('flood\n');
        sent = i;
        if (!(await until(() => runner.world.countRecords('echo', 'flood') - before >= i, 2500))) break;
      }
      expect(runner.world.countRecords('echo', 'flood') - before).toBe(sent - 1);
      app.resume();
      expect(await until(() => size() >= 6 + sent * FLOOD_BYTES, 20_000)).toBe(true);
      expect(size()).toBe(6 + sent * FLOOD_BYTES);
      app.end();
      await new Promise<void>((resolve) => app.on('close', () => resolve()));
    } finally {
      await listeners.close();
    }
  });
});

async function countsOf(): Promise<{ lines: number; closed: { id: string; value: unknown }[]; floods: number }> {
  const r = await fetch(`${server.worldUrl}/echo/counts`, { headers: { 'x-kit-token': tokens.token } });
  return (await r.json()) as { lines: number; closed: { id: string; value: unknown }[]; floods: number };
}
