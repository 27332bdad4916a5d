import { it } from 'vitest';
import { startGithubTwin } from './harness.js';
import { b64 } from './helpers.js';

it('measure', async () => {
  const gh = await startGithubTwin();
  const o = gh.admin;
  await o.repos.createForAuthenticatedUser({ name: 'm', auto_init: true });
  const r = { owner: 'admin', repo: 'm' };
  const time = async (label: string, n: number, fn: (i: number) => Promise<unknown>) => {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await fn(i);
    console.log(`${label}: ${((performance.now() - t0) / n).toFixed(2)} ms/request (n=${n})`);
  };
  await time('users.getAuthenticated', 200, () => o.users.getAuthenticated());
  await time('repos.get', 200, () => o.repos.get(r));
  await time('issues.create', 200, (i) => o.issues.create({ ...r, title: `issue ${i}`, labels: ['bug'] }));
  await time('issues.listForRepo per_page=100 (200 issues)', 20, () => o.issues.listForRepo({ ...r, per_page: 100 }));
  await time('issues.listForRepo per_page=1 (200 issues)', 20, () => o.issues.listForRepo({ ...r, per_page: 1 }));
  await time('issues.listForRepo per_page=100 no labels filter state=closed', 20, () => o.issues.listForRepo({ ...r, per_page: 100, state: 'closed' }));
  await time('issues.get', 200, (i) => o.issues.get({ ...r, issue_number: i + 1 }));
  await time('search issues (200 issues)', 20, () => o.search.issuesAndPullRequests({ q: 'repo:admin/m issue 1' }));
  let sha: string | undefined;
  await time('contents PUT (growing history)', 200, async (i) => {
    const res = await o.repos.createOrUpdateFileContents({ ...r, path: 'f.txt', message: `c${i}`, content: b64(`v${i}\n`), ...(sha ? { sha } : {}) });
    sha = res.data.content?.sha;
  });
  const main = (await o.repos.getBranch({ ...r, branch: 'main' })).data.commit.sha;
  await o.git.createRef({ ...r, ref: 'refs/heads/t', sha: main });
  await o.repos.createOrUpdateFileContents({ ...r, path: 'g.txt', branch: 't', message: 'g', content: b64('g\n') });
  const pr = await o.pulls.create({ ...r, title: 'pr', head: 't', base: 'main' });
  await time('pulls.get (201-commit history)', 20, () => o.pulls.get({ ...r, pull_number: pr.data.number }));
  await time('repos.listCommits (201 commits, per_page 30)', 20, () => o.repos.listCommits({ ...r }));
  await time('compare main...t', 20, () => o.repos.compareCommitsWithBasehead({ ...r, basehead: 'main...t' }));
  await gh.close();
}, 300_000);
