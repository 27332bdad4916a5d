/**
 * The mailbox list has a byte budget: messages are up to 3 MiB and JSON writes a control
 * character as six bytes, so a page of whole messages could be hundreds of megabytes (20
 * messages of control bytes answered 347 MB; 40 failed with a 500). A page stops before the
 * message that would take it past about 8 MiB and says `has_more`; `starting_after` pages on.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStorage } from '../../runtime/store/index.js';
import { openWorldRunner } from '../../runtime/runner/index.js';
import { buildGuestRuntime } from '../../sdk/twin/build.js';
import { FROZEN_NOW, openStreamWorld, SMTP, twinBundle, type StreamTestWorld } from './helpers.js';

let world: StreamTestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/**
 * A world whose SMTP twin runs in V8, as a served world runs a built-in twin (trusted): the
 * QuickJS sandbox's 64 MiB runs out delivering about 1.5 million control characters, so a
 * message of more than 8 MiB of JSON is made only here.
 */
async function openTrustedWorld(): Promise<StreamTestWorld> {
  const runner = await openWorldRunner({ storage: new MemoryStorage(), world: 'budget', twins: [{ ...(await twinBundle(SMTP)), trusted: true }], now: () => FROZEN_NOW, guestRuntime: await buildGuestRuntime() });
  let n = 0;
  const vendor = async (method: string, pathAndQuery: string) => {
    const q = pathAndQuery.indexOf('?');
    const res = await runner.handle({
      surface: 'vendor', method, path: q < 0 ? pathAndQuery : pathAndQuery.slice(0, q), query: q < 0 ? '' : pathAndQuery.slice(q + 1),
      headers: {}, scope: 'write', requestId: `req_budget${++n}`, receivedAt: FROZEN_NOW,
    });
    const text = typeof res.body === 'string' ? res.body : Buffer.from(res.body).toString('utf8');
    return { status: res.status, text, json: JSON.parse(text) };
  };
  return { runner, vendor, api: () => Promise.reject(new TypeError('not used')), close: () => runner.close() };
}

/** Delivers messages over one SMTP connection; answers their ids in the order sent. */
async function deliver(w: StreamTestWorld, bodies: { subject: string; body: string; headers?: string }[]): Promise<string[]> {
  let state: unknown = null;
  const send = async (event: 'open' | 'data', text?: string): Promise<string> => {
    const r = await w.runner.streamCall({ twin: 'smtp', connId: 'conn_budget', event, state, ...(text === undefined ? {} : { bytes: new Uint8Array(Buffer.from(text, 'latin1')) }) });
    state = r.state;
    return Buffer.from(r.send ?? new Uint8Array()).toString('latin1');
  };
  await send('open');
  await send('data', 'EHLO budget.test\r\n');
  const ids: string[] = [];
  for (const m of bodies) {
    // Pipelined: the envelope and the message in one call.
    const done = await send('data', `MAIL FROM:<s@x.test>\r\nRCPT TO:<r@x.test>\r\nDATA\r\nSubject: ${m.subject}\r\n${m.headers ?? ''}\r\n${m.body}\r\n.\r\n`);
    ids.push(/queued as (msg_\w+)/.exec(done)![1]!);
  }
  return ids;
}

/**
 * A body whose text is `chars` control characters (each written `\u0001` in JSON: six bytes),
 * sent in base64 so the message stays small in transit.
 */
function controlText(chars: number): string {
  return Buffer.alloc(chars, 1).toString('base64').replace(/.{76}/g, '$&\r\n');
}
const BASE64 = 'Content-Type: text/plain; charset=us-ascii\r\nContent-Transfer-Encoding: base64\r\n';

describe('smtp mailbox list: a page has a byte budget', () => {
  it('answers a page of big messages within about 8 MiB, with has_more, and pages on with starting_after', async () => {
    world = await openStreamWorld([SMTP]);
    // Five messages of 500,000 control characters: each about 3 MB as JSON, so two fit a page.
    const ids = await deliver(world, Array.from({ length: 5 }, (_, i) => ({ subject: `big ${i}`, headers: BASE64, body: controlText(500_000) })));
    const newestFirst = [...ids].reverse();
    const seen: string[] = [];
    const sizes: number[] = [];
    let path = '/smtp/messages?limit=100';
    for (let pages = 0; pages < 10; pages++) {
      const page = await world.vendor('GET', path);
      expect(page.status).toBe(200);
      expect(page.text.length).toBeLessThanOrEqual(8 * 1024 * 1024);
      expect(page.json.data.length).toBeGreaterThanOrEqual(1);
      // Whole messages, as before: text included.
      expect(page.json.data[0].text.length).toBe(500_000);
      sizes.push(page.json.data.length);
      seen.push(...page.json.data.map((m: { id: string }) => m.id));
      if (!page.json.has_more) break;
      path = `/smtp/messages?limit=100&starting_after=${seen[seen.length - 1]}`;
    }
    expect(seen).toEqual(newestFirst);
    expect(sizes).toEqual([2, 2, 1]);
  });

  it('answers one message alone when it is bigger than the budget, after a page of small ones that stops before it', async () => {
    world = await openTrustedWorld();
    const ids = await deliver(world, [
      { subject: 'huge', headers: BASE64, body: controlText(1_500_000) },
      { subject: 'small 1', body: 'hello' },
      { subject: 'small 2', body: 'hi' },
    ]);
    const first = await world.vendor('GET', '/smtp/messages');
    // Then huge (about 9 MB as JSON) would pass the budget: the page stops, short of its limit.
    expect([first.json.data.map((m: { subject: string }) => m.subject), first.json.has_more]).toEqual([['small 2', 'small 1'], true]);
    const second = await world.vendor('GET', `/smtp/messages?starting_after=${ids[1]}`);
    expect([second.json.data.map((m: { subject: string }) => m.subject), second.json.has_more]).toEqual([['huge'], false]);
    expect(second.text.length).toBeGreaterThan(8 * 1024 * 1024);
    // The message is whole, in the list and from messages.retrieve.
    expect(second.json.data[0].text.length).toBe(1_500_000);
    expect((await world.vendor('GET', `/smtp/messages/${ids[0]}`)).json.text.length).toBe(1_500_000);
  });
});
