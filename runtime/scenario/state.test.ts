import { describe, expect, it } from 'vitest';
import { KitError } from '../errors.js';
import { parseScenario } from './parse.js';
import { ScenarioState } from './state.js';
import type { Decision, ScenarioRequest } from './types.js';

let n = 0;
function req(method: string, pathAndQuery: string, extra: Partial<ScenarioRequest> = {}): ScenarioRequest {
  const [path = '', q] = pathAndQuery.split('?');
  const query: Record<string, string> = {};
  if (q) for (const p of q.split('&')) { const [k = '', v = ''] = p.split('='); query[k] = v; }
  return { id: `req_${++n}`, method, path, query, headers: {}, body: undefined, ...extra };
}

function state(yaml: string): ScenarioState {
  return new ScenarioState(parseScenario(yaml));
}

function kinds(ds: Decision[]): string[] {
  return ds.map((d) => (d.kind === 'respond' ? `respond ${d.response.status}` : d.kind === 'fault' ? `fault ${d.fault.type}` : d.kind));
}

describe('ScenarioState.decide', () => {
  it('answers a handler with times only that many times, then passes to the twin', () => {
    const s = state(`
handlers:
  - name: decline
    match: { method: POST, path: /v1/payment_intents }
    times: 1
    respond:
      status: 402
      headers: { request-id: "req_{{request.id}}" }
      body: { error: { code: card_declined, amount: "{{request.body.amount}}" } }
`);
    const first = s.decide(req('POST', '/v1/payment_intents', { id: 'abc', body: { amount: 2000 } }));
    expect(first).toEqual({
      kind: 'respond', handlerIndex: 0, handlerName: 'decline', delayMs: 0, passedThrough: [],
      response: { status: 402, headers: { 'request-id': 'req_abc' }, body: { error: { code: 'card_declined', amount: 2000 } } },
    });
    expect(s.decide(req('POST', '/v1/payment_intents')).kind).toBe('pass');
    expect(s.report().handlers[0]).toMatchObject({ times: 1, remaining: 0, matched: 1, active: false });
  });

  it('moves state after the last of its times, so a when-state handler answers exactly that often', () => {
    const s = state(`
handlers:
  - name: rate-limited
    match: { path: /v1/customers }
    when: { state: started }
    times: 3
    respond: { status: 429, headers: { Retry-After: "1" } }
    then: { state: recovered }
  - name: after
    match: { path: /v1/customers }
    when: { state: recovered }
    respond: { status: 200, body: "{{state}}" }
`);
    const ds = [1, 2, 3, 4, 5].map(() => s.decide(req('GET', '/v1/customers')));
    expect(kinds(ds)).toEqual(['respond 429', 'respond 429', 'respond 429', 'respond 200', 'respond 200']);
    expect(ds[3]?.kind === 'respond' && ds[3].response.body).toBe('recovered');
    expect(s.state).toBe('recovered');
  });

  it('moves state on every match of a handler without times', () => {
    const s = state(`
state: a
handlers:
  - { name: to-b, match: /x, when: { state: a }, then: { state: b }, respond: { status: 201 } }
  - { name: to-a, match: /x, when: { state: b }, then: { state: a }, respond: { status: 202 } }
`);
    expect(kinds([1, 2, 3].map(() => s.decide(req('GET', '/x'))))).toEqual(['respond 201', 'respond 202', 'respond 201']);
    expect(s.report().handlers.map((h) => h.matched)).toEqual([2, 1]);
  });

  it('adds the delay of every delay-only handler that matches, wherever it stands, and lets the request go on', () => {
    const s = state(`
handlers:
  - name: decline
    match: { method: GET, path: /v1/customers/:id }
    respond: { status: 404 }
    delay: 250ms
  - name: slow-lists
    match: { method: GET, path: "/v1/:resource" }
    delay: 2s
  - name: slow-everything
    match: { path: "/*rest" }
    delay: 100ms
`);
    expect(s.decide(req('GET', '/v1/customers'))).toEqual({ kind: 'pass', delayMs: 2100, passedThrough: ['slow-lists', 'slow-everything'] });
    const one = s.decide(req('GET', '/v1/customers/cus_1'));
    expect(one).toMatchObject({ kind: 'respond', handlerName: 'decline', delayMs: 350, passedThrough: ['slow-everything'] });
    expect(s.decide(req('POST', '/v1/customers'))).toEqual({ kind: 'pass', delayMs: 100, passedThrough: ['slow-everything'] });
  });

  it('caps the summed delay at 60 s', () => {
    const s = state(`
handlers:
  - { match: /x, delay: 40s }
  - { match: "/*", delay: 40s }
`);
    expect(s.decide(req('GET', '/x')).delayMs).toBe(60_000);
  });

  it('takes literal segments over parameters whatever the document order', () => {
    const s = state(`
handlers:
  - { name: by-id, match: "GET /v1/customers/:id", respond: { status: 200, body: { id: "{{request.params.id}}" } } }
  - { name: search, match: "GET /v1/customers/search", respond: { status: 200, body: { search: true } } }
`);
    expect(s.decide(req('GET', '/v1/customers/search'))).toMatchObject({ handlerName: 'search' });
    expect(s.decide(req('GET', '/v1/customers/cus%201'))).toMatchObject({ handlerName: 'by-id', response: { body: { id: 'cus 1' } } });
  });

  it('answers faults: a reset, or a 5xx with headers and body', () => {
    const s = state(`
handlers:
  - { match: "POST /v1/charges", fault: reset }
  - { match: "GET /v1/charges", fault: { status: 503, headers: { Retry-After: "2" }, body: { error: "down for {{request.id}}" } } }
  - { match: "DELETE /v1/charges", fault: { status: 500 } }
`);
    expect(s.decide(req('POST', '/v1/charges'))).toMatchObject({ kind: 'fault', fault: { type: 'reset' } });
    expect(s.decide(req('GET', '/v1/charges', { id: 'r9' }))).toMatchObject({ kind: 'fault', fault: { type: 'status', status: 503, headers: { 'Retry-After': '2' }, body: { error: 'down for r9' } } });
    const bare = s.decide(req('DELETE', '/v1/charges'));
    expect(bare.kind === 'fault' && bare.fault).toEqual({ type: 'status', status: 500, headers: {} });
  });

  it('hands a js handler to the runner as one function expression with the path parameters', () => {
    const s = state(`
handlers:
  - name: computed
    match: { method: GET, path: /v1/customers/:id }
    delay: 10ms
    js: |
      return { status: 200, body: { id: request.params.id } } // trailing comment
`);
    const d = s.decide(req('GET', '/v1/customers/cus_9'));
    expect(d.kind).toBe('js');
    if (d.kind !== 'js') return;
    expect(d.delayMs).toBe(10);
    expect(d.call.params).toEqual({ id: 'cus_9' });
    expect(d.call.source).toContain('request.params.id');
    expect(d.call.functionSource.startsWith('(function (request, ctx) {')).toBe(true);
    expect(d.call.functionSource.endsWith('\n})')).toBe(true);
    expect(d.call.cacheKey).toBe('scenario:0:computed');
  });

  it('answers HEAD with a GET handler', () => {
    const s = state('handlers:\n  - { match: "GET /x", respond: { status: 204 } }');
    expect(s.decide(req('HEAD', '/x'))).toMatchObject({ kind: 'respond', response: { status: 204 } });
  });
});

describe('templates in responses', () => {
  const s = () => state(`
handlers:
  - name: echo
    match: { method: POST, path: /v1/customers/:id }
    respond:
      headers: { x-echo: "{{request.headers.x-in}}", x-count: "{{request.body.items}}", x-none: "{{request.body.nothing}}" }
      body:
        id: "{{request.params.id}}"
        label: "customer {{request.params.id}} of {{request.query.org}}"
        amount: "{{request.body.amount}}"
        items: "{{request.body.items}}"
        first: "{{request.body.items.0.price}}"
        expand: "{{request.query['expand[]']}}"
        missing: "{{request.body.nothing}}"
        list: ["{{request.body.nothing}}", "{{request.method}}"]
        name: "{{tree.customer[request.params.id].name}}"
        other: "{{tree.customer.cus_2.name}}"
        proto: "{{request.body.toString}}"
`);
  const lookup = (type: string, id: string): unknown => (type === 'customer' ? ({ cus_1: { name: 'Ada' }, cus_2: { name: 'Bob' } } as Record<string, unknown>)[id] : undefined);

  it('keeps the JSON type of a value that is exactly one template, and makes text of mixed ones', () => {
    const d = s().decide(req('POST', '/v1/customers/cus_1?org=acme&expand[]=x', {
      headers: { 'x-in': 'hello\r\nInjected: yes' },
      body: { amount: 2000, items: [{ price: 'p_1' }] },
    }), lookup);
    expect(d.kind).toBe('respond');
    if (d.kind !== 'respond') return;
    expect(d.response.status).toBe(200);
    expect(d.response.headers).toEqual({ 'x-echo': 'hello  Injected: yes', 'x-count': '[{"price":"p_1"}]' });
    expect(d.response.body).toEqual({
      id: 'cus_1',
      label: 'customer cus_1 of acme',
      amount: 2000,
      items: [{ price: 'p_1' }],
      first: 'p_1',
      expand: 'x',
      list: [null, 'POST'],
      name: 'Ada',
      other: 'Bob',
    });
  });

  it('renders tree lookups as missing when the runner gives no lookup', () => {
    const d = s().decide(req('POST', '/v1/customers/cus_1', { body: {} }));
    expect(d.kind === 'respond' && (d.response.body as Record<string, unknown>)['name']).toBeUndefined();
  });

  it('refuses a response that would copy too much, and records nothing', () => {
    const doc = { handlers: [{ name: 'amplify', match: { path: '/x' }, times: 1, then: { state: 'done' }, respond: { body: Array.from({ length: 20 }, () => '{{request.body}}') } }, { match: { path: '/y' }, when: { state: 'done' }, respond: {} }] };
    const st = new ScenarioState(parseScenario(JSON.stringify(doc), 'application/json'));
    const big = { blob: 'x'.repeat(1024 * 1024) };
    try {
      st.decide(req('POST', '/x', { body: big }));
      expect.unreachable();
    } catch (e) {
      expect((e as KitError).code).toBe('body_too_large');
    }
    expect(st.state).toBe('started');
    expect(st.report().handlers[0]).toMatchObject({ matched: 0, remaining: 1 });
    expect(st.decide(req('POST', '/x', { body: { small: 1 } })).kind).toBe('respond');
    expect(st.state).toBe('done');
  });
});

describe('ScenarioState.report', () => {
  const doc = `
handlers:
  - name: create
    match: { method: POST, path: /v1/customers }
    times: 1
    respond: { status: 400 }
  - name: big-charge
    match: { method: POST, path: /v1/charges, body: { currency: usd, amount: 2000 } }
    respond: { status: 402 }
  - name: later
    match: { method: GET, path: /v1/balance }
    when: { state: late }
    respond: { status: 200 }
  - name: mover
    match: { method: POST, path: /v1/tick }
    then: { state: late }
    delay: 1ms
`;

  it('lists handlers with times, remaining, counts and whether they can match now', () => {
    const s = state(doc);
    s.decide(req('POST', '/v1/customers'));
    const r = s.report();
    expect(r.state).toBe('started');
    expect(r.initialState).toBe('started');
    expect(r.handlers.map((h) => [h.name, h.does, h.times, h.remaining, h.matched, h.active])).toEqual([
      ['create', 'respond', 1, 0, 1, false],
      ['big-charge', 'respond', null, null, 0, true],
      ['later', 'respond', null, null, 0, false],
      ['mover', 'pass', null, null, 0, true],
    ]);
    expect(r.handlers[1]?.match).toEqual({ method: 'POST', path: '/v1/charges', body: { currency: 'usd', amount: 2000 } });
  });

  it('lists unmatched requests with the nearest miss: matcher part, used-up times, or wrong state', () => {
    const s = state(doc);
    s.decide(req('POST', '/v1/customers'));
    s.decide(req('POST', '/v1/customers', { id: 'used-up', at: '2026-01-01T00:00:00.000Z' }));
    s.decide(req('POST', '/v1/charges', { id: 'small', body: { currency: 'usd', amount: '100' } }));
    s.decide(req('DELETE', '/v1/charges', { id: 'method' }));
    s.decide(req('GET', '/v1/balance', { id: 'state' }));
    s.decide(req('GET', '/elsewhere', { id: 'far' }));
    const u = s.report().unmatched;
    expect(u.map((x) => x.requestId)).toEqual(['used-up', 'small', 'method', 'state', 'far']);
    expect(u[0]).toMatchObject({ at: '2026-01-01T00:00:00.000Z', method: 'POST', path: '/v1/customers', scenario: { matched: false, nearestMiss: { name: 'create', failed: 'times' } }, twin: null });
    expect(u[1]?.scenario).toMatchObject({ matched: false, nearestMiss: { name: 'big-charge', failed: 'body' } });
    expect(u[1]?.scenario?.matched === false && u[1].scenario.nearestMiss?.detail).toContain('"amount"');
    expect(u[2]?.scenario).toMatchObject({ nearestMiss: { name: 'big-charge', failed: 'method' } });
    expect(u[3]?.scenario).toMatchObject({ nearestMiss: { name: 'later', failed: 'state' } });
    expect(u[4]?.scenario).toEqual({ matched: false, nearestMiss: null });
    expect(s.report().unmatchedTotal).toBe(5);
  });

  it('keeps the last 100 unmatched requests and counts all of them', () => {
    const s = state(doc);
    for (let i = 0; i < 130; i++) s.decide(req('GET', `/nothing/${i}`, { id: `r${i}` }));
    const r = s.report();
    expect(r.unmatched).toHaveLength(100);
    expect(r.unmatched[0]?.requestId).toBe('r30');
    expect(r.unmatched[99]?.requestId).toBe('r129');
    expect(r.unmatchedTotal).toBe(130);
  });

  it('shows what the twin did with requests the scenario passed on', () => {
    const s = state(doc);
    const a = req('GET', '/v1/nothing', { id: 'both-missed' });
    s.decide(a);
    s.noteTwin(a, { route: null, nearestMiss: { index: 3, name: 'balance.get', failed: 'path', detail: 'x' } });
    const b = req('GET', '/v1/customers', { id: 'twin-took-it' });
    s.decide(b);
    s.noteTwin(b, { route: 'customers.list' });
    const c = req('POST', '/v1/tick', { id: 'delayed-then-twin-missed' });
    expect(s.decide(c).kind).toBe('pass');
    s.noteTwin(c, { route: null, nearestMiss: null });
    const d = req('POST', '/v1/tick', { id: 'delayed-then-twin-answered' });
    s.decide(d);
    s.noteTwin(d, { route: 'tick' });
    const e = req('GET', '/v1/balances', { id: 'catch-all-answered' });
    s.decide(e);
    s.noteTwin(e, { route: null, nearestMiss: { index: 3, name: 'balance.get', failed: 'path', detail: 'y' }, answeredBy: 'unrecognized' });
    const u = s.report().unmatched;
    expect(u.map((x) => x.requestId)).toEqual(['both-missed', 'twin-took-it', 'delayed-then-twin-missed', 'catch-all-answered']);
    expect(u[3]?.twin).toEqual({ matched: false, nearestMiss: { index: 3, name: 'balance.get', failed: 'path', detail: 'y' }, answeredBy: 'unrecognized' });
    expect(u[0]?.twin).toEqual({ matched: false, nearestMiss: { index: 3, name: 'balance.get', failed: 'path', detail: 'x' } });
    expect(u[1]?.twin).toEqual({ matched: true, route: 'customers.list' });
    expect(u[2]).toMatchObject({ scenario: { matched: true, handlers: ['mover'] }, twin: { matched: false, nearestMiss: null } });
  });

  it('starts over for a replaced scenario: a new state has fresh counts and the initial state', () => {
    const scenario = parseScenario(doc);
    const old = new ScenarioState(scenario);
    old.decide(req('POST', '/v1/customers'));
    old.decide(req('POST', '/v1/tick'));
    expect(old.state).toBe('late');
    const fresh = new ScenarioState(scenario);
    expect(fresh.state).toBe('started');
    expect(fresh.report().handlers.every((h) => h.matched === 0)).toBe(true);
    expect(fresh.decide(req('POST', '/v1/customers')).kind).toBe('respond');
  });

  it('refuses a hand-made scenario object', () => {
    expect(() => new ScenarioState({ initialState: 'x', handlers: [], format: 'yaml' })).toThrow(TypeError);
  });
});
