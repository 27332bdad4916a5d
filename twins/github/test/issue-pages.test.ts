/**
 * A repository's issue list sorted by creation is read from the store as far as its page; its
 * `Link` last page comes from the counts the repository keeps, or, filtered, from counting the
 * rest of the matches. Through @octokit/rest: the unfiltered and a filtered-but-everything list
 * answer the same pages and Link headers, and filtered lists answer what filtering every issue
 * answers.
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
      const made = (await gh.admin.issues.create({ ...r, title: `issue ${i}`, ...(i === 5 || i % 11 === 1 ? { milestone } : {}), ...(i % 4 === 0 ? { labels: ['bug'] } : {}) })).data;
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

  it('a filtered list answers, page by page, what filtering every issue answers, with Link headers to match', async () => {
    const every = await gh.admin.paginate(gh.admin.issues.listForRepo, { ...r, state: 'all', per_page: 100 });
    expect(every).toHaveLength(131);
    const filters: [Record<string, string>, (i: (typeof every)[number]) => boolean][] = [
      [{ labels: 'bug' }, (i) => i.labels.some((l) => typeof l === 'object' && l.name === 'bug')],
      [{ milestone: '1' }, (i) => i.milestone?.number === 1],
      [{ milestone: 'none', labels: 'bug' }, (i) => i.milestone === null && i.labels.length > 0],
    ];
    for (const [filter, test] of filters) {
      for (const state of ['open', 'closed', 'all'] as const) {
        for (const direction of ['desc', 'asc'] as const) {
          const want = every.filter((i) => (state === 'all' || i.state === state) && test(i)).map((i) => i.number).sort((a, b) => (direction === 'asc' ? a - b : b - a));
          const per_page = 4;
          const last = Math.max(1, Math.ceil(want.length / per_page));
          for (const page of [1, 2, last, last + 1]) {
            const got = await gh.admin.issues.listForRepo({ ...r, ...filter, state, direction, per_page, page });
            const label = `${JSON.stringify(filter)} ${state} ${direction} page=${page}`;
            expect(got.data.map((i) => i.number), label).toEqual(want.slice((page - 1) * per_page, page * per_page));
            if (page < last) expect(got.headers.link, label).toContain(`page=${last}>; rel="last"`);
            else expect(got.headers.link ?? '', label).not.toContain('rel="next"');
          }
        }
      }
    }
  });

  it('issues across repositories, sorted by creation, merge every repository\'s issues in the order a sort of them all gives', async () => {
    // Two more repositories; the clock is frozen, so many issues share an instant (and numbers).
    for (const [name, n] of [['merged-a', 40], ['merged-b', 25]] as const) {
      await gh.admin.repos.createForAuthenticatedUser({ name });
      for (let i = 0; i < n; i++) {
        const made = (await gh.admin.issues.create({ owner: 'admin', repo: name, title: `${name} ${i}`, ...(i % 3 === 0 ? { labels: ['bug'] } : {}) })).data;
        if (i % 4 === 0) await gh.admin.issues.update({ owner: 'admin', repo: name, issue_number: made.number, state: 'closed' });
        if (i % 10 === 9) await gh.advance(1000);
      }
    }
    type Item = { repo: string; repoId: number; number: number; created: string; state: string; bug: boolean };
    const every: Item[] = [];
    for (const repo of ['paged', 'merged-a', 'merged-b']) {
      const { data } = await gh.admin.repos.get({ owner: 'admin', repo });
      for (const i of await gh.admin.paginate(gh.admin.issues.listForRepo, { owner: 'admin', repo, state: 'all', per_page: 100 })) {
        every.push({ repo, repoId: data.id, number: i.number, created: i.created_at, state: i.state, bug: i.labels.some((l) => typeof l === 'object' && l.name === 'bug') });
      }
    }
    for (const [query, test] of [[{}, () => true], [{ labels: 'bug' }, (i: Item) => i.bug]] as const) {
      for (const state of ['open', 'closed', 'all'] as const) {
        for (const direction of ['desc', 'asc'] as const) {
          const key = (i: Item): string => `${i.created}${String(i.number).padStart(10, '0')}`;
          const want = every
            .filter((i) => (state === 'all' || i.state === state) && test(i))
            .sort((x, y) => (key(x) === key(y) ? (String(x.repoId) < String(y.repoId) ? -1 : 1) : (key(x) < key(y)) === (direction === 'asc') ? -1 : 1))
            .map((i) => `${i.repo}#${i.number}`);
          const per_page = 30;
          const last = Math.max(1, Math.ceil(want.length / per_page));
          for (const page of [1, 2, last]) {
            const got = await gh.admin.issues.list({ filter: 'all', ...query, state, direction, per_page, page });
            const label = `${JSON.stringify(query)} ${state} ${direction} page=${page}`;
            expect(got.data.map((i) => `${i.repository?.name}#${i.number}`), label).toEqual(want.slice((page - 1) * per_page, page * per_page));
            if (page < last) expect(got.headers.link, label).toContain(`page=${last}>; rel="last"`);
          }
        }
      }
    }
  });

  it('answers what a filtered-but-everything list answers, page by page, with the same Link headers', async () => {
    // `since` at the epoch filters nothing, but its last page is counted, not read from the repository's counts.
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
