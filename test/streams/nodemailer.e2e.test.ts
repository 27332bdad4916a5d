/**
 * Proof with a real mail client: nodemailer, configured only from the variables the attacher
 * sets (`SMTP_HOST`, `SMTP_PORT`), sends through the attacher's loopback listener, the stream
 * WebSocket and a served world (the single-world server over a local world in its worker
 * thread, as `kit world serve` runs it). The message is then read back from the mailbox API.
 * Needs the compiled worker (`make build`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import nodemailer from 'nodemailer';
import { openLocalWorld } from '../../runtime/runner/index.js';
import { buildGuestRuntime } from '../../sdk/twin/build.js';
import { HELLO, SMTP, twinBundle } from './helpers.js';
import { startSingleWorldServer, type SingleWorldServer } from '../../host/single-world.js';
import { parseAttachManifest } from '../../sdk/attach/manifest.js';
import { startStreamListeners, type StreamListeners } from '../../sdk/attach/streams.js';

const tokens = { token: 'tok_mail-write-token-0123456789abcdef', readToken: 'tok_r_mail-read-token-0123456789abcdef' };
let dir: string;
let server: SingleWorldServer;
let listeners: StreamListeners;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kit-mail-'));
  const twins = await Promise.all([twinBundle(HELLO), twinBundle(SMTP)]);
  const world = await openLocalWorld({ dir, org: 'local', world: 'mail', twins, guestRuntime: await buildGuestRuntime() });
  server = await startSingleWorldServer({
    world,
    org: 'local',
    worldName: 'mail',
    tokens,
    twins: twins.map((t) => ({
      vendor: t.vendor,
      requestScopes: t.manifest.requestScopes,
      protocol: t.manifest.protocol,
      hosts: t.manifest.models.hosts,
      ...(t.manifest.models.endpointEnv ? { endpointEnv: t.manifest.models.endpointEnv } : {}),
    })),
  });
  const manifest = parseAttachManifest(await (await fetch(`${server.worldUrl}/.well-known/kit-world`, { headers: { 'x-kit-token': tokens.token } })).json());
  listeners = await startStreamListeners(manifest, tokens.token);
});
afterAll(async () => {
  await listeners?.close();
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const api = async (path: string, init: RequestInit = {}) => fetch(`${server.worldUrl}/smtp${path}`, { ...init, headers: { 'x-kit-token': tokens.token, ...(init.headers ?? {}) } });

describe('nodemailer through the stream', () => {
  it('points SMTP_HOST and SMTP_PORT at a loopback listener', () => {
    expect(listeners.env['SMTP_HOST']).toBe('127.0.0.1');
    expect(listeners.env['SMTP_PORT']).toBe(String(listeners.ports['smtp']));
  });

  it('sends html, text, a UTF-8 subject, an inline image and a 1.5 MB attachment; the mailbox gives them back parsed', async () => {
    const env = listeners.env;
    const transport = nodemailer.createTransport({ host: env['SMTP_HOST'], port: Number(env['SMTP_PORT']), secure: false, auth: { user: 'app', pass: tokens.token } });
    const big = Buffer.alloc(1_500_000);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7919) % 251;
    const info = await transport.sendMail({
      from: '"Zoë Ünicode" <zoe@shop.test>',
      to: 'Bob <bob@example.test>, carol@example.test',
      bcc: 'audit@shop.test',
      subject: 'Grüße aus der Welt ✓',
      text: 'Hello Bob,\n.a line that starts with a dot\nBye',
      html: '<p>Hello <b>Bob</b> <img src="cid:logo@shop"></p>',
      attachments: [
        { filename: 'notes.txt', content: 'plain attachment ✓' },
        { filename: 'logo.png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]), cid: 'logo@shop' },
        { filename: 'data.bin', content: big, contentType: 'application/octet-stream' },
      ],
    });
    transport.close();
    expect(info.accepted).toEqual(['bob@example.test', 'carol@example.test', 'audit@shop.test']);
    const id = /queued as (msg_\w+)/.exec(info.response)![1]!;

    const list = (await (await api('/messages')).json()) as { data: { id: string }[] };
    expect(list.data.map((m) => m.id)).toContain(id);
    const msg = (await (await api(`/messages/${id}`)).json()) as Record<string, unknown> & { attachments: { filename: string; size: number; contentType: string; contentId: string | null; disposition: string }[] };
    expect(msg).toMatchObject({
      subject: 'Grüße aus der Welt ✓',
      from: [{ name: 'Zoë Ünicode', address: 'zoe@shop.test' }],
      to: [
        { name: 'Bob', address: 'bob@example.test' },
        { name: '', address: 'carol@example.test' },
      ],
      bcc: [{ name: '', address: 'audit@shop.test' }],
      text: 'Hello Bob,\n.a line that starts with a dot\nBye',
      html: '<p>Hello <b>Bob</b> <img src="cid:logo@shop"></p>',
      envelope: { from: 'zoe@shop.test', to: ['bob@example.test', 'carol@example.test', 'audit@shop.test'], auth: 'app' },
    });
    expect(msg['messageId']).toBe(info.messageId);
    // In MIME order: nodemailer puts the inline image beside the html (multipart/related), before the files.
    expect(msg.attachments.map((a) => [a.filename, a.contentType, a.size, a.disposition])).toEqual([
      ['logo.png', 'image/png', 8, 'inline'],
      ['notes.txt', 'text/plain', Buffer.byteLength('plain attachment ✓'), 'attachment'],
      ['data.bin', 'application/octet-stream', big.length, 'attachment'],
    ]);
    expect(msg.attachments[0]!.contentId).toBe('logo@shop');
    const notes = await api(`/messages/${id}/attachments/1`);
    expect(notes.headers.get('content-type')).toBe('text/plain');
    expect(await notes.text()).toBe('plain attachment ✓');
    const data = await api(`/messages/${id}/attachments/2`);
    expect(Buffer.from(await data.arrayBuffer()).equals(big)).toBe(true);
    expect((await api(`/messages/${id}/attachments/3`)).status).toBe(404);
    // The raw message keeps the sender's bytes (its size is what the mailbox reports).
    const raw = Buffer.from(await (await api(`/messages/${id}/raw`)).arrayBuffer());
    expect(raw.byteLength).toBe(msg['size']);
    expect(raw.toString('latin1')).toContain('Content-Type: multipart/mixed');
  });

  it('closes the app side when the stream is refused, and says why', async () => {
    const refusals: string[] = [];
    const manifest = parseAttachManifest(await (await fetch(`${server.worldUrl}/.well-known/kit-world`, { headers: { 'x-kit-token': tokens.token } })).json());
    const wrong = await startStreamListeners(manifest, 'tok_wrong', { onRefused: (id, code, reason) => refusals.push(`${id} ${code} ${reason}`) });
    try {
      const socket = createConnection({ host: '127.0.0.1', port: wrong.ports['smtp']! });
      const got: Buffer[] = [];
      socket.on('data', (b: Buffer) => got.push(b));
      await new Promise<void>((resolve) => socket.on('close', () => resolve()));
      expect(Buffer.concat(got).byteLength).toBe(0);
      expect(refusals).toEqual(['smtp 4401 unauthenticated: the first message must be the world token']);
    } finally {
      await wrong.close();
    }
  });

  it('ends the stream when the app hangs up, and the twin hears QUIT and close in order', async () => {
    const socket = createConnection({ host: '127.0.0.1', port: listeners.ports['smtp']! });
    const got: Buffer[] = [];
    socket.on('data', (b: Buffer) => got.push(b));
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    socket.write('EHLO raw.test\r\nQUIT\r\n');
    await new Promise<void>((resolve) => socket.on('close', () => resolve()));
    const text = Buffer.concat(got).toString();
    expect(text.startsWith('220 ')).toBe(true);
    expect(text.endsWith('221 2.0.0 Bye\r\n')).toBe(true);
  });
});
