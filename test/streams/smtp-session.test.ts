/**
 * The SMTP twin through the real sandbox and engine (in-process world, no sockets): a session
 * is a series of `streamCall`s carrying the connection's state, as the host drives it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { HELLO, openStreamWorld, SMTP, type StreamTestWorld as TestWorld } from './helpers.js';
import type { StreamResult } from '../../runtime/runner/types.js';

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/** A client of one connection: each `send` is one data call; answers come back as text. */
async function connect(w: TestWorld, connId = 'conn_1') {
  let state: unknown = null;
  let closed = false;
  const call = async (event: 'open' | 'data' | 'close', text?: string): Promise<StreamResult> => {
    const r = await w.runner.streamCall({ twin: 'smtp', connId, event, state, ...(text === undefined ? {} : { bytes: new Uint8Array(Buffer.from(text, 'latin1')) }) });
    state = r.state;
    if (r.close) closed = true;
    return r;
  };
  const greeting = Buffer.from((await call('open')).send).toString('latin1');
  return {
    greeting,
    send: async (text: string) => Buffer.from((await call('data', text)).send).toString('latin1'),
    call,
    get closed() {
      return closed;
    },
    get state() {
      return state as Record<string, unknown>;
    },
  };
}

describe('smtp twin: a session in the sandbox', () => {
  it('greets, answers EHLO with its extensions, and takes a pipelined transaction in one call', async () => {
    world = await openStreamWorld([SMTP]);
    const c = await connect(world);
    expect(c.greeting).toMatch(/^220 \S+ ESMTP/);
    const ehlo = await c.send('EHLO client.test\r\n');
    expect(ehlo.split('\r\n').filter(Boolean)).toEqual([
      '250-smtp.twinkit.test Hello client.test',
      '250-SIZE 3145728',
      '250-8BITMIME',
      '250-PIPELINING',
      '250-AUTH PLAIN LOGIN',
      '250-ENHANCEDSTATUSCODES',
      '250 SMTPUTF8',
    ]);
    const head = world.runner.world.head('smtp');
    const replies = await c.send('MAIL FROM:<ada@example.test> SIZE=120 BODY=8BITMIME\r\nRCPT TO:<bob@example.test>\r\nRCPT TO:<carol@example.test>\r\nDATA\r\n');
    expect(replies).toBe('250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n250 2.1.5 Ok\r\n354 End data with <CR><LF>.<CR><LF>\r\n');
    // Nothing was written yet: a transaction is connection state, not twin state.
    expect(world.runner.world.head('smtp')).toBe(head);
    const done = await c.send('Subject: Hi\r\nFrom: Ada <ada@example.test>\r\nTo: bob@example.test\r\n\r\n..leading dot\r\nbody\r\n.\r\nQUIT\r\n');
    expect(done).toMatch(/^250 2\.0\.0 Ok: queued as (msg_\w+)\r\n221 2\.0\.0 Bye\r\n$/);
    expect(c.closed).toBe(true);
    expect(world.runner.world.head('smtp')).toBe(head + 1);
    const id = /queued as (msg_\w+)/.exec(done)![1]!;
    const msg = await world.vendor('GET', `/smtp/messages/${id}`);
    expect(msg.status).toBe(200);
    expect(msg.json).toMatchObject({
      id,
      subject: 'Hi',
      envelope: { from: 'ada@example.test', to: ['bob@example.test', 'carol@example.test'], helo: 'client.test', auth: null, body: '8BITMIME' },
      from: [{ name: 'Ada', address: 'ada@example.test' }],
      to: [{ name: '', address: 'bob@example.test' }],
      bcc: [{ name: '', address: 'carol@example.test' }],
      // dot-unstuffed
      text: '.leading dot\nbody\n',
    });
    const raw = await world.vendor('GET', `/smtp/messages/${id}/raw`);
    expect(raw.text).toBe('Subject: Hi\r\nFrom: Ada <ada@example.test>\r\nTo: bob@example.test\r\n\r\n.leading dot\r\nbody\r\n');
    expect(msg.json.size).toBe(raw.text.length);
    const timeline = await world.api('GET', '/timeline?twin=smtp');
    expect(timeline.json.entries[0].entry.cause).toMatchObject({ kind: 'request', method: 'STREAM', route: 'stream.data', requestId: 'conn_1' });
  });

  it('refuses out-of-order and malformed commands with real reply codes, and keeps the session usable', async () => {
    world = await openStreamWorld([SMTP]);
    const c = await connect(world);
    expect(await c.send('MAIL FROM:<a@b.test>\r\n')).toBe('503 5.5.1 Error: send HELO/EHLO first\r\n');
    expect(await c.send('EHLO\r\n')).toBe('501 5.5.4 Syntax: EHLO hostname\r\n');
    expect(await c.send('FROB\r\n')).toBe('500 5.5.2 Error: command not recognized\r\n');
    await c.send('EHLO x.test\r\n');
    expect(await c.send('RCPT TO:<b@c.test>\r\n')).toBe('503 5.5.1 Error: need MAIL command\r\n');
    expect(await c.send('DATA\r\n')).toBe('503 5.5.1 Error: need MAIL command\r\n');
    expect(await c.send('MAIL FROM:a@b.test\r\n')).toBe('501 5.5.4 Syntax: MAIL FROM:<address>\r\n');
    expect(await c.send('MAIL FROM:<not an address>\r\n')).toMatch(/^501 5\.1\.7/);
    expect(await c.send('MAIL FROM:<a@b.test> SIZE=99999999\r\n')).toBe('552 5.3.4 Message size exceeds fixed maximum message size\r\n');
    expect(await c.send('MAIL FROM:<a@b.test> FOO=1\r\n')).toBe('555 5.5.4 Unsupported option: FOO\r\n');
    expect(await c.send('MAIL FROM:<a@b.test>\r\n')).toBe('250 2.1.0 Ok\r\n');
    expect(await c.send('MAIL FROM:<a@b.test>\r\n')).toBe('503 5.5.1 Error: nested MAIL command\r\n');
    expect(await c.send('DATA\r\n')).toBe('554 5.5.1 Error: no valid recipients\r\n');
    expect(await c.send('RCPT TO:<nobody>\r\n')).toMatch(/^501 5\.1\.3/);
    expect(await c.send('AUTH PLAIN AGEAYg==\r\n')).toBe('503 5.5.1 Error: MAIL transaction in progress\r\n');
    expect(await c.send('RSET\r\nNOOP\r\n')).toBe('250 2.0.0 Ok\r\n250 2.0.0 Ok\r\n');
    expect(await c.send('AUTH CRAM-MD5\r\n')).toBe('504 5.5.4 Unrecognized authentication type: CRAM-MD5\r\n');
    expect(await c.send('AUTH PLAIN !!!!\r\n')).toBe('501 5.5.2 Error: cannot decode response\r\n');
    expect(await c.send(`${'X'.repeat(5000)}\r\nNOOP\r\n`)).toBe('500 5.5.2 Error: line too long\r\n250 2.0.0 Ok\r\n');
    expect(await c.send('STARTTLS\r\n')).toMatch(/^502 /);
    expect(world.runner.world.head('smtp')).toBe(0);
  });

  it('takes AUTH PLAIN and LOGIN, with the challenge on its own line, and records the user', async () => {
    world = await openStreamWorld([SMTP]);
    const plain = await connect(world, 'conn_p');
    await plain.send('EHLO x.test\r\n');
    expect(await plain.send('AUTH PLAIN\r\n')).toBe('334 \r\n');
    expect(await plain.send(`${Buffer.from('\0ada\0secret').toString('base64')}\r\n`)).toBe('235 2.7.0 Authentication successful\r\n');
    expect(await plain.send('AUTH PLAIN AGEAYg==\r\n')).toBe('503 5.5.1 Error: already authenticated\r\n');

    const login = await connect(world, 'conn_l');
    await login.send('EHLO x.test\r\n');
    expect(await login.send('AUTH LOGIN\r\n')).toBe('334 VXNlcm5hbWU6\r\n');
    expect(await login.send(`${Buffer.from('grace').toString('base64')}\r\n`)).toBe('334 UGFzc3dvcmQ6\r\n');
    expect(await login.send(`${Buffer.from('pw').toString('base64')}\r\n`)).toBe('235 2.7.0 Authentication successful\r\n');
    const done = await login.send('MAIL FROM:<>\r\nRCPT TO:<x@y.test>\r\nDATA\r\n');
    expect(done.endsWith('354 End data with <CR><LF>.<CR><LF>\r\n')).toBe(true);
    // The terminator split across two arrivals.
    expect(await login.send('Subject: s\r\n\r\nhi\r\n')).toBe('');
    expect(login.state['phase']).toBe('data');
    const queued = await login.send('.\r\n');
    const id = /queued as (msg_\w+)/.exec(queued)![1]!;
    const msg = await world.vendor('GET', `/smtp/messages/${id}`);
    expect(msg.json.envelope).toMatchObject({ from: '', auth: 'grace' });
    expect(JSON.stringify(msg.json)).not.toContain('pw');
  });

  it('refuses a message over SIZE with 552 once it ends, keeps nothing of it, and takes the next one', async () => {
    world = await openStreamWorld([SMTP]);
    const c = await connect(world);
    await c.send('EHLO x.test\r\nMAIL FROM:<a@b.test>\r\nRCPT TO:<c@d.test>\r\nDATA\r\n');
    const line = `${'y'.repeat(998)}\r\n`;
    const chunk = line.repeat(1100); // ~1.1 MB
    for (let i = 0; i < 3; i++) expect(await c.send(chunk)).toBe('');
    expect(c.state['overflow']).toBeGreaterThan(0);
    expect((c.state['pending'] as string).length).toBeLessThanOrEqual(4);
    expect(await c.send('.\r\n')).toBe('552 5.3.4 Message size exceeds fixed maximum message size\r\n');
    expect(world.runner.world.head('smtp')).toBe(0);
    expect(await c.send('MAIL FROM:<a@b.test>\r\nRCPT TO:<c@d.test>\r\nDATA\r\n')).toMatch(/354/);
    expect(await c.send('\r\nsmall\r\n.\r\n')).toMatch(/^250 /);
    expect(world.runner.world.head('smtp')).toBe(1);
  });

  it('takes a message whose address headers and body are shaped to make a parser rescan, within the watchdog', async () => {
    world = await openStreamWorld([SMTP]);
    const c = await connect(world);
    await c.send('EHLO x.test\r\nMAIL FROM:<a@b.test>\r\nRCPT TO:<c@d.test>\r\nDATA\r\n');
    // Each header took seconds (comments, group colons) before the scanners were made one-pass.
    const colons = `${'x'.repeat(200_000)}@${':'.repeat(200_000)}`;
    const message = [
      `To: ${'('.repeat(500_000)}c@d.test`,
      `Cc: ${colons}`,
      `Reply-To: "${'\\'.repeat(200_000)}" <r@d.test>`,
      'Subject: hostile',
      'Content-Type: text/plain',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      `hi${' '.repeat(500_000)}=`,
      'there',
      '',
    ].join('\r\n');
    const done = await c.send(`${message}.\r\n`);
    const id = /^250 2\.0\.0 Ok: queued as (msg_\w+)\r\n$/.exec(done)?.[1];
    expect(id).toBeDefined();
    const msg = (await world.vendor('GET', `/smtp/messages/${id}`)).json;
    // Compared by length and equality, so a failure does not print megabytes.
    expect([msg.subject, msg.to[0].address.length, msg.cc[0].address === colons, msg.replyTo[0].address, msg.replyTo[0].name === '\\'.repeat(100_000), msg.text === `hi${' '.repeat(500_000)}there\n`]).toEqual([
      'hostile',
      500_008,
      true,
      'r@d.test',
      true,
      true,
    ]);
  });

  it('serves the mailbox: list newest first with filters and a cursor, delete one, clear', async () => {
    world = await openStreamWorld([SMTP]);
    const c = await connect(world);
    await c.send('EHLO x.test\r\n');
    const ids: string[] = [];
    for (const [to, subject] of [['a@x.test', 'one'], ['b@x.test', 'two'], ['a@x.test', 'three']] as const) {
      const r = await c.send(`MAIL FROM:<s@x.test>\r\nRCPT TO:<${to}>\r\nDATA\r\n`);
      expect(r).toMatch(/354/);
      ids.push(/queued as (msg_\w+)/.exec(await c.send(`To: ${to}\r\nSubject: ${subject}\r\n\r\nbody\r\n.\r\n`))![1]!);
    }
    const all = await world.vendor('GET', '/smtp/messages');
    expect(all.json.data.map((m: { subject: string }) => m.subject)).toEqual(['three', 'two', 'one']);
    const toA = await world.vendor('GET', '/smtp/messages?to=a@x.test&limit=1');
    expect([toA.json.data.map((m: { id: string }) => m.id), toA.json.has_more]).toEqual([[ids[2]], true]);
    const next = await world.vendor('GET', `/smtp/messages?to=a@x.test&limit=1&starting_after=${ids[2]}`);
    expect([next.json.data.map((m: { id: string }) => m.id), next.json.has_more]).toEqual([[ids[0]], false]);
    expect((await world.vendor('GET', '/smtp/messages?limit=0')).status).toBe(400);
    expect((await world.vendor('DELETE', `/smtp/messages/${ids[1]}`)).json).toEqual({ id: ids[1], object: 'message', deleted: true });
    expect((await world.vendor('GET', `/smtp/messages/${ids[1]}`)).status).toBe(404);
    expect((await world.vendor('GET', '/smtp/twin/store/messages')).json.count).toBe(2);
    expect((await world.vendor('DELETE', '/smtp/messages')).json).toEqual({ object: 'list', deleted: 2, has_more: false });
    expect((await world.vendor('GET', '/smtp/messages')).json.data).toEqual([]);
  });

  it('gives messages ordered ids, and lists new ones after those a counter-keeping mailbox made before', async () => {
    world = await openStreamWorld([SMTP]);
    // A mailbox as the twin left it before it numbered messages by log position: a random id,
    // seq 1 from `message_counter/seq`, written at a later position than its seq.
    const w = world.runner.world;
    for (let i = 0; i < 3; i++) w.append('smtp', { cause: { kind: 'system', reason: 'a mailbox kept by an older twin' }, writes: [{ type: 'pad', id: String(i), value: i }] });
    const old = { id: 'msg_zzOldRandom000', object: 'message', receivedAt: '2025-12-31T00:00:00.000Z', envelope: { from: 's@x.test', to: ['a@x.test'], helo: 'x.test' }, size: 10, messageId: null, subject: 'older', date: null, from: [], to: [], cc: [], bcc: [], replyTo: [], headers: [], text: 'body', html: null, attachments: [], seq: 1 };
    w.append('smtp', { cause: { kind: 'system', reason: 'a mailbox kept by an older twin' }, writes: [
      { type: 'message', id: old.id, value: old },
      { type: 'message_by_seq', id: '000000000001', value: { id: old.id } },
      { type: 'message_raw', id: old.id, value: { raw: 'Subject: older\r\n\r\nbody\r\n' } },
      { type: 'message_counter', id: 'seq', value: { next: 2 } },
    ] });
    const c = await connect(world);
    await c.send('EHLO x.test\r\n');
    const ids: string[] = [];
    for (const subject of ['one', 'two']) {
      await c.send('MAIL FROM:<s@x.test>\r\nRCPT TO:<a@x.test>\r\nDATA\r\n');
      ids.push(/queued as (msg_\w+)/.exec(await c.send(`Subject: ${subject}\r\n\r\nbody\r\n.\r\n`))![1]!);
    }
    expect(ids[0]! < ids[1]!).toBe(true);
    const all = await world.vendor('GET', '/smtp/messages');
    expect(all.json.data.map((m: { subject: string }) => m.subject)).toEqual(['two', 'one', 'older']);
    const page = await world.vendor('GET', `/smtp/messages?limit=1&starting_after=${ids[0]}`);
    expect(page.json.data.map((m: { id: string }) => m.id)).toEqual([old.id]);
  });

  it('refuses a stream call to a twin without a stream or with a malformed connection id', async () => {
    world = await openStreamWorld([SMTP, HELLO]);
    await expect(world.runner.streamCall({ twin: 'hello', connId: 'c1', event: 'open', state: null })).rejects.toMatchObject({ code: 'unknown_stream' });
    await expect(world.runner.streamCall({ twin: 'nope', connId: 'c1', event: 'open', state: null })).rejects.toMatchObject({ code: 'unknown_stream' });
    await expect(world.runner.streamCall({ twin: 'smtp', connId: 'bad id!', event: 'open', state: null })).rejects.toThrow(TypeError);
    const c = await connect(world);
    expect(await c.send('NOOP\r\n')).toBe('250 2.0.0 Ok\r\n');
  });
});
