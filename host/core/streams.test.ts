/**
 * The stream bridge without sockets: a fake socket records what the client would see, a fake
 * world answers stream calls when the test says so.
 */
import { describe, expect, it } from 'vitest';
import { KitError } from '../../runtime/errors.js';
import type { StreamCall, StreamResult, WorldHandle } from '../../runtime/runner/types.js';
import { STREAM_CLOSE, StreamBridge, type StreamBridgeOptions, type StreamSocket } from './streams.js';

const TOKEN = 'tok_bridge-write';
const READ = 'tok_r_bridge-read';
const enc = (s: string) => new Uint8Array(Buffer.from(s, 'latin1'));
const text = (b: Uint8Array | undefined) => Buffer.from(b ?? new Uint8Array()).toString('latin1');

interface Pending {
  call: StreamCall;
  answer(r: Partial<StreamResult>): void;
  fail(e: unknown): void;
}

function setup(limits: StreamBridgeOptions['limits'] = {}, more: Pick<StreamBridgeOptions, 'resume' | 'onAnswered'> = {}) {
  const calls: Pending[] = [];
  const sent: string[] = [];
  let buffered = 0;
  let ended: { code: number; reason: string } | null = null;
  const world: WorldHandle = {
    name: 'w',
    code: 'c',
    handle: () => Promise.reject(new Error('not used')),
    close: () => Promise.resolve(),
    streamCall: (call) =>
      new Promise<StreamResult>((resolve, reject) => {
        calls.push({ call, answer: (r) => resolve({ send: new Uint8Array(), close: false, state: call.state, until: null, ...r }), fail: reject });
      }),
  };
  const socket: StreamSocket = {
    send: (b) => void sent.push(text(b)),
    bufferedAmount: () => buffered,
    end: (code, reason) => {
      ended = { code, reason };
      conn.closed();
    },
  };
  const conn = new StreamBridge(socket, 'echo', 'conn_1', { world, scopeOf: (t) => (t === TOKEN ? 'write' : t === READ ? 'read' : null), limits, ...more });
  const flush = () => new Promise((r) => setTimeout(r, 0));
  return {
    conn,
    calls,
    sent,
    flush,
    setBuffered: (n: number) => (buffered = n),
    get ended() {
      return ended;
    },
    async open(): Promise<void> {
      conn.message(enc(TOKEN));
      calls.shift()!.answer({ send: enc('hi\n'), state: { n: 0 } });
      await flush();
    },
  };
}

describe('stream bridge', () => {
  it('refuses the read token and a wrong token before calling the world', () => {
    for (const [token, code] of [[READ, STREAM_CLOSE.readToken], ['nope', STREAM_CLOSE.unauthenticated], ['', STREAM_CLOSE.unauthenticated]] as const) {
      const t = setup();
      t.conn.message(enc(token));
      expect(t.ended?.code).toBe(code);
      expect(t.calls).toEqual([]);
    }
  });

  it('sends one call at a time: bytes that arrive during a call go with the next one, with the state it answered', async () => {
    const t = setup();
    await t.open();
    expect(t.sent).toEqual(['hi\n']);
    t.conn.message(enc('a'));
    t.conn.message(enc('b'));
    t.conn.message(enc('c'));
    expect(t.calls.map((c) => text(c.call.bytes))).toEqual(['a']);
    expect(t.calls[0]!.call.state).toEqual({ n: 0 });
    t.calls.shift()!.answer({ state: { n: 1 } });
    await t.flush();
    expect(t.calls.map((c) => [text(c.call.bytes), c.call.state])).toEqual([['bc', { n: 1 }]]);
  });

  it('waits for the delimiter, also when it is split across arrivals or starts in the tail', async () => {
    const t = setup();
    await t.open();
    t.conn.message(enc('x'));
    t.calls.shift()!.answer({ until: { delimiter: enc('\r\n.\r\n'), tail: enc('\r\n'), max: null } });
    await t.flush();
    t.conn.message(enc('line\r'));
    t.conn.message(enc('\n'));
    expect(t.calls).toEqual([]);
    t.conn.message(enc('.\r'));
    expect(t.calls).toEqual([]);
    t.conn.message(enc('\nQUIT'));
    expect(t.calls.map((c) => text(c.call.bytes))).toEqual(['line\r\n.\r\nQUIT']);
    // The delimiter right after the tail: an empty message.
    t.calls.shift()!.answer({ until: { delimiter: enc('\r\n.\r\n'), tail: enc('\r\n'), max: null } });
    await t.flush();
    t.conn.message(enc('.\r\n'));
    expect(t.calls.map((c) => text(c.call.bytes))).toEqual(['.\r\n']);
  });

  it('calls anyway once `max` bytes wait', async () => {
    const t = setup();
    await t.open();
    t.conn.message(enc('x'));
    t.calls.shift()!.answer({ until: { delimiter: enc('\n'), tail: new Uint8Array(), max: 5 } });
    await t.flush();
    t.conn.message(enc('abcd'));
    expect(t.calls).toEqual([]);
    t.conn.message(enc('e'));
    expect(t.calls.map((c) => text(c.call.bytes))).toEqual(['abcde']);
  });

  it('holds calls while the socket has more than the high-water mark unsent, and goes on at drain', async () => {
    const t = setup({ highWaterBytes: 100 });
    await t.open();
    t.setBuffered(101);
    t.conn.message(enc('a'));
    expect(t.calls).toEqual([]);
    t.setBuffered(0);
    t.conn.drain();
    expect(t.calls.map((c) => text(c.call.bytes))).toEqual(['a']);
  });

  it('closes with 1009 when more than the stream buffer waits during a slow call', async () => {
    const t = setup({ maxBufferBytes: 10 });
    await t.open();
    t.conn.message(enc('first'));
    expect(t.calls).toHaveLength(1);
    t.conn.message(enc('123456'));
    expect(t.ended).toBeNull();
    t.conn.message(enc('789012'));
    expect(t.ended).toEqual({ code: STREAM_CLOSE.tooBig, reason: 'stream buffer over 10 bytes' });
  });

  it('after the client closes, hands the twin what was waiting, then close, then settles', async () => {
    const t = setup();
    await t.open();
    t.conn.message(enc('a'));
    t.conn.message(enc('b'));
    t.conn.closed();
    t.calls.shift()!.answer({ send: enc('never sent') });
    await t.flush();
    expect(t.calls.map((c) => [c.call.event, text(c.call.bytes)])).toEqual([['data', 'b']]);
    t.calls.shift()!.answer({});
    await t.flush();
    expect(t.calls.map((c) => c.call.event)).toEqual(['close']);
    let settled = false;
    void t.conn.settled.then(() => (settled = true));
    t.calls.shift()!.answer({});
    await t.flush();
    expect(settled).toBe(true);
    expect(t.sent).toEqual(['hi\n']);
  });

  it('closes with 1011 and the code when the world fails a call, and the twin hears nothing more', async () => {
    const t = setup();
    await t.open();
    t.conn.message(enc('a'));
    t.calls.shift()!.fail(new KitError('handler_timeout', 'ran past its budget'));
    await t.flush();
    expect(t.ended).toEqual({ code: STREAM_CLOSE.internal, reason: 'handler_timeout: ran past its budget' });
    expect(t.calls).toEqual([]);
  });

  it('answers 4404 when the world has no such stream', async () => {
    const t = setup();
    t.conn.message(enc(TOKEN));
    t.calls.shift()!.fail(new KitError('unknown_stream', 'no'));
    await t.flush();
    expect(t.ended).toEqual({ code: STREAM_CLOSE.unknownStream, reason: "unknown stream 'echo'" });
    expect(t.calls).toEqual([]);
  });

  it("goes on in a bridge resumed from another's resumable(): the same state and framing hint, no token asked", async () => {
    const dot = { delimiter: enc('\r\n.\r\n'), tail: enc('\r\n'), max: null };
    const first = setup();
    await first.open();
    first.conn.message(enc('DATA\r\n'));
    first.calls.shift()!.answer({ send: enc('354\r\n'), state: { n: 1, phase: 'data' }, until: dot });
    await first.flush();
    const kept = first.conn.resumable();
    expect(kept).toEqual({ state: { n: 1, phase: 'data' }, until: dot });

    // What the edge does with an object woken after eviction: a new bridge on the same socket's kept state.
    let answered = 0;
    const next = setup({ tokenTimeoutMs: 20 }, { resume: structuredClone(kept!), onAnswered: () => answered++ });
    expect(next.conn.resumable()).toEqual(kept);
    // No token is waited for (nor timed out on): the first message is the twin's bytes, held by the hint.
    await new Promise((r) => setTimeout(r, 40));
    expect(next.ended).toBeNull();
    next.conn.message(enc(TOKEN));
    next.conn.message(enc('\r\nline\r\n'));
    expect(next.calls).toEqual([]);
    next.conn.message(enc('.\r\n'));
    expect(next.calls.map((c) => [c.call.event, text(c.call.bytes), c.call.state])).toEqual([['data', `${TOKEN}\r\nline\r\n.\r\n`, { n: 1, phase: 'data' }]]);
    next.calls.shift()!.answer({ send: enc('250\r\n'), state: { n: 2, phase: 'cmd' } });
    await next.flush();
    expect([next.sent, answered, next.conn.resumable()]).toEqual([['250\r\n'], 1, { state: { n: 2, phase: 'cmd' }, until: null }]);
    // And it ends as any connection: the twin hears close once.
    next.conn.closed();
    expect(next.calls.map((c) => c.call.event)).toEqual(['close']);
  });

  it('has nothing resumable before it is open, while a call runs, while bytes wait, or once closed; says so after each answer', async () => {
    let answered = 0;
    const t = setup({}, { onAnswered: () => answered++ });
    expect(t.conn.resumable()).toBeNull();
    t.conn.message(enc(TOKEN));
    // `open` is running.
    expect(t.conn.resumable()).toBeNull();
    t.calls.shift()!.answer({ state: { n: 0 } });
    await t.flush();
    expect([answered, t.conn.resumable()]).toEqual([1, { state: { n: 0 }, until: null }]);
    t.conn.message(enc('a'));
    t.conn.message(enc('b'));
    // A call runs with bytes waiting behind it.
    expect(t.conn.resumable()).toBeNull();
    t.calls.shift()!.answer({ state: { n: 1 } });
    await t.flush();
    // Answered, and the waiting bytes went straight into the next call.
    expect([answered, t.calls.map((c) => text(c.call.bytes)), t.conn.resumable()]).toEqual([2, ['b'], null]);
    t.calls.shift()!.answer({ state: { n: 2 }, until: { delimiter: enc('\n'), tail: new Uint8Array(), max: null } });
    await t.flush();
    expect([answered, t.conn.resumable()]).toEqual([3, { state: { n: 2 }, until: { delimiter: enc('\n'), tail: new Uint8Array(), max: null } }]);
    // Bytes held by the framing hint, no call: they would be lost with the bridge.
    t.conn.message(enc('partial'));
    expect([t.calls, t.conn.resumable()]).toEqual([[], null]);
    t.conn.message(enc(' line\n'));
    t.calls.shift()!.answer({ close: true });
    await t.flush();
    // Closed by the twin: no answer to keep.
    expect([answered, t.conn.resumable(), t.ended?.code]).toEqual([3, null, STREAM_CLOSE.normal]);
  });
});
