/**
 * The trie against a reference that needs no cleverness: every route checked one by
 * one, the matches sorted by specificity then declaration order. Seeded, so a failure
 * reproduces.
 */
import { describe, expect, it } from 'vitest';
import type { Matcher } from '../../sdk/twin/types.js';
import { compareSpecificity, parsePattern, type Segment } from './pattern.js';
import { compileRouter } from './router.js';
import type { RouteRequest } from './types.js';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x9e3779b9) >>> 0;
    return s / 4294967296;
  };
}

const WORDS = ['v1', 'customers', 'search', 'a', 'b', '%61', 'x%20y'];
const REQUEST_WORDS = [...WORDS, 'x y', '%E2%82', '%C3%A9'];
const METHODS = ['GET', 'POST', 'HEAD', 'DELETE'];

function referenceAll(routes: { match: Matcher }[], req: RouteRequest): { index: number; params: Record<string, string> }[] {
  const segs = req.path.slice(1).split('/');
  const hits: { index: number; params: Record<string, string>; segments: Segment[]; viaGet: boolean }[] = [];
  routes.forEach((r, index) => {
    const p = parsePattern(r.match.path);
    if (!p.ok) throw new Error('bad pattern in test');
    const methods = r.match.method === undefined ? null : ([] as string[]).concat(r.match.method);
    let viaGet = false;
    if (methods !== null && !methods.includes(req.method)) {
      if (req.method === 'HEAD' && methods.includes('GET')) viaGet = true;
      else return;
    }
    const params: Record<string, string> = {};
    for (let i = 0; i < p.segments.length; i++) {
      const s = p.segments[i] as Segment;
      if (s.kind === 'rest') {
        let v: string;
        try { v = decodeURIComponent(segs.slice(i).join('/')); } catch { return; }
        if (s.name) params[s.name] = v;
        hits.push({ index, params, segments: p.segments, viaGet });
        return;
      }
      const raw = segs[i];
      if (raw === undefined) return;
      let d: string | null;
      try { d = decodeURIComponent(raw); } catch { d = null; }
      if (s.kind === 'literal') {
        if ((d ?? raw) !== s.value) return;
      } else {
        if (d === null || d === '') return;
        params[s.name] = d;
      }
    }
    if (segs.length !== p.segments.length) return;
    hits.push({ index, params, segments: p.segments, viaGet });
  });
  const sorted = (xs: typeof hits) => xs.sort((a, b) => compareSpecificity(a.segments, b.segments) || a.index - b.index);
  // HEAD: routes that take HEAD itself come before GET routes answering for it.
  return [...sorted(hits.filter((h) => !h.viaGet)), ...sorted(hits.filter((h) => h.viaGet))].map(({ index, params }) => ({ index, params }));
}

describe('compileRouter against a linear reference', () => {
  it('agrees on match and matchAll for 300 random route sets × 50 requests', () => {
    const rand = rng(20261122);
    const pick = <T,>(xs: T[]): T => xs[Math.floor(rand() * xs.length)] as T;
    for (let round = 0; round < 300; round++) {
      const routes: { name: string; match: Matcher; value: number }[] = [];
      const count = 1 + Math.floor(rand() * 12);
      for (let i = 0; i < count; i++) {
        const len = Math.floor(rand() * 4);
        const segs: string[] = [];
        for (let j = 0; j < len; j++) {
          const k = rand();
          segs.push(k < 0.55 ? pick(WORDS) : k < 0.85 ? `:p${j}` : j === len - 1 ? `*r${j}` : pick(WORDS));
        }
        const match: Matcher = { path: `/${segs.join('/')}` };
        const mk = rand();
        if (mk < 0.4) match.method = pick(METHODS);
        else if (mk < 0.55) match.method = ['GET', 'POST'];
        routes.push({ name: `r${i}`, match, value: i });
      }
      const router = compileRouter(routes);
      for (let q = 0; q < 50; q++) {
        const len = Math.floor(rand() * 5);
        const segs = Array.from({ length: len }, () => (rand() < 0.1 ? '%zz' : rand() < 0.1 ? '' : pick(REQUEST_WORDS)));
        const req: RouteRequest = { method: pick(METHODS), path: `/${segs.join('/')}`, query: {}, headers: {}, body: undefined };
        const want = referenceAll(routes, req);
        const all = router.matchAll(req).map(({ index, params }) => ({ index, params }));
        expect(all, `${req.method} ${req.path} over ${routes.map((r) => `${String(r.match.method ?? '*')} ${r.match.path}`).join(' | ')}`).toEqual(want);
        const one = router.match(req);
        expect(one === null ? null : { index: one.index, params: one.params }).toEqual(want[0] ?? null);
        if (want.length === 0) {
          const miss = router.nearestMiss(req);
          if (miss !== null) expect(miss.index).toBeLessThan(routes.length);
        } else expect(router.nearestMiss(req)).toBeNull();
      }
    }
  });

  it('survives a path of 100 000 segments and 1 MB', () => {
    const router = compileRouter([{ name: 'r', match: { path: '/v1/*rest' }, value: 1 }, { name: 'p', match: { path: '/v1/:a/:b' }, value: 2 }]);
    const path = `/v1${'/a%zz'.repeat(100_000)}`;
    const req: RouteRequest = { method: 'GET', path, query: {}, headers: {}, body: undefined };
    expect(router.match(req)).toBeNull();
    expect(router.nearestMiss(req)).toMatchObject({ failed: 'path' });
    expect(router.match({ ...req, path: `/v1${'/a'.repeat(100_000)}` })?.value).toBe(1);
  });
});
