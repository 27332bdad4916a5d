/**
 * Milestone counts in a world made before they were kept: a milestone without a
 * `milestone_count` record is counted from its issues, and the first issue moved in or out of
 * it writes the record from that count.
 */
import { describe, expect, it } from 'vitest';
import { memoryCtx } from '../lib/memory.test-helper.js';
import { milestoneCountOf, saveIssue, type StoredIssue } from './issues.js';

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
