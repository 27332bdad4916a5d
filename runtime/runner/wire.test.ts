import { describe, expect, it } from 'vitest';
import type { WorldRequest, WorldResponse } from './types.js';
import { requestFromWire, requestToWire, responseFromWire, responseToWire } from './wire.js';

/** What a clone to a worker and back does to a value (structured clone, as postMessage). */
const crossed = <T>(v: T): T => structuredClone(v);

describe('the worker wire', () => {
  it('carries a request whole, with or without a body', () => {
    const request: WorldRequest = {
      surface: 'vendor',
      method: 'POST',
      path: '/stripe/v1/customers',
      query: 'expand[]=x',
      headers: { authorization: 'Bearer sk_test_1', 'content-type': 'application/x-www-form-urlencoded', 'x-many': 'a, b' },
      body: new TextEncoder().encode('email=a%40b.com'),
      scope: 'read',
      requestId: 'req_1',
      receivedAt: 1_795_360_724_000,
      // A browser session's person: an approval from it signs as them.
      credential: 'session',
      who: 'this machine',
    };
    expect(requestFromWire(crossed(requestToWire(request)))).toEqual(request);
    const { body: _body, ...bodiless } = request;
    const back = requestFromWire(crossed(requestToWire({ ...bodiless, headers: {} })));
    expect(back).toEqual({ ...bodiless, headers: {} });
    expect('body' in back).toBe(false);
  });

  it('carries a response whole: text or bytes, a fault and a delay only when set', () => {
    const responses: WorldResponse[] = [
      { status: 200, headers: { 'content-type': 'application/json', 'request-id': 'req_1' }, body: '{"id":"cus_1"}' },
      { status: 502, headers: {}, body: '', fault: 'reset', delayMs: 250 },
      { status: 200, headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array([0, 1, 255]) },
    ];
    for (const response of responses) {
      const back = responseFromWire(crossed(responseToWire(response)));
      expect(back).toEqual(response);
      expect(Object.keys(back).sort()).toEqual(Object.keys(response).sort());
    }
  });
});
