/**
 * The edge's outbound fetch, run under Node (its global fetch stands in for workerd's) against a
 * loopback server: answers, redirects, caps, timeouts, refusals. The same code runs in the Worker.
 */
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusal, startStandInVendor, type StandIn } from '../../test/helpers/vendor-stand-in.js';
import type { OutboundLimits } from '../../runtime/roots/outbound.js';
import { createEdgeOutbound } from './outbound.js';

const LIMITS: OutboundLimits = { timeoutMs: 5_000, maxBytes: 1_000_000 };
const text = (body: Uint8Array): string => new TextDecoder().decode(body);

let vendor: StandIn;
const at = (path: string): string => vendor.at(path);
const local = createEdgeOutbound({ loopback: true });
const strict = createEdgeOutbound({ loopback: false });

beforeAll(async () => {
  vendor = await startStandInVendor();
});
afterAll(() => vendor.close());

describe('createEdgeOutbound', () => {
  it('answers status, headers and body, and sends the method, body and headers (not the exchange’s own)', async () => {
    vendor.seen.length = 0;
    const answer = await local({ method: 'put', url: at('/echo?x=1#frag'), headers: { 'content-type': 'text/plain', 'x-kept': 'yes', host: 'evil.example', 'proxy-authorization': 'Basic x' }, body: new TextEncoder().encode('hello') }, LIMITS);
    expect(answer.status).toBe(200);
    expect(JSON.parse(text(answer.body))).toEqual({ method: 'PUT', body: 'hello' });
    expect(answer.headers['content-type']).toBe('application/json');
    expect(answer.headers['x-many']).toBe('one, two');
    expect(answer.headers['set-cookie']).toBe('a=1; Path=/\nb=2; Expires=Wed, 21 Oct 2037 07:28:00 GMT');
    expect(vendor.seen.map((s) => [s.url, s.headers.host, s.headers['x-kept'], s.headers['proxy-authorization']])).toEqual([['/echo?x=1', `127.0.0.1:${vendor.port}`, 'yes', undefined]]);
  });

  it('answers a compressed body decoded, without the headers that described it encoded', async () => {
    const answer = await local({ method: 'GET', url: at('/gzip'), headers: { 'accept-encoding': 'gzip' } }, LIMITS);
    expect(JSON.parse(text(answer.body))).toEqual({ packed: true });
    expect([answer.headers['content-type'], answer.headers['content-encoding'], answer.headers['content-length']]).toEqual(['application/json', undefined, undefined]);
  });

  it('never follows a redirect: the 3xx is the answer', async () => {
    vendor.seen.length = 0;
    const answer = await local({ method: 'GET', url: at('/redirect'), headers: {} }, LIMITS);
    expect([answer.status, answer.headers.location, text(answer.body)]).toEqual([302, '/echo', 'moved']);
    expect(vendor.seen.map((s) => s.url)).toEqual(['/redirect']);
  });

  it('refuses an answer over maxBytes, declared or streamed, and takes one of exactly maxBytes', async () => {
    const small = { timeoutMs: 5_000, maxBytes: 1000 };
    const declared = await refusal(local({ method: 'GET', url: at('/big-declared'), headers: {} }, small));
    expect([declared.code, declared.message]).toEqual(['outbound_too_large', `GET http://127.0.0.1:${vendor.port}: the answer's body is over 1000 bytes`]);
    expect((await refusal(local({ method: 'GET', url: at('/big-chunked'), headers: {} }, small))).code).toBe('outbound_too_large');
    expect((await local({ method: 'GET', url: at('/exactly-1000'), headers: {} }, small)).body.byteLength).toBe(1000);
  });

  it('gives up after timeoutMs, whether the head or the rest of the body is late', async () => {
    for (const path of ['/hang', '/stall-body']) {
      const started = Date.now();
      const e = await refusal(local({ method: 'GET', url: at(`${path}?api_key=sk_live_q`), headers: {} }, { timeoutMs: 300, maxBytes: 1000 }));
      const took = Date.now() - started;
      expect([path, e.code, e.message]).toEqual([path, 'outbound_timeout', `GET http://127.0.0.1:${vendor.port}: no complete answer within 300 ms`]);
      expect(took).toBeGreaterThanOrEqual(290);
      expect(took).toBeLessThan(2_000);
    }
  });

  it("fails a refused connection, and a header HTTP cannot carry, without the runtime's message or the value", async () => {
    const gone = createNetServer();
    await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
    const goneport = (gone.address() as AddressInfo).port;
    await new Promise((resolve) => gone.close(resolve));
    const refused = await refusal(local({ method: 'GET', url: `http://127.0.0.1:${goneport}/`, headers: {} }, LIMITS));
    expect([refused.code, refused.message]).toEqual(['outbound_failed', `GET http://127.0.0.1:${goneport}: the connection was refused (ECONNREFUSED)`]);
    const bad = await refusal(local({ method: 'GET', url: at('/echo'), headers: { authorization: 'Bearer sk_live_secret\r\nx-injected: 1' } }, LIMITS));
    expect([bad.code, bad.message]).toEqual(['outbound_failed', `GET http://127.0.0.1:${vendor.port}: a request header holds a character HTTP does not allow`]);
  });

  it('refuses what the destination check refuses, before any request', async () => {
    vendor.seen.length = 0;
    const table: [string, string][] = [
      [at('/echo'), `the destination host 127.0.0.1 is a loopback address; loopback is allowed for local tests only`],
      [`http://2130706433:${vendor.port}/echo`, 'the destination host 127.0.0.1 is a loopback address; loopback is allowed for local tests only'],
      ['https://169.254.169.254/latest/meta-data/', 'the destination host 169.254.169.254 is the cloud metadata address'],
      ['https://[::ffff:a9fe:a9fe]/', 'the destination host [::ffff:a9fe:a9fe] is the cloud metadata address (169.254.169.254, inside an IPv4-mapped IPv6 address)'],
      ['https://metadata.google.internal/computeMetadata/v1/', 'the destination host metadata.google.internal names a cloud metadata service'],
      ['https://api.stripe.com@10.0.0.1/', 'the destination URL carries a user name or password; credentials are sealed, never written in a URL'],
      ['http://api.stripe.com/', 'the destination must be an https URL (http is allowed to loopback only, for local tests)'],
    ];
    for (const [url, message] of table) {
      const e = await refusal(strict({ method: 'GET', url, headers: {} }, LIMITS));
      expect([url, e.code, e.message]).toEqual([url, 'destination_refused', message]);
    }
    expect(vendor.seen).toHaveLength(0);
  });
});
