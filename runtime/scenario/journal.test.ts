import { describe, expect, it } from 'vitest';
import { MAX_REPORTED_PATH, MAX_REPORTED_QUERY, MAX_UNMATCHED, UnmatchedJournal } from './journal.js';
import type { ScenarioRequest } from './types.js';

function req(id: string, path: string, query: Record<string, string | string[]> = {}): ScenarioRequest {
  return { id, method: 'GET', path, query, headers: {}, body: undefined, at: '2026-01-01T00:00:00.000Z' };
}

const miss = { matched: false as const, nearestMiss: null };

describe('UnmatchedJournal', () => {
  it('keeps the last 100, oldest first, and counts every one', () => {
    const j = new UnmatchedJournal();
    for (let i = 0; i < MAX_UNMATCHED + 30; i++) j.push(req(`r${i}`, `/v1/x/${i}`), null, miss);
    const { unmatched, unmatchedTotal } = j.list();
    expect(unmatchedTotal).toBe(130);
    expect(unmatched.map((u) => u.requestId).slice(0, 2)).toEqual(['r30', 'r31']);
    expect(unmatched).toHaveLength(100);
  });

  it('clips a long path and a long query, so no entry holds more than a few KB of the request', () => {
    const j = new UnmatchedJournal();
    const long = 'a'.repeat(10_000);
    j.push(req('big', `/${long}`, { q: long, many: ['x'.repeat(1000), 'y'.repeat(1000), 'z'.repeat(1000)], after: 'dropped' }), null, miss);
    const [u] = j.list().unmatched;
    expect(u?.path).toHaveLength(MAX_REPORTED_PATH + 1);
    expect(u?.path.endsWith('…')).toBe(true);
    const kept = Object.entries(u?.query ?? {}).reduce((n, [k, v]) => n + k.length + (Array.isArray(v) ? v.join('') : v).length, 0);
    expect(kept).toBeLessThanOrEqual(MAX_REPORTED_QUERY + 4);
    expect(Object.keys(u?.query ?? {})).toEqual(['q']);
  });

  it('keeps a query named __proto__ as data', () => {
    const j = new UnmatchedJournal();
    const query = JSON.parse('{"__proto__": "x", "a": "1"}') as Record<string, string>;
    j.push(req('p', '/v1/x', query), null, miss);
    const [u] = j.list().unmatched;
    expect(Object.getPrototypeOf(u?.query)).toBe(Object.prototype);
    expect(JSON.stringify(u?.query)).toBe('{"__proto__":"x","a":"1"}');
  });

  it('answers copies, and the report of a twin with no scenario in force', () => {
    const j = new UnmatchedJournal();
    j.push(req('a', '/v1/x'), null, miss);
    const first = j.list();
    (first.unmatched[0] as { path: string }).path = '/changed';
    expect(j.plainReport()).toEqual({
      state: 'started', initialState: 'started', handlers: [], unmatchedTotal: 1,
      unmatched: [{ requestId: 'a', at: '2026-01-01T00:00:00.000Z', method: 'GET', path: '/v1/x', query: {}, scenario: null, twin: miss }],
    });
  });
});
