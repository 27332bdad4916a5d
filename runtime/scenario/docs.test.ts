/**
 * The examples in docs/scenarios.md are real: each fenced yaml block parses, and the
 * worked examples behave as the text says when run through `decide`.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseScenario } from './parse.js';
import { ScenarioState } from './state.js';
import type { Decision, ScenarioRequest } from './types.js';

const doc = readFileSync(fileURLToPath(new URL('../../docs/scenarios.md', import.meta.url)), 'utf8');

const named = new Map<string, string>();
for (const m of doc.matchAll(/<!-- example: ([\w-]+) -->\n```yaml\n([\s\S]*?)```/g)) named.set(m[1] as string, m[2] as string);
const allYaml = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] as string);

function example(name: string): ScenarioState {
  const text = named.get(name);
  if (text === undefined) throw new Error(`docs/scenarios.md has no example "${name}"`);
  return new ScenarioState(parseScenario(text, 'application/yaml'));
}

let n = 0;
function req(method: string, path: string, extra: Partial<ScenarioRequest> = {}): ScenarioRequest {
  return { id: `req_${++n}`, method, path, query: {}, headers: {}, body: undefined, ...extra };
}

function summary(d: Decision): string {
  if (d.kind === 'respond') return `respond ${d.response.status}`;
  if (d.kind === 'fault') return d.fault.type === 'reset' ? 'reset' : `fault ${d.fault.status}`;
  return `${d.kind}${d.delayMs ? ` +${d.delayMs}ms` : ''}`;
}

describe('docs/scenarios.md', () => {
  it('has the worked examples, and every yaml block but the format outline parses', () => {
    expect([...named.keys()]).toEqual(expect.arrayContaining(['decline-next-charge', 'rate-limit-then-recover', 'slow-lists', 'flaky', 'templates', 'js']));
    const blocks = allYaml.filter((b) => !b.includes('…')); // the outline of the format uses … placeholders
    expect(blocks.length).toBeGreaterThanOrEqual(named.size + 1);
    for (const b of blocks) {
      if (b.trimStart().startsWith('match:')) {
        // A lone matcher: check it inside a handler.
        parseScenario(`handlers:\n  - delay: 1ms\n${b.replace(/^/gm, '    ')}`);
      } else parseScenario(b);
    }
  });

  it('declines the next charge once, in Stripe\'s error shape, then lets the twin answer', () => {
    const s = example('decline-next-charge');
    const first = s.decide(req('POST', '/v1/payment_intents', { id: 'abc', body: { amount: '2000', currency: 'usd', payment_method: 'pm_card_visa' } }));
    expect(first.kind).toBe('respond');
    if (first.kind === 'respond') {
      expect(first.response.status).toBe(402);
      expect(first.response.headers['request-id']).toBe('req_abc');
      expect(first.response.body).toMatchObject({ error: { type: 'card_error', code: 'card_declined', decline_code: 'generic_decline', param: 'pm_card_visa' } });
    }
    expect(summary(s.decide(req('POST', '/v1/payment_intents')))).toBe('pass');
    expect(summary(s.decide(req('GET', '/v1/payment_intents')))).toBe('pass');
  });

  it('answers 429 with Retry-After three times, then recovers', () => {
    const s = example('rate-limit-then-recover');
    const ds = [1, 2, 3].map(() => s.decide(req('GET', '/v1/customers')));
    for (const d of ds) {
      expect(summary(d)).toBe('respond 429');
      expect(d.kind === 'respond' && d.response.headers['Retry-After']).toBe('1');
    }
    expect(s.state).toBe('recovered');
    expect(summary(s.decide(req('POST', '/v1/customers')))).toBe('pass');
    const r = s.report();
    expect(r.state).toBe('recovered');
    expect(r.handlers[0]).toMatchObject({ matched: 3, remaining: 0, active: false });
    expect(r.unmatched.at(-1)?.scenario).toMatchObject({ matched: false, nearestMiss: { name: 'rate-limited' } });
  });

  it('slows every list call by 2 s and nothing else', () => {
    const s = example('slow-lists');
    expect(summary(s.decide(req('GET', '/v1/customers')))).toBe('pass +2000ms');
    expect(summary(s.decide(req('GET', '/v1/charges')))).toBe('pass +2000ms');
    expect(summary(s.decide(req('GET', '/v1/customers/cus_1/sources')))).toBe('pass +2000ms');
    expect(summary(s.decide(req('GET', '/v1/customers/cus_1')))).toBe('pass');
    expect(summary(s.decide(req('POST', '/v1/customers')))).toBe('pass');
  });

  it('drops every other create and answers 503 to lists in the flaky example', () => {
    const s = example('flaky');
    const creates = [1, 2, 3, 4].map(() => summary(s.decide(req('POST', '/v1/charges'))));
    expect(creates).toEqual(['reset', 'pass', 'reset', 'pass']);
    const list = s.decide(req('GET', '/v1/charges'));
    expect(list.kind === 'fault' && list.fault).toEqual({ type: 'status', status: 503, headers: { 'Retry-After': '5' } });
  });

  it('fills the templates example from the request and the tree', () => {
    const s = example('templates');
    const d = s.decide(
      req('GET', '/v1/customers/cus_1', { query: { 'expand[]': 'sources' }, headers: { 'user-agent': 'Stripe/v1 NodeBindings' } }),
      (type, id) => (type === 'customer' && id === 'cus_1' ? { name: 'Ada', metadata: { plan: 'pro' } } : undefined),
    );
    expect(d.kind === 'respond' && d.response.body).toEqual({ id: 'cus_1', object: 'customer', name: 'Ada', metadata: { plan: 'pro' }, note: 'asked by Stripe/v1 NodeBindings for sources' });
  });

  it('hands the js example to the runner', () => {
    const d = example('js').decide(req('POST', '/v1/refunds'));
    expect(d.kind).toBe('js');
    expect(d.kind === 'js' && d.call.source).toContain('Refund too large');
  });
});
