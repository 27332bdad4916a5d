/**
 * Hostile documents and requests: random edits of a good document either parse or are
 * refused with a KitError, and whatever parses decides any request without a crash.
 * Seeded, so a failure reproduces.
 */
import { describe, expect, it } from 'vitest';
import { KitError } from '../errors.js';
import { parseScenario } from './parse.js';
import { ScenarioState } from './state.js';
import type { ScenarioRequest } from './types.js';

const BASE = `state: started
handlers:
  - name: decline
    match: { method: POST, path: /v1/payment_intents, body: { amount: 2000, "card.number": "4242" } }
    times: 1
    respond: { status: 402, headers: { request-id: "req_{{request.id}}" }, body: { e: "{{request.body.amount}}", n: "{{tree.customer[request.query.c].name}}" } }
  - name: limited
    match: { path: "/v1/customers/:id", query: { limit: "3" }, headers: { x-a: true } }
    when: { state: started }
    times: 3
    respond: { status: 429, body: ["{{request.params.id}}", "{{state}}"] }
    then: { state: recovered }
  - name: slow
    match: "GET /v1/*rest"
    delay: 2s
  - name: flaky
    match: /v1/charges
    fault: { status: 503, body: { m: "{{request.headers.x-a}}" } }
  - name: computed
    match: GET /v1/x/:id
    js: "return { status: 200 }"
`;

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x9e3779b9) >>> 0;
    return s / 4294967296;
  };
}

const ALPHABET = ['{', '}', '[', ']', ':', ',', "'", '"', '*', '-', '\n', ' ', '#', '&', '!', '|', '>', '%', '.', 'a', '0', '__proto__', '{{', '}}', 'request.', 'tree.', ':id', '\u0000', '\u2028'];

describe('hostile documents and requests', () => {
  it('refuses random edits of a good document only with KitError, and decides on what parses', () => {
    const rand = rng(7);
    const pick = <T,>(xs: T[]): T => xs[Math.floor(rand() * xs.length)] as T;
    let parsed = 0;
    let refused = 0;
    const requests: ScenarioRequest[] = [
      { id: 'r1', method: 'POST', path: '/v1/payment_intents', query: { c: 'cus_1' }, headers: {}, body: { amount: '2000', card: { number: '4242' } } },
      { id: 'r2', method: 'GET', path: '/v1/customers/%zz', query: { limit: ['3', '4'] }, headers: { 'x-a': '1' }, body: null },
      { id: 'r3', method: 'GET', path: '/v1/customers/cus_1', query: { limit: '3' }, headers: { 'x-a': '' }, body: 'text' },
      { id: 'r4', method: 'DELETE', path: '/v1/charges', query: {}, headers: {}, body: [1, 2, 3] },
      { id: 'r5', method: 'HEAD', path: '/v1/x/%F0%9F%98%80', query: {}, headers: {}, body: { constructor: { prototype: 1 } } },
      { id: 'r6', method: 'GET', path: 'no-slash', query: {}, headers: {}, body: undefined },
    ];
    for (let round = 0; round < 800; round++) {
      let text = BASE;
      const edits = 1 + Math.floor(rand() * 4);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(rand() * text.length);
        const k = rand();
        if (k < 0.4) text = text.slice(0, at) + pick(ALPHABET) + text.slice(at);
        else if (k < 0.7) text = text.slice(0, at) + text.slice(at + 1 + Math.floor(rand() * 6));
        else text = text.slice(0, at) + pick(ALPHABET) + text.slice(at + 1);
      }
      let state: ScenarioState;
      try {
        state = new ScenarioState(parseScenario(text));
        parsed++;
      } catch (e) {
        if (!(e instanceof KitError)) throw new Error(`a non-KitError for document:\n${text}\n${String(e)}`);
        expect(['invalid_scenario', 'body_too_large']).toContain(e.code);
        refused++;
        continue;
      }
      for (const r of requests) {
        try {
          state.decide(r, (type, id) => (type === 'customer' ? { name: `n-${id}` } : undefined));
        } catch (e) {
          if (!(e instanceof KitError)) throw new Error(`decide crashed on ${r.method} ${r.path} for document:\n${text}\n${String(e)}`);
        }
      }
      JSON.stringify(state.report());
    }
    // Both outcomes are exercised, or the test proves little.
    expect(parsed).toBeGreaterThan(25);
    expect(refused).toBeGreaterThan(100);
  });
});
