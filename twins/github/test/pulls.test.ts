/**
 * Pull requests through @octokit/rest: create (a pull request is an issue too), list, get
 * (`mergeable`), files, commits, merge by merge commit, squash and rebase, conflicts, reviews.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGithubTwin, type GithubTwin } from './harness.js';
import { b64, failure, unb64 } from './helpers.js';

describe('GitHub twin: pull requests', () => {
  let gh: GithubTwin;
  let maint: string;
  let reviewer: string;
  const r = { owner: 'maint', repo: 'shop' };

  async function branch(name: string, files: Record<string, string>[]): Promise<string> {
    const main = (await gh.as(maint).repos.getBranch({ ...r, branch: 'main' })).data.commit.sha;
    await gh.as(maint).git.createRef({ ...r, ref: `refs/heads/${name}`, sha: main });
    let head = main;
    for (const commit of files) {
      for (const [path, text] of Object.entries(commit)) {
        let sha: string | undefined;
        try {
          sha = ((await gh.as(maint).repos.getContent({ ...r, path, ref: name })).data as { sha: string }).sha;
        } catch { sha = undefined; }
        const res = await gh.as(maint).repos.createOrUpdateFileContents({ ...r, path, branch: name, message: `${name}: ${path}`, content: b64(text), ...(sha === undefined ? {} : { sha }) });
        head = res.data.commit.sha as string;
      }
    }
    return head;
  }

  beforeAll(async () => {
    gh = await startGithubTwin();
    maint = await gh.user('maint');
    reviewer = await gh.user('reviewer');
    await gh.as(maint).repos.createForAuthenticatedUser({ name: 'shop', auto_init: true });
    await gh.as(maint).issues.create({ ...r, title: 'An issue first' });
  });
  afterAll(async () => { await gh?.close(); });

  it('creates a pull request that is also an issue; get shows mergeable, commits and files', async () => {
    const head = await branch('feature', [{ 'src/a.ts': 'export const a = 1;\n' }, { 'src/b.ts': 'export const b = 2;\n' }]);
    const pr = await gh.as(maint).pulls.create({ ...r, title: 'Add a and b', head: 'feature', base: 'main', body: 'Adds two files' });
    expect(pr.status).toBe(201);
    expect(pr.data).toMatchObject({ number: 2, state: 'open', title: 'Add a and b', head: { ref: 'feature', sha: head, label: 'maint:feature' }, base: { ref: 'main' }, merged: false });
    const asIssue = await gh.as(maint).issues.get({ ...r, issue_number: 2 });
    expect(asIssue.data.pull_request?.url).toContain('/pulls/2');
    const listed = await gh.as(maint).issues.listForRepo({ ...r });
    expect(listed.data.map((i) => i.number)).toEqual([2, 1]);
    const got = await gh.as(maint).pulls.get({ ...r, pull_number: 2 });
    expect(got.data).toMatchObject({ mergeable: true, mergeable_state: 'clean', commits: 2, changed_files: 2, additions: 2, deletions: 0 });
    const files = await gh.as(maint).pulls.listFiles({ ...r, pull_number: 2 });
    expect(files.data.map((f) => `${f.status} ${f.filename} +${f.additions}`)).toEqual(['added src/a.ts +1', 'added src/b.ts +1']);
    const commits = await gh.as(maint).pulls.listCommits({ ...r, pull_number: 2 });
    expect(commits.data.map((c) => c.commit.message)).toEqual(['feature: src/a.ts', 'feature: src/b.ts']);
    const list = await gh.as(maint).pulls.list({ ...r, head: 'maint:feature' });
    expect(list.data.map((p) => p.number)).toEqual([2]);
  });

  it('refuses a pull request without commits, a duplicate, and an unknown head with 422', async () => {
    await gh.as(maint).git.createRef({ ...r, ref: 'refs/heads/same', sha: (await gh.as(maint).repos.getBranch({ ...r, branch: 'main' })).data.commit.sha });
    const none = await failure(gh.as(maint).pulls.create({ ...r, title: 'nothing', head: 'same', base: 'main' }));
    expect(none.status).toBe(422);
    expect((none.response?.data as { errors: { message: string }[] }).errors[0]?.message).toBe('No commits between main and same');
    const dup = await failure(gh.as(maint).pulls.create({ ...r, title: 'again', head: 'feature', base: 'main' }));
    expect((dup.response?.data as { errors: { message: string }[] }).errors[0]?.message).toBe('A pull request already exists for maint:feature.');
    const unknown = await failure(gh.as(maint).pulls.create({ ...r, title: 'x', head: 'ghost-branch', base: 'main' }));
    expect((unknown.response?.data as { errors: { field: string }[] }).errors[0]).toMatchObject({ field: 'head', code: 'invalid' });
  });

  it('requested reviewers: added and listed, not the author, and a submitted review takes the reviewer off', async () => {
    const asked = await gh.as(maint).pulls.requestReviewers({ ...r, pull_number: 2, reviewers: ['reviewer'] });
    expect(asked.status).toBe(201);
    expect(asked.data.requested_reviewers?.map((u) => u.login)).toEqual(['reviewer']);
    expect((await gh.as(maint).pulls.listRequestedReviewers({ ...r, pull_number: 2 })).data.users.map((u) => u.login)).toEqual(['reviewer']);
    expect((await failure(gh.as(maint).pulls.requestReviewers({ ...r, pull_number: 2, reviewers: ['maint'] }))).status).toBe(422);
    expect((await failure(gh.as(maint).pulls.requestReviewers({ ...r, pull_number: 2, reviewers: ['nobody-here'] }))).status).toBe(422);
    await gh.as(reviewer).pulls.createReview({ ...r, pull_number: 2, event: 'COMMENT', body: 'looking' });
    expect((await gh.as(maint).pulls.get({ ...r, pull_number: 2 })).data.requested_reviewers).toEqual([]);
    await gh.as(maint).pulls.requestReviewers({ ...r, pull_number: 2, reviewers: ['reviewer'] });
    const removed = await gh.as(maint).pulls.removeRequestedReviewers({ ...r, pull_number: 2, reviewers: ['reviewer'] });
    expect(removed.data.requested_reviewers).toEqual([]);
  });

  it('reviews: approve, request changes needs a body, no approving your own, pending then submitted', async () => {
    const own = await failure(gh.as(maint).pulls.createReview({ ...r, pull_number: 2, event: 'APPROVE' }));
    expect(own.status).toBe(422);
    const noBody = await failure(gh.as(reviewer).pulls.createReview({ ...r, pull_number: 2, event: 'REQUEST_CHANGES' }));
    expect(noBody.status).toBe(422);
    const changes = await gh.as(reviewer).pulls.createReview({ ...r, pull_number: 2, event: 'REQUEST_CHANGES', body: 'Please add tests' });
    expect(changes.data).toMatchObject({ state: 'CHANGES_REQUESTED', body: 'Please add tests', user: { login: 'reviewer' } });
    const pending = await gh.as(reviewer).pulls.createReview({ ...r, pull_number: 2, body: 'drafting' });
    expect(pending.data.state).toBe('PENDING');
    // A pending review is its author's alone.
    expect((await gh.as(maint).pulls.listReviews({ ...r, pull_number: 2 })).data.map((x) => x.state)).toEqual(['COMMENTED', 'CHANGES_REQUESTED']);
    const submitted = await gh.as(reviewer).pulls.submitReview({ ...r, pull_number: 2, review_id: pending.data.id, event: 'APPROVE' });
    expect(submitted.data.state).toBe('APPROVED');
    expect((await gh.as(maint).pulls.listReviews({ ...r, pull_number: 2 })).data.map((x) => x.state)).toEqual(['COMMENTED', 'CHANGES_REQUESTED', 'APPROVED']);
  });

  it('review comments on a line of the diff: create, reply, list, edit, delete; a bad path or line is 422', async () => {
    const c = await gh.as(reviewer).pulls.createReviewComment({ ...r, pull_number: 2, body: 'Why 1?', path: 'src/a.ts', line: 1, side: 'RIGHT', commit_id: (await gh.as(maint).pulls.get({ ...r, pull_number: 2 })).data.head.sha });
    expect(c.status).toBe(201);
    expect(c.data).toMatchObject({ path: 'src/a.ts', line: 1, side: 'RIGHT', user: { login: 'reviewer' } });
    const reply = await gh.as(maint).pulls.createReplyForReviewComment({ ...r, pull_number: 2, comment_id: c.data.id, body: 'Because.' });
    expect(reply.data.in_reply_to_id).toBe(c.data.id);
    expect((await failure(gh.as(reviewer).pulls.createReviewComment({ ...r, pull_number: 2, body: 'x', path: 'nope.ts', line: 1, commit_id: c.data.commit_id }))).status).toBe(422);
    expect((await failure(gh.as(reviewer).pulls.createReviewComment({ ...r, pull_number: 2, body: 'x', path: 'src/a.ts', line: 99, commit_id: c.data.commit_id }))).status).toBe(422);
    const edited = await gh.as(reviewer).pulls.updateReviewComment({ ...r, comment_id: c.data.id, body: 'Why one?' });
    expect(edited.data.body).toBe('Why one?');
    const review = await gh.as(reviewer).pulls.createReview({ ...r, pull_number: 2, event: 'COMMENT', body: 'Two notes', comments: [{ path: 'src/b.ts', line: 1, body: 'ok' }] });
    const list = await gh.as(maint).pulls.listReviewComments({ ...r, pull_number: 2 });
    expect(list.data.map((x) => x.body)).toEqual(['Why one?', 'Because.', 'ok']);
    expect(list.data[2]?.pull_request_review_id).toBe(review.data.id);
    await gh.as(reviewer).pulls.deleteReviewComment({ ...r, comment_id: c.data.id });
    expect((await failure(gh.as(maint).pulls.getReviewComment({ ...r, comment_id: c.data.id }))).status).toBe(404);
    expect((await gh.as(maint).pulls.listReviewCommentsForRepo({ ...r })).data).toHaveLength(2);
  });

  it('merges with a merge commit (no message given): two parents, the issue closed, merging twice is 405', async () => {
    const before = await gh.as(maint).pulls.get({ ...r, pull_number: 2 });
    const stale = await failure(gh.as(maint).pulls.merge({ ...r, pull_number: 2, sha: 'b'.repeat(40) }));
    expect(stale.status).toBe(409);
    const merged = await gh.as(maint).pulls.merge({ ...r, pull_number: 2 });
    expect(merged.data).toMatchObject({ merged: true, message: 'Pull Request successfully merged' });
    const main = await gh.as(maint).repos.getCommit({ ...r, ref: 'main' });
    expect(main.data.sha).toBe(merged.data.sha);
    expect(main.data.parents.map((p) => p.sha)).toEqual([before.data.base.sha, before.data.head.sha]);
    expect(main.data.commit.message).toBe('Merge pull request #2 from maint/feature\n\nAdd a and b');
    const after = await gh.as(maint).pulls.get({ ...r, pull_number: 2 });
    expect(after.data).toMatchObject({ state: 'closed', merged: true, merge_commit_sha: merged.data.sha, merged_by: { login: 'maint' } });
    expect((await gh.as(maint).pulls.checkIfMerged({ ...r, pull_number: 2 })).status).toBe(204);
    expect((await failure(gh.as(maint).pulls.merge({ ...r, pull_number: 2 }))).status).toBe(405);
    const file = await gh.as(maint).repos.getContent({ ...r, path: 'src/b.ts' });
    expect(unb64((file.data as { content: string }).content)).toBe('export const b = 2;\n');
  });

  it('squash makes one commit on the base; rebase replays each commit linearly', async () => {
    await branch('squashy', [{ 's1.txt': 'one\n' }, { 's2.txt': 'two\n' }]);
    const sq = await gh.as(maint).pulls.create({ ...r, title: 'Squash me', head: 'squashy', base: 'main' });
    const base = (await gh.as(maint).repos.getBranch({ ...r, branch: 'main' })).data.commit.sha;
    const done = await gh.as(maint).pulls.merge({ ...r, pull_number: sq.data.number, merge_method: 'squash', commit_title: 'Squashed!' });
    const c = await gh.as(maint).repos.getCommit({ ...r, ref: done.data.sha });
    expect(c.data.parents.map((p) => p.sha)).toEqual([base]);
    expect(c.data.commit.message.split('\n')[0]).toBe('Squashed!');
    expect(c.data.files?.map((f) => f.filename)).toEqual(['s1.txt', 's2.txt']);

    await branch('rebasy', [{ 'r1.txt': 'r1\n' }, { 'r2.txt': 'r2\n' }]);
    // Main moves on, so the rebase really replays onto a new base.
    await gh.as(maint).repos.createOrUpdateFileContents({ ...r, path: 'main-moved.txt', message: 'main moved', content: b64('x\n') });
    const rb = await gh.as(maint).pulls.create({ ...r, title: 'Rebase me', head: 'rebasy', base: 'main' });
    const rebased = await gh.as(maint).pulls.merge({ ...r, pull_number: rb.data.number, merge_method: 'rebase' });
    const log = await gh.as(maint).repos.listCommits({ ...r, per_page: 3 });
    expect(log.data.map((x) => x.commit.message)).toEqual(['rebasy: r2.txt', 'rebasy: r1.txt', 'main moved']);
    expect(log.data[0]?.sha).toBe(rebased.data.sha);
    expect(log.data.every((x) => x.parents.length === 1)).toBe(true);
  });

  it('a conflict makes mergeable false and the merge 405', async () => {
    await branch('left', [{ 'shared.txt': 'left\n' }]);
    await branch('right', [{ 'shared.txt': 'right\n' }]);
    const left = await gh.as(maint).pulls.create({ ...r, title: 'Left', head: 'left', base: 'main' });
    const right = await gh.as(maint).pulls.create({ ...r, title: 'Right', head: 'right', base: 'main' });
    await gh.as(maint).pulls.merge({ ...r, pull_number: left.data.number });
    const got = await gh.as(maint).pulls.get({ ...r, pull_number: right.data.number });
    expect(got.data).toMatchObject({ mergeable: false, mergeable_state: 'dirty' });
    const e = await failure(gh.as(maint).pulls.merge({ ...r, pull_number: right.data.number }));
    expect(e.status).toBe(405);
    expect(e.response?.data).toMatchObject({ message: 'Pull Request is not mergeable' });
    // Closing and editing a pull request goes through the issue fields.
    const closed = await gh.as(maint).pulls.update({ ...r, pull_number: right.data.number, state: 'closed', title: 'Right (abandoned)' });
    expect(closed.data).toMatchObject({ state: 'closed', title: 'Right (abandoned)', merged: false });
    expect((await gh.as(maint).pulls.list({ ...r, state: 'closed' })).data.map((p) => p.title)).toContain('Right (abandoned)');
  });

  it('search finds pull requests with is:pr and is:merged', async () => {
    const merged = await gh.as(maint).search.issuesAndPullRequests({ q: 'repo:maint/shop is:pr is:merged' });
    expect(merged.data.items.map((i) => i.number).sort((a, b) => a - b)).toEqual([2, 3, 4, 5]);
    const open = await gh.as(maint).search.issuesAndPullRequests({ q: 'repo:maint/shop is:issue' });
    expect(open.data.items.map((i) => i.title)).toEqual(['An issue first']);
  });
});
