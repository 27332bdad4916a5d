/**
 * Issue bookkeeping below the HTTP surface: milestone counts in a world made before they were
 * kept (a milestone without a `milestone_count` record is counted from its issues, and the first
 * issue moved in or out of it writes the record from that count); a filtered page of issues
 * that stops counting the rest past its budget.
 */
import { describe, expect, it } from 'vitest';
import type { Call } from '../lib/http.js';
import { memoryCtx, rng } from '../lib/memory.test-helper.js';
import { issuePage, mergedByCreation, milestoneCountOf, saveIssue, type StoredIssue } from './issues.js';
import type { StoredRepo } from './repos.js';

const issue = (number: number, milestone: number | null, state: 'open' | 'closed'): StoredIssue => ({ repoId: 7, number, milestone, state }) as StoredIssue;

describe('milestone counts kept before they were recorded', () => {
  it('counts a milestone with no record from its issues, then moves the count the first save writes', () => {
    const ctx = memoryCtx();
    ctx.tree.put('milestone', '7:0000000001', { number: 1 });
    // As an earlier version stored them: issues only, no counts.
    for (const i of [issue(1, 1, 'open'), issue(2, 1, 'closed'), issue(3, 1, 'open'), issue(4, null, 'open')]) ctx.tree.put('issue', `7:${String(i.number).padStart(10, '0')}`, i);
    expect(ctx.tree.get('milestone_count', '7:0000000001')).toBeUndefined();
    expect(milestoneCountOf(ctx.tree, 7, 1)).toEqual({ open: 2, closed: 1 });
    saveIssue(ctx, issue(3, 1, 'closed'));
    expect(ctx.tree.get('milestone_count', '7:0000000001')).toEqual({ open: 1, closed: 2 });
    saveIssue(ctx, issue(4, 1, 'open'));
    expect(milestoneCountOf(ctx.tree, 7, 1)).toEqual({ open: 2, closed: 2 });
  });
});

describe('a filtered page of issues', () => {
  const ctx = memoryCtx();
  // 300 issues; every 10th has the milestone.
  for (let n = 1; n <= 300; n++) ctx.tree.put('issue', `7:${String(n).padStart(10, '0')}`, issue(n, n % 10 === 0 ? 1 : null, 'open'));
  const page = (query: Record<string, string>, countReads: number): { numbers: number[]; link: string | undefined } => {
    const call = { ctx, caller: null, headers: {}, req: { method: 'GET', path: '/repos/o/r/issues', query, headers: {}, params: {}, body: undefined } } as unknown as Call;
    const got = issuePage(call, { id: 7 } as StoredRepo, 'open', 'desc', (i) => i.milestone === 1, countReads);
    return { numbers: got.map((i) => i.number), link: call.headers['link'] };
  };

  it('counts the matches past its page for Link\'s last page while within its budget', () => {
    const { numbers, link } = page({ per_page: '5' }, 1000);
    expect(numbers).toEqual([300, 290, 280, 270, 260]);
    expect(link).toContain('page=6>; rel="last"');
  });

  it('past its budget, links the next page even when the rest of the budget found no match', () => {
    // The 5 matches of the first page are 300…260; the next 5 issues read (259…255) hold none.
    const { numbers, link } = page({ per_page: '5' }, 5);
    expect(numbers).toEqual([300, 290, 280, 270, 260]);
    expect(link).toContain('page=2>; rel="next"');
    expect(link).not.toContain('rel="last"');
  });

  it('past its budget, answers the page with next and no last', () => {
    const { numbers, link } = page({ per_page: '5', page: '2' }, 20);
    expect(numbers).toEqual([250, 240, 230, 220, 210]);
    expect(link).toContain('page=3>; rel="next"');
    expect(link).toContain('page=1>; rel="prev"');
    expect(link).not.toContain('rel="last"');
  });
});

describe('issues of many repositories merged by creation', () => {
  it('come in the order a stable sort of them all by created_at and number gives, either way', () => {
    for (let seed = 1; seed <= 30; seed++) {
      const rnd = rng(seed);
      const ctx = memoryCtx();
      // 1 to 13 repositories (the generator's first draws barely move with the seed).
      const repos = Array.from({ length: 1 + ((seed * 7) % 13) }, (_, k) => ({ id: 10 + k }) as StoredRepo);
      const all: { repo: number; issue: StoredIssue }[] = [];
      for (const repo of repos) {
        // Instants only grow with the number, and often repeat (a frozen clock).
        let at = Date.parse('2026-01-01T00:00:00Z');
        const count = Math.floor(rnd() * 150);
        for (let n = 1; n <= count; n++) {
          if (rnd() < 0.3) at += 1000 * Math.floor(1 + rnd() * 3);
          const i = { ...issue(n, null, 'open'), repoId: repo.id, created_at: new Date(at).toISOString() } as StoredIssue;
          ctx.tree.put('issue', `${repo.id}:${String(n).padStart(10, '0')}`, i);
          all.push({ repo: repo.id, issue: i });
        }
      }
      for (const direction of ['asc', 'desc'] as const) {
        const key = (x: { issue: StoredIssue }): string => x.issue.created_at + String(x.issue.number).padStart(10, '0');
        const sign = direction === 'asc' ? 1 : -1;
        const want = all.slice().sort((x, y) => (key(x) < key(y) ? -sign : key(x) > key(y) ? sign : 0)).map((x) => `${x.repo}#${x.issue.number}`);
        const got = [...mergedByCreation(ctx.tree, repos, direction)].map((h) => `${h.repo.id}#${h.issue.number}`);
        expect(got, `seed ${seed} ${direction}`).toEqual(want);
      }
    }
  });
});
