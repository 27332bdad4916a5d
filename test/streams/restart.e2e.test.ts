/**
 * A world whose worker is ended by the watchdog (a stream handler that never returns) loses
 * only the connection that ran it: the state of every other connection lives in the host, so
 * an SMTP transaction open on another connection goes on in the new worker. Needs the
 * compiled worker (`make build`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { openLocalWorld } from '../../runtime/runner/index.js';
import { buildGuestRuntime } from '../../sdk/twin/build.js';
import { startSingleWorldServer, type SingleWorldServer } from '../../host/single-world.js';
import { ECHO, SMTP, twinBundle } from './helpers.js';

const tokens = { token: 'tok_restart-write-token-0123456789abcdef', readToken: 'tok_r_restart-read-token-0123456789abcdef' };
let dir: string;
let server: SingleWorldServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kit-restart-'));
  const twins = await Promise.all([twinBundle(ECHO), twinBundle(SMTP)]);
  const world = await openLocalWorld({ dir, org: 'local', world: 'r', twins, guestRuntime: await buildGuestRuntime(), callTimeoutMs: 1500 });
  server = await startSingleWorldServer({ world, org: 'local', worldName: 'r', tokens, twins: twins.map((t) => ({ vendor: t.vendor, requestScopes: [], protocol: t.manifest.protocol })) });
});
afterAll(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function open(id: string) {
  const ws = new WebSocket(`${server.worldApi.replace(/^http/, 'ws')}/streams/${id}`);
  let text = '';
  let wake: (() => void) | null = null;
  ws.on('message', (d: Buffer) => {
    text += d.toString('latin1');
    wake?.();
  });
  ws.on('open', () => ws.send(tokens.token));
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code: number, reason: Buffer) => resolve({ code, reason: reason.toString() })));
  const waitFor = async (s: string): Promise<string> => {
    while (!text.includes(s)) await new Promise<void>((r) => (wake = r));
    return text;
  };
  return { ws, waitFor, closed, get text() {
    return text;
  } };
}

describe('a stream world restarted by its watchdog', () => {
  it('says 4404 for a stream the world lacks, through the worker', async () => {
    expect(await open('nope').closed).toEqual({ code: 4404, reason: "unknown stream 'nope'" });
  });

  it('closes the connection that hung it (1011 handler_timeout) and keeps the others going', async () => {
    const mail = open('smtp');
    await mail.waitFor('220 ');
    mail.ws.send('EHLO keep.test\r\nMAIL FROM:<a@keep.test>\r\n');
    await mail.waitFor('250 2.1.0 Ok');

    const hang = open('echo');
    await hang.waitFor('hello\n');
    hang.ws.send('spin\n');
    const closed = await hang.closed;
    expect(closed.code).toBe(1011);
    expect(closed.reason).toMatch(/^handler_timeout: /);

    // The transaction begun before the restart carries on: its state was never in the worker.
    mail.ws.send('RCPT TO:<b@keep.test>\r\nDATA\r\n');
    await mail.waitFor('354 ');
    mail.ws.send('Subject: after restart\r\n\r\nstill here\r\n.\r\n');
    const done = await mail.waitFor('queued as');
    const id = /queued as (msg_\w+)/.exec(done)![1]!;
    const msg = await fetch(`${server.worldUrl}/smtp/messages/${id}`, { headers: { 'x-kit-token': tokens.token } });
    expect(await msg.json()).toMatchObject({ subject: 'after restart', envelope: { from: 'a@keep.test', helo: 'keep.test', to: ['b@keep.test'] } });
    mail.ws.close();
    await mail.closed;
  });
});
