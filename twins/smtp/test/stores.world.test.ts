/**
 * The mailbox as a list reads it: the `messages` store's pages of summaries (newest first,
 * `starting_after` and `ending_before`, the list's filters), the same cursors on
 * `GET /messages`, and what an attachment's answer tells a browser. Messages are composed by
 * nodemailer and delivered over an SMTP session through the real sandbox.
 */
import { afterEach, describe, expect, it } from 'vitest';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';
import { openTestWorld, type TestWorld } from '../../../test/helpers/world.js';

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });

/** Delivers each mail over one SMTP connection; answers their ids in the order sent. */
async function deliver(w: TestWorld, mails: Mail.Options[]): Promise<string[]> {
  let state: unknown = null;
  const send = async (event: 'open' | 'data', text?: string): Promise<string> => {
    const r = await w.runner.streamCall({ twin: 'smtp', connId: 'conn_store', event, state, ...(text === undefined ? {} : { bytes: new Uint8Array(Buffer.from(text, 'latin1')) }) });
    state = r.state;
    return Buffer.from(r.send ?? new Uint8Array()).toString('latin1');
  };
  await send('open');
  await send('data', 'EHLO store.test\r\n');
  const ids: string[] = [];
  for (const mail of mails) {
    const info = (await composer.sendMail(mail)) as { message: Buffer; envelope: { from: string; to: string[] } };
    const body = info.message.toString('latin1').replace(/^\./gm, '..');
    const rcpt = info.envelope.to.map((a) => `RCPT TO:<${a}>\r\n`).join('');
    const done = await send('data', `MAIL FROM:<${info.envelope.from}>\r\n${rcpt}DATA\r\n${body}\r\n.\r\n`);
    const id = /queued as (msg_\w+)/.exec(done)?.[1];
    if (id === undefined) throw new Error(`not delivered: ${done}`);
    ids.push(id);
  }
  return ids;
}

interface Summary {
  id: string;
  subject: string | null;
  from: { name: string; address: string }[];
  to: { name: string; address: string }[];
  envelope: { from: string; to: string[] };
  size: number;
  attachments: number;
  snippet: string;
}
interface StorePage {
  count: number;
  messages: Summary[];
  has_more: boolean;
}

const store = async (w: TestWorld, query: string): Promise<StorePage> => {
  const res = await w.vendor('GET', `/smtp/twin/store/messages${query}`);
  expect(res.status).toBe(200);
  return res.json as StorePage;
};
const ids = (page: { messages?: { id: string }[]; data?: { id: string }[] }) => (page.messages ?? page.data ?? []).map((m) => m.id);

describe('smtp: the messages store', () => {
  it('pages summaries newest first, forward with starting_after and back with ending_before, as GET /messages does', async () => {
    world = await openTestWorld({ vendors: ['smtp'] });
    const sent = await deliver(world, [1, 2, 3, 4, 5].map((n) => ({ from: 'Shop <shop@x.test>', to: `user${n}@x.test`, subject: `Mail ${n}`, text: `Body ${n}` })));
    const [m1, m2, m3, m4, m5] = sent as [string, string, string, string, string];

    const first = await store(world, '?limit=2');
    expect(first).toMatchObject({ count: 5, has_more: true });
    expect(ids(first)).toEqual([m5, m4]);
    const second = await store(world, `?limit=2&starting_after=${m4}`);
    expect([ids(second), second.has_more]).toEqual([[m3, m2], true]);
    const last = await store(world, `?limit=2&starting_after=${m2}`);
    expect([ids(last), last.has_more]).toEqual([[m1], false]);
    // Back: the page just newer than a message, still newest first; has_more says newer ones remain.
    const back = await store(world, `?limit=2&ending_before=${m2}`);
    expect([ids(back), back.has_more]).toEqual([[m4, m3], true]);
    const top = await store(world, `?limit=2&ending_before=${m3}`);
    expect([ids(top), top.has_more]).toEqual([[m5, m4], false]);

    // The vendor API's list takes the same cursors and answers the same pages.
    for (const query of ['?limit=2', `?limit=2&starting_after=${m4}`, `?limit=2&ending_before=${m2}`, `?limit=2&ending_before=${m3}`]) {
      const listed = await world.vendor('GET', `/smtp/messages${query}`);
      const page = await store(world, query);
      expect([ids(listed.json), listed.json.has_more], query).toEqual([ids(page), page.has_more]);
    }
    // No limit: the newest 100, as the store always answered.
    expect(ids(await store(world, ''))).toEqual([m5, m4, m3, m2, m1]);
  });

  it('summarises who, to whom, the subject, the size, the attachments and a snippet of the text or of the HTML', async () => {
    world = await openTestWorld({ vendors: ['smtp'] });
    const [plain, html] = await deliver(world, [
      { from: '"Zoë" <zoe@shop.test>', to: 'Bob <bob@x.test>, carol@x.test', bcc: 'audit@shop.test', subject: 'Grüße ✓', text: `Hello Bob,\n\n  your order   shipped.\n${'long '.repeat(60)}`, attachments: [{ filename: 'a.txt', content: 'a' }, { filename: 'b.txt', content: 'b' }] },
      { from: 'news@shop.test', to: 'bob@x.test', subject: 'News', html: '<html><head><title>T</title><style>p{color:red}</style></head><body><p>Caf&eacute; &amp; tea&nbsp;&#8364;5</p><script>evil()</script><p>Tomorrow</p></body></html>' },
    ]);
    const page = await store(world, '');
    const byId = new Map(page.messages.map((m) => [m.id, m]));
    const p = byId.get(plain!)!;
    expect(p).toMatchObject({
      subject: 'Grüße ✓',
      from: [{ name: 'Zoë', address: 'zoe@shop.test' }],
      to: [
        { name: 'Bob', address: 'bob@x.test' },
        { name: '', address: 'carol@x.test' },
      ],
      envelope: { from: 'zoe@shop.test', to: ['bob@x.test', 'carol@x.test', 'audit@shop.test'] },
      attachments: 2,
    });
    // Whitespace collapsed, cut at 160 characters with an ellipsis.
    expect(p.snippet.startsWith('Hello Bob, your order shipped. long long')).toBe(true);
    expect(p.snippet).toHaveLength(160);
    expect(p.snippet.endsWith('…')).toBe(true);
    expect(p.size).toBe((await world.vendor('GET', `/smtp/messages/${plain}`)).json.size);
    // No text body: the HTML's visible text, without its head, style or script, entities read.
    expect(byId.get(html!)!.snippet).toBe('Café & tea €5 Tomorrow');
  });

  it('filters by to, from and subject as GET /messages does', async () => {
    world = await openTestWorld({ vendors: ['smtp'] });
    const [a, b, c] = await deliver(world, [
      { from: 'shop@x.test', to: 'carol@x.test', subject: 'Invoice 1', text: '1' },
      { from: 'news@x.test', to: 'dave@x.test', cc: 'Carol <carol@x.test>', subject: 'Weekly news', text: '2' },
      { from: 'shop@x.test', to: 'erin@x.test', subject: 'Invoice 2', text: '3' },
    ]);
    expect(ids(await store(world, '?to=CAROL'))).toEqual([b, a]);
    expect(ids(await store(world, '?from=shop&subject=invoice'))).toEqual([c, a]);
    const page = await store(world, '?to=carol&limit=1');
    expect([ids(page), page.has_more, page.count]).toEqual([[b], true, 3]);
    expect(ids(await store(world, `?to=carol&limit=1&starting_after=${b}`))).toEqual([a]);
    expect(ids((await world.vendor('GET', '/smtp/messages?to=CAROL')).json)).toEqual([b, a]);
  });

  it('refuses two cursors and names an unknown one, on the list and the store', async () => {
    world = await openTestWorld({ vendors: ['smtp'] });
    const [m] = await deliver(world, [{ from: 's@x.test', to: 'r@x.test', subject: 'one', text: '1' }]);
    const both = await world.vendor('GET', `/smtp/messages?starting_after=${m}&ending_before=${m}`);
    expect([both.status, both.json.error.code]).toEqual([400, 'invalid_cursor']);
    const unknown = await world.vendor('GET', '/smtp/messages?ending_before=msg_gone');
    expect([unknown.status, unknown.json.error]).toEqual([404, { code: 'message_not_found', message: "No message 'msg_gone' to end before." }]);
    const fromStore = await world.vendor('GET', '/smtp/twin/store/messages?starting_after=msg_gone');
    expect(fromStore.status).toBe(500);
    expect(fromStore.json.error.message).toContain("No message 'msg_gone' to start after.");
  });

  it('summarises a message delivered before summaries were kept from the message itself', async () => {
    world = await openTestWorld({ vendors: ['smtp'] });
    const [now] = await deliver(world, [{ from: 'new@x.test', to: 'r@x.test', subject: 'new', text: 'kept with a summary' }]);
    const old = (await world.vendor('GET', `/smtp/messages/${now}`)).json;
    // The same message under another id and an earlier seq, its index entry as it was written before: { id } only.
    world.runner.world.append('smtp', {
      cause: { kind: 'system', reason: 'test' },
      writes: [
        { type: 'message', id: 'msg_old', value: { ...old, id: 'msg_old', subject: 'old', text: 'an older message', seq: 0 } },
        { type: 'message_by_seq', id: '000000000000', value: { id: 'msg_old' } },
      ],
    });
    const page = await store(world, '');
    expect(page.messages.map((m) => [m.id, m.subject, m.snippet])).toEqual([
      [now, 'new', 'kept with a summary'],
      ['msg_old', 'old', 'an older message'],
    ]);
  });
});

describe('smtp: an attachment as a browser gets it', () => {
  it('is never run as a page of the world: no sniffing, sandboxed, even when it is HTML', async () => {
    world = await openTestWorld({ vendors: ['smtp'] });
    const [id] = await deliver(world, [
      { from: 's@x.test', to: 'r@x.test', subject: 'html file', text: 'see attached', attachments: [{ filename: 'page.html', content: '<script>fetch("/-/x/y/keys")</script>', contentType: 'text/html' }] },
    ]);
    for (const path of [`/smtp/messages/${id}/attachments/0`, `/smtp/messages/${id}/raw`]) {
      const res = await world.vendor('GET', path);
      expect(res.status, path).toBe(200);
      expect(res.headers['x-content-type-options'], path).toBe('nosniff');
      expect(res.headers['content-security-policy'], path).toBe('sandbox');
    }
    const file = await world.vendor('GET', `/smtp/messages/${id}/attachments/0`);
    expect(file.headers['content-type']).toBe('text/html');
    expect(file.headers['content-disposition']).toBe('attachment; filename="page.html"');
    expect(file.text).toBe('<script>fetch("/-/x/y/keys")</script>');
  });
});
