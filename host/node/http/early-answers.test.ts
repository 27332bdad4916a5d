/**
 * Every kind of answer the single-world server gives, asked with HEAD, GET and other methods
 * over a raw socket, against a server in a child process: uWS aborts the process it runs in
 * when a response is left neither answered nor watched, and the test must see that, not die.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CHILD_TOKENS, exchange, exchangeToClose, header, parseResponses, startChildServer } from '../../../test/helpers/child-server.js';
import type { ChildServer, Exchange, RawResponse } from '../../../test/helpers/child-server.js';

const W = '/local/w';
const API = '/-/local/w';
const METHODS = ['HEAD', 'GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND'] as const;
const LIMIT = 1024;
const write = { 'x-kit-token': CHILD_TOKENS.token };
const read = { 'x-kit-token': CHILD_TOKENS.readToken };
/** Never refills in a test, and its Retry-After keeps its digits (9) however long the test runs. */
const SPENT_BUDGET = { size: 1, windowMs: 999_500_000_000 };

function request(method: string, path: string, headers: Record<string, string> = {}, body?: string): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1'];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  if (body !== undefined && headers['transfer-encoding'] === undefined) lines.push(`content-length: ${Buffer.byteLength(body, 'latin1')}`);
  return `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`;
}
const probe = request('GET', `${W}/hello/probe`, write);

function errorCode(r: RawResponse): string | undefined {
  return (JSON.parse(r.body.toString('utf8')) as { error?: { code?: string } }).error?.code;
}

let small: ChildServer;
let budget: ChildServer;
beforeAll(async () => {
  [small, budget] = await Promise.all([startChildServer({ maxBodyBytes: LIMIT }), startChildServer({ budget: SPENT_BUDGET })]);
  // Spend the one request the budget holds.
  const spent = await exchange(budget.port, [request('GET', `${W}/hello/x`, write), ['GET']]);
  expect(spent.responses[0]?.status).toBe(200);
});
afterAll(() => {
  small?.kill();
  budget?.kill();
});
afterEach(() => {
  expect(small.death()).toBeNull();
  expect(budget.death()).toBeNull();
});

interface Case {
  name: string;
  server: () => ChildServer;
  /** The request for a method; the body (for methods that carry one) is added by `ask`. */
  path: string;
  headers?: Record<string, string>;
  /** Status by method (default for all). */
  status: number | ((method: string) => number);
  code?: string;
  /** A body over the limit, by content-length or chunked. */
  big?: 'content-length' | 'chunked';
  /** The HEAD's length is the GET's plus this (a message that names the method). */
  headLonger?: number;
  /** The HEAD answer's length is not compared with the GET's (an echo names its request id). */
  lengthVaries?: boolean;
  /** No content-length at all (204). */
  noLength?: boolean;
  /** The status of the GET that follows on the connection (default 200). */
  next?: number;
}

const CASES: Case[] = [
  { name: '401 unauthenticated', server: () => small, path: `${W}/hello/x`, status: 401, code: 'unauthenticated' },
  { name: '403 forbidden', server: () => small, path: `${API}/secrets`, headers: read, status: 403, code: 'forbidden', headLonger: 1 },
  { name: '404 not_found', server: () => small, path: '/nowhere', status: 404, code: 'not_found' },
  { name: '413 by content-length', server: () => small, path: `${W}/hello/x`, headers: write, status: 413, code: 'body_too_large', big: 'content-length' },
  { name: '413 by a streamed body', server: () => small, path: `${W}/hello/x`, headers: write, status: 413, code: 'body_too_large', big: 'chunked' },
  { name: '426 upgrade_required', server: () => small, path: `${API}/streams/s1`, headers: write, status: 426, code: 'upgrade_required' },
  {
    name: 'the attach manifest',
    server: () => small,
    path: `${W}/.well-known/kit-world`,
    headers: write,
    status: (m) => (m === 'GET' || m === 'HEAD' ? 200 : 405),
  },
  { name: '429 request_budget_exhausted', server: () => budget, path: `${W}/hello/x`, headers: write, status: 429, code: 'request_budget_exhausted', next: 429 },
  { name: 'a world answer (async)', server: () => small, path: `${W}/hello/x`, headers: write, status: 200, lengthVaries: true },
  { name: 'a delayed world answer', server: () => small, path: `${W}/hello/x`, headers: { ...write, 'x-echo-delay': '5' }, status: 200, lengthVaries: true },
  { name: 'a 204 world answer', server: () => small, path: `${W}/hello/x`, headers: { ...write, 'x-echo-status': '204' }, status: 204, noLength: true },
  { name: 'a world that rejects with a KitError', server: () => small, path: `${W}/hello/x`, headers: { ...write, 'x-echo-throw': 'kit' }, status: 409, code: 'clock_backward' },
  { name: 'a world that fails (500)', server: () => small, path: `${W}/hello/x`, headers: { ...write, 'x-echo-throw': 'plain' }, status: 500, code: 'internal' },
];

/** One request of `c` by `method`, then a GET on the same connection. */
async function ask(c: Case, method: string): Promise<Exchange> {
  let bytes: string;
  if (c.big === 'content-length') bytes = request(method, c.path, c.headers, 'x'.repeat(LIMIT + 1));
  else if (c.big === 'chunked') {
    const chunk = `${(800).toString(16)}\r\n${'y'.repeat(800)}\r\n`;
    bytes = request(method, c.path, { ...c.headers, 'transfer-encoding': 'chunked' }, `${chunk}${chunk}0\r\n\r\n`);
  } else {
    bytes = request(method, c.path, c.headers, ['POST', 'PUT', 'PATCH'].includes(method) ? '{"a":1}' : undefined);
  }
  return exchange(c.server().port, [bytes, [method]], [probe, ['GET']]);
}

describe('early and ordinary answers, by every method, over a raw socket', () => {
  for (const c of CASES) {
    it(`${c.name}: a HEAD answered from the head alone does not abort the process; each method gets a whole answer and the connection serves the next request`, async () => {
      const got = new Map<string, RawResponse>();
      for (const method of METHODS) {
        const ex = await ask(c, method);
        const server = c.server();
        expect(server.death(), `${method} ${c.name}`).toBeNull();
        expect(ex.closed, `${method} ${c.name}: the connection was closed`).toBe(false);
        const [first, next] = ex.responses as [RawResponse, RawResponse];
        const status = typeof c.status === 'function' ? c.status(method) : c.status;
        expect(first.status, `${method} ${c.name}`).toBe(status);
        expect(header(first, 'x-kit-world-code')).toBe('code-7');
        if (method !== 'HEAD' && c.code !== undefined) expect(errorCode(first)).toBe(c.code);
        expect(next.status, `the GET after ${method} ${c.name}`).toBe(c.next ?? 200);
        got.set(method, first);
      }
      // HEAD: no body (the GET after it parsed), and the length the GET's answer had.
      const head = got.get('HEAD') as RawResponse;
      const get = got.get('GET') as RawResponse;
      expect(head.body.length).toBe(0);
      const length = Number(header(head, 'content-length'));
      if (c.noLength === true) expect(header(head, 'content-length')).toBeUndefined();
      else if (c.lengthVaries === true) expect(length).toBeGreaterThan(0);
      else expect(length).toBe(get.body.length + (c.headLonger ?? 0));
    });
  }
});

describe('answers that close the connection', () => {
  it('a HEAD while stopping gets 503 shutting_down and a close, and does not abort the process', async () => {
    const s = await startChildServer();
    try {
      // A held request keeps the server draining while the asks below come in.
      const held = exchange(s.port, [request('GET', `${W}/hello/held`, { ...write, 'x-echo-gate': 'g' }), ['GET']]);
      while (!(await s.received()).includes('GET /hello/held')) await new Promise((r) => setImmediate(r));
      // Connections uWS has taken (one answer each: one still in the kernel's accept queue
      // would be reset when the listen socket closes), asked again once stopping has begun.
      const open = (): Promise<Socket> =>
        new Promise((r) => {
          const c = connect(s.port, '127.0.0.1', () => c.write(request('GET', '/nowhere')));
          c.on('error', () => undefined);
          let seen = '';
          const taken = (d: Buffer): void => {
            seen += d.toString('latin1');
            if (!seen.endsWith('}}')) return;
            c.off('data', taken);
            r(c);
          };
          c.on('data', taken);
        });
      const sockets = await Promise.all(METHODS.map(open));
      const closing = s.close();
      // Stopping has begun once the listen socket is closed: a new connection is refused.
      for (;;) {
        const refused = await new Promise<boolean>((r) => {
          const c = connect(s.port, '127.0.0.1');
          c.on('connect', () => { c.destroy(); r(false); });
          c.on('error', () => r(true));
        });
        if (refused) break;
      }
      const answers = await Promise.all(
        METHODS.map(
          (method, i) =>
            new Promise<{ text: string; closed: boolean }>((r) => {
              const socket = sockets[i] as Socket;
              let text = '';
              socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
              socket.on('close', () => r({ text, closed: true }));
              socket.write(request(method, `${W}/hello/late`, write));
            }),
        ),
      );
      expect(s.death()).toBeNull();
      answers.forEach(({ text, closed }, i) => {
        const method = METHODS[i] as string;
        expect(closed).toBe(true);
        const { responses, rest } = parseResponses(Buffer.from(text, 'latin1'), [method], true);
        expect(rest.length, `${method}: ${text}`).toBe(0);
        const r = responses[0] as RawResponse;
        expect([r.status, header(r, 'connection'), header(r, 'x-kit-world-code')]).toEqual([503, 'close', 'code-7']);
        // uws-pack 20.0.8 closes only after a length it wrote itself, and only 0 ends a HEAD.
        if (method === 'HEAD') expect(header(r, 'content-length')).toBe('0');
        else expect(errorCode(r)).toBe('shutting_down');
      });
      await s.release('g');
      expect((await held).responses[0]?.status).toBe(200);
      await closing;
      expect(s.death()).toBeNull();
    } finally {
      s.kill();
    }
  });
});

describe('request framing', () => {
  it('answers two content-length headers that disagree with 400 bad_request and closes, by every method', async () => {
    for (const method of METHODS) {
      // uWS frames the body by the first (3): "defGET …" would be read as the next request.
      const smuggled = request('GET', `${W}/hello/smuggled`, write);
      const bytes = `${method} ${W}/hello/dup HTTP/1.1\r\nHost: a\r\nx-kit-token: ${CHILD_TOKENS.token}\r\ncontent-length: 3\r\ncontent-length: ${3 + smuggled.length}\r\n\r\nabc${smuggled}`;
      const ex = await exchangeToClose(small.port, [bytes, [method, 'GET']]);
      expect(small.death()).toBeNull();
      expect(ex.closed).toBe(true);
      // Either the 400, or (when uWS parsed the smuggled request before the answer went out) a
      // close with no answer: never an answer to the smuggled request.
      expect(ex.responses.length).toBeLessThanOrEqual(1);
      const r = ex.responses[0];
      if (r !== undefined) {
        expect(r.status).toBe(400);
        expect(header(r, 'connection')).toBe('close');
        expect(header(r, 'x-kit-world-code')).toBe('code-7');
        if (method !== 'HEAD') expect(errorCode(r)).toBe('bad_request');
      }
    }
    expect((await small.received()).filter((r) => r.endsWith('/smuggled') || r.endsWith('/dup'))).toEqual([]);
  });

  it('answers 400 bad_request, then closes, when repeated content-lengths disagree and nothing follows the body', async () => {
    for (const method of METHODS) {
      const bytes = `${method} ${W}/hello/dup HTTP/1.1\r\nHost: a\r\nx-kit-token: ${CHILD_TOKENS.token}\r\ncontent-length: 5\r\ncontent-length: 50\r\n\r\nhello`;
      const ex = await exchangeToClose(small.port, [bytes, [method]]);
      expect(small.death()).toBeNull();
      expect(ex.closed).toBe(true);
      expect(ex.responses.map((r) => r.status)).toEqual([400]);
      if (method !== 'HEAD') expect(errorCode(ex.responses[0] as RawResponse)).toBe('bad_request');
    }
    expect((await small.received()).filter((r) => r.endsWith('/dup'))).toEqual([]);
  });

  it('accepts repeated content-length headers that agree (RFC 9110 8.6 allows it)', async () => {
    const bytes = `POST ${W}/hello/x HTTP/1.1\r\nHost: a\r\nx-kit-token: ${CHILD_TOKENS.token}\r\ncontent-length: 5\r\ncontent-length: 005\r\n\r\nhello`;
    const ex = await exchange(small.port, [bytes, ['POST']], [probe, ['GET']]);
    expect(ex.responses.map((r) => r.status)).toEqual([200, 200]);
    expect((JSON.parse((ex.responses[0] as RawResponse).body.toString('utf8')) as { bodyLength: number }).bodyLength).toBe(5);
  });

  it('answers a header value holding DEL (a control character uWS passes on) with 400 bad_request and closes', async () => {
    for (const method of METHODS) {
      const bytes = `${method} ${W}/hello/del HTTP/1.1\r\nHost: a\r\nx-kit-token: ${CHILD_TOKENS.token}\r\nx-note: a\x7fb\r\n\r\n`;
      const ex = await exchangeToClose(small.port, [Buffer.from(bytes, 'latin1'), [method]]);
      expect(small.death()).toBeNull();
      expect(ex.closed).toBe(true);
      expect(ex.responses.map((r) => r.status)).toEqual([400]);
      if (method !== 'HEAD') expect(errorCode(ex.responses[0] as RawResponse)).toBe('bad_request');
    }
    expect((await small.received()).filter((r) => r.endsWith('/del'))).toEqual([]);
  });

  it('leaves a malformed first content-length to uWS, which answers 400 and closes before the world sees it', async () => {
    for (const method of METHODS) {
      const bytes = `${method} ${W}/hello/bad-length HTTP/1.1\r\nHost: a\r\nx-kit-token: ${CHILD_TOKENS.token}\r\ncontent-length: 3x\r\n\r\nabc`;
      const ex = await exchangeToClose(small.port, [bytes, [method]]);
      expect(small.death()).toBeNull();
      expect(ex.closed).toBe(true);
      expect(ex.responses.map((r) => r.status)).toEqual([400]);
    }
    expect((await small.received()).filter((r) => r.endsWith('/bad-length'))).toEqual([]);
  });

  it('never sees a malformed header line: uWS holds it as an unfinished head (431 once 16 KB pile up)', async () => {
    // Control bytes, an obs-fold, a space in a name, a line without a colon: uWS 20.0.8's parser
    // takes each for a head still arriving and never calls the handler; a client that sends
    // nothing more is closed by uWS's idle timeout, about 12 s later, with no answer.
    const lines = ['x-a: b\x01c', 'x-a: b\r\n  folded', 'x a: b', 'no-colon', 'x-a: b\x1bc'];
    for (const line of lines) {
      const bytes = Buffer.concat([Buffer.from(`GET ${W}/hello/malformed HTTP/1.1\r\nHost: a\r\n${line}\r\n\r\n`, 'latin1'), Buffer.alloc(17 * 1024, 0x61)]);
      const ex = await exchange(small.port, [bytes, ['GET']]);
      expect(ex.closed).toBe(true);
      expect(ex.responses.map((r) => r.status)).toEqual([431]);
    }
    expect(small.death()).toBeNull();
    expect((await small.received()).filter((r) => r.endsWith('/malformed'))).toEqual([]);
  });
});

describe('kit world serve (dist/: `make test` builds first)', () => {
  const KIT = join(process.cwd(), 'dist', 'sdk', 'cli', 'kit.js');
  for (const flags of [[], ['--budget', '100000/10s']]) {
    it(`a HEAD with no token (curl -I) does not abort the process (${flags.join(' ') || 'the defaults'})`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'kit-head-'));
      const args = [KIT, 'world', 'serve', dir, '--port', '0', ...flags];
      const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
      try {
        const url = await new Promise<URL>((ok, fail) => {
          child.stdout.on('data', (d: Buffer) => {
            out += d.toString('utf8');
            const found = /world URL\s+(\S+)/.exec(out)?.[1];
            if (found !== undefined) ok(new URL(found));
          });
          child.on('exit', (code, signal) => fail(new Error(`kit world serve ended (${String(signal ?? code)}): ${err}`)));
        });
        const port = Number(url.port);
        const ex = await exchange(
          port,
          [request('HEAD', '/'), ['HEAD']],
          [request('HEAD', `${url.pathname}/stripe/v1/customers`), ['HEAD']],
          [request('GET', '/'), ['GET']],
        );
        expect(ex.responses.map((r) => r.status), err).toEqual([404, 401, 404]);
        expect(Number(header(ex.responses[0] as RawResponse, 'content-length'))).toBe((ex.responses[2] as RawResponse).body.length);
        expect([child.exitCode, child.signalCode]).toEqual([null, null]);
      } finally {
        child.kill('SIGKILL');
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
});
