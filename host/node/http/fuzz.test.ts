/**
 * A seeded fuzz of the uWS adapter under the single-world server (in a child process, so an
 * abort shows as a death, not as a dead test runner): requests of every method, HEAD included,
 * with the paths, credentials, bodies and framing the server distinguishes, sent one after the
 * other or pipelined. Whatever comes back must be whole, well-formed answers, then perhaps a
 * clean close; a request whose framing is in doubt (content-lengths that disagree, one with
 * transfer-encoding, one that is no number) or with a control byte is refused (400) and nothing
 * after it on its connection is read as a request; the server must stay up and still serve a
 * plain request at the end.
 *
 * Only requests uWS hands to JavaScript or refuses itself are generated: a malformed header line
 * is held by uWS as an unfinished head until its idle timeout (early-answers.test.ts).
 * Replay another run with KIT_FUZZ_SEED=<n>.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHILD_TOKENS, exchange, exchangeToClose, startChildServer } from '../../../test/helpers/child-server.js';
import type { ChildServer, Exchange, Step } from '../../../test/helpers/child-server.js';
import { seededRandom } from '../../../test/helpers/random.js';

const SEED = Number(process.env['KIT_FUZZ_SEED'] ?? 30);
const CONNECTIONS = 240;
const AT_ONCE = 8;
const LIMIT = 2048;
const W = '/local/w';
const API = '/-/local/w';
const METHODS = ['HEAD', 'GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND', 'TRACE', 'X-CUSTOM', 'get'];
/** Every status this server (or uWS on its own) may answer with. */
const STATUSES = new Set([200, 201, 204, 304, 400, 401, 403, 404, 405, 409, 413, 426, 429, 431, 500, 505]);

let server: ChildServer;
beforeAll(async () => {
  server = await startChildServer({ maxBodyBytes: LIMIT });
});
afterAll(() => server?.kill());

type Random = () => number;
const pick = <T>(r: Random, items: readonly T[]): T => items[Math.floor(r() * items.length)] as T;
const chance = (r: Random, p: number): boolean => r() < p;

function path(r: Random): string {
  const n = Math.floor(r() * 1000);
  if (chance(r, 0.5)) return pick(r, [`${W}/hello/x?q=${n}`, `${W}/hello//a/b%2Fc`, `${W}/stripe/v1/customers/cus_${n}`, `${API}/clock`]);
  return pick(r, [
    '/',
    '/nowhere',
    W,
    `${W}/`,
    `${W}/hello/x?q=${n}`,
    `${W}/hello//a/b%2Fc`,
    `${W}/stripe/v1/customers/cus_${n}`,
    `${W}/.well-known/kit-world`,
    `${API}/clock`,
    `${API}/streams/s${n}`,
    `${API}/secrets`,
    `${API}/branches`,
    `${API}/`,
    '/-/other/world/x',
    `${W}/hello/search?q=${'x'.repeat(chance(r, 0.2) ? 17_000 : Math.floor(r() * 6000))}`,
    '*',
  ]);
}

interface Request {
  bytes: Buffer;
  method: string;
  /** Its framing is in doubt or a value holds a control byte: refused (400) and the connection closed. */
  refused: boolean;
}

/** One whole request: its body is what its framing tells uWS to read. */
function request(r: Random): Request {
  let refused = false;
  const method = pick(r, METHODS);
  const lines = [`${method} ${path(r)} HTTP/1.1`, 'Host: 127.0.0.1'];
  const add = (name: string, value: string): number => lines.push(`${name}: ${value}`);
  const auth = pick(r, ['none', 'write', 'write', 'write', 'read', 'wrong', 'bearer', 'basic']);
  if (auth === 'write') add('x-kit-token', CHILD_TOKENS.token);
  else if (auth === 'read') add('x-kit-token', CHILD_TOKENS.readToken);
  else if (auth === 'wrong') add('x-kit-token', 'tok_wrong');
  else if (auth === 'bearer') add('authorization', `Bearer ${CHILD_TOKENS.token}`);
  else if (auth === 'basic') add('authorization', `Basic ${Buffer.from(`:${CHILD_TOKENS.token}`).toString('base64')}`);
  if (chance(r, 0.2)) add('origin', 'http://page.example');
  if (chance(r, 0.1)) add('access-control-request-method', pick(r, ['PUT', 'DELETE']));
  if (chance(r, 0.2)) add('x-echo-status', String(pick(r, [200, 201, 204, 304, 404, 500])));
  if (chance(r, 0.1)) add('x-echo-delay', String(Math.floor(r() * 15)));
  if (chance(r, 0.05)) add('x-echo-fault', 'reset');
  if (chance(r, 0.05)) add('x-echo-throw', pick(r, ['kit', 'plain']));
  if (chance(r, 0.05)) add('connection', 'close');
  if (chance(r, 0.03)) {
    add('x-note', 'a\x7fb');
    refused = true;
  }
  if (chance(r, 0.1)) add('x-note', 'caf\xe9 \t tab');
  if (chance(r, 0.1)) {
    add('x-rep', 'one');
    add('x-rep', 'two');
  }
  let body: Buffer = Buffer.alloc(0);
  const size = chance(r, 0.15) ? LIMIT + 1 + Math.floor(r() * 2000) : Math.floor(r() * 300);
  const fill = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => 97 + Math.floor(r() * 26)));
  const framing = r();
  switch (framing < 0.4 ? 'none' : framing < 0.7 ? 'length' : framing < 0.88 ? 'chunked' : framing < 0.94 ? 'two-lengths' : framing < 0.97 ? 'length-and-chunked' : 'bad-length') {
    case 'length':
      body = fill(size);
      add('content-length', String(size));
      break;
    case 'chunked': {
      add('transfer-encoding', 'chunked');
      const parts: Buffer[] = [];
      for (let left = size; left > 0; ) {
        const n = Math.min(left, 1 + Math.floor(r() * 900));
        parts.push(Buffer.from(`${n.toString(16)}\r\n`), fill(n), Buffer.from('\r\n'));
        left -= n;
      }
      parts.push(Buffer.from('0\r\n\r\n'));
      body = Buffer.concat(parts);
      break;
    }
    case 'two-lengths': {
      // uWS reads the first; the bytes past it are what a smuggler would hide there.
      const other = chance(r, 0.3) ? size : Math.floor(r() * 300);
      body = fill(Math.max(size, other));
      add('content-length', String(size));
      add('content-length', chance(r, 0.5) ? String(other) : `00${other}`);
      refused ||= other !== size;
      break;
    }
    case 'length-and-chunked':
      body = Buffer.from('3\r\nabc\r\n0\r\n\r\n');
      add('content-length', String(body.length));
      add('transfer-encoding', 'chunked');
      refused = true;
      break;
    case 'bad-length':
      body = fill(3);
      add('content-length', pick(r, ['3x', '+3', '3, 3', '']));
      refused = true;
      break;
  }
  return { bytes: Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]), method, refused };
}

/**
 * Well-formed answers only (`exchange` checked the bytes), then perhaps a close: fewer answers
 * than requests only with a close. A refused request's answer, if it got one, is a 400 (or
 * uWS's 431/505 for a head it refuses first) and the last on the connection: nothing after it
 * is read as a request.
 */
function check(ex: Exchange, requests: Request[], what: string): void {
  expect(ex.responses.length, what).toBeLessThanOrEqual(requests.length);
  if (ex.responses.length < requests.length) expect(ex.closed, `${what}: answers missing on an open connection`).toBe(true);
  ex.responses.forEach((res, k) => {
    expect(STATUSES.has(res.status), `${what}: status ${res.status}`).toBe(true);
    if (!(requests[k] as Request).refused) return;
    expect([400, 431, 505], `${what}: request ${k} refused`).toContain(res.status);
    expect([ex.responses.length - 1, ex.closed], `${what}: request ${k} refused, then`).toEqual([k, true]);
  });
}

describe('fuzz of the HTTP adapter', () => {
  it(`answers every seeded request (seed ${SEED}) with a well-formed answer or a clean close, and stays up`, async () => {
    const r = seededRandom(SEED);
    const plans = Array.from({ length: CONNECTIONS }, (_, i) => {
      const requests = Array.from({ length: 1 + Math.floor(r() * 4) }, () => request(r));
      return { i, requests, pipelined: chance(r, 0.3) };
    });
    let answered = 0;
    for (let at = 0; at < plans.length; at += AT_ONCE) {
      await Promise.all(
        plans.slice(at, at + AT_ONCE).map(async ({ i, requests, pipelined }) => {
          const methods = requests.map((q) => q.method);
          const what = `connection ${i} (seed ${SEED}): ${requests.map((q) => JSON.stringify(q.bytes.subarray(0, 160).toString('latin1'))).join(' | ')}`;
          const steps: Step[] = pipelined ? [[Buffer.concat(requests.map((q) => q.bytes)), methods]] : requests.map((q) => [q.bytes, [q.method]]);
          const converse = requests.some((q) => q.refused) ? exchangeToClose : exchange;
          const ex = await converse(server.port, ...steps).catch((e: Error) => {
            throw new Error(`${what}: ${e.message}`);
          });
          check(ex, requests, what);
          answered += ex.responses.length;
        }),
      );
      expect(server.death()).toBeNull();
    }
    // Most requests are answered (the rest met a close: a reset, a refusal, pipelining past an async answer).
    expect(answered).toBeGreaterThan(CONNECTIONS);
    const after = await exchangeToClose(server.port, [`GET ${W}/hello/after HTTP/1.1\r\nHost: a\r\nx-kit-token: ${CHILD_TOKENS.token}\r\nconnection: close\r\n\r\n`, ['GET']]);
    expect(after.responses.map((x) => x.status)).toEqual([200]);
    expect(server.death()).toBeNull();
  });
});
