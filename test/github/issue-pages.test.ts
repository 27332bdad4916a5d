/**
 * A repository's issue list without filters, sorted by creation, is read from the store as far
 * as its page (the twin's fast path); with any filter it reads every issue (the general path).
 * Through @octokit/rest, the two answer the same pages and the same Link headers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGithubTwin, type GithubTwin } from './harness.js';
import { b64 } from './helpers.js';

describe('GitHub twin: pages of a repository\'s issues', () => {
  let gh: GithubTwin;
  const r = { owner: 'admin', repo: 'paged' };

  beforeAll(async () => {
    gh = await startGithubTwin();
    await gh.admin.repos.createForAuthenticatedUser({ name: 'paged', auto_init: true });
    const milestone = (await gh.admin.issues.createMilestone({ ...r, title: 'v1' })).data.number;
    // 130 issues (more than one read of the store), every third closed, one with a milestone;
    // and a pull request (an issue too), merged.
    for (let i = 0; i < 130; i++) {
      const made = (await gh.admin.issues.create({ ...r, title: `issue ${i}`, ...(i === 5 ? { milestone } : {}) })).data;
      if (i % 3 === 0) await gh.admin.issues.update({ ...r, issue_number: made.number, state: 'closed' });
      if (i === 10) {
        const main = (await gh.admin.repos.getBranch({ ...r, branch: 'main' })).data.commit.sha;
        await gh.admin.git.createRef({ ...r, ref: 'refs/heads/topic', sha: main });
        await gh.admin.repos.createOrUpdateFileContents({ ...r, path: 't.txt', branch: 'topic', message: 't', content: b64('t\n') });
        const pr = (await gh.admin.pulls.create({ ...r, title: 'a pull request', head: 'topic', base: 'main' })).data;
        await gh.admin.pulls.merge({ ...r, pull_number: pr.number });
      }
    }
    // Reopened: the open count goes back up.
    await gh.admin.issues.update({ ...r, issue_number: 4, state: 'open' });
  });
  afterAll(async () => { await gh?.close(); });

  it('answers what the general path answers, page by page, with the same Link headers', async () => {
    // `since` at the epoch filters nothing but takes the general path.
    const every = { since: '1970-01-01T00:00:00Z' };
    for (const state of ['open', 'closed', 'all'] as const) {
      for (const direction of ['desc', 'asc'] as const) {
        for (const per_page of [1, 7, 30, 100]) {
          const last = Math.ceil(131 / per_page) + 1;
          for (const page of [1, 2, 3, last - 1, last]) {
            const q = { ...r, state, direction, per_page, page };
            const fast = await gh.admin.issues.listForRepo(q);
            const general = await gh.admin.issues.listForRepo({ ...q, ...every });
            const label = `${state} ${direction} per_page=${per_page} page=${page}`;
            expect(fast.data.map((i) => i.number), label).toEqual(general.data.map((i) => i.number));
            expect(fast.data, label).toEqual(general.data);
            expect(fast.headers.link, label).toBe(general.headers.link?.replace(/since=1970-01-01T00%3A00%3A00Z&/g, ''));
            if (per_page < 30 && page === 1) expect(fast.headers.link, label).toContain('rel="last"');
          }
        }
      }
    }
  });
});
