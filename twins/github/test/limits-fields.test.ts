/**
 * GitHub's limits on what a repository, an issue, a pull request, a comment, a release or a label
 * may hold, through @octokit/rest: each refused with GitHub's own 422 (shape and words), so a
 * value the twin repeats in every list item and webhook payload cannot grow to the 4 MiB a
 * request may carry. And the lists made faster (pull requests, webhook deliveries, a hook's
 * `last_response`) answer what they answered before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKENS, startGithubTwin, type GithubTwin } from './harness.js';
import { b64, failure } from './helpers.js';

interface ErrorBody { message: string; errors?: unknown[]; documentation_url?: string; status?: string }

describe('GitHub twin: limits on free text and topics; lists that read less', () => {
  let gh: GithubTwin;
  let maint: string;
  const r = { owner: 'maint', repo: 'limits' };
  const body422 = async (p: Promise<unknown>): Promise<ErrorBody> => {
    const e = await failure(p);
    expect(e.status).toBe(422);
    return e.response?.data as ErrorBody;
  };
  const tooLong = (resource: string, field: string, max: number): ErrorBody => ({
    message: 'Validation Failed', errors: [{ resource, code: 'custom', field, message: `${field} is too long (maximum is ${max} characters)` }],
  } as ErrorBody);

  async function branch(name: string, path: string): Promise<string> {
    const main = (await gh.as(maint).repos.getBranch({ ...r, branch: 'main' })).data.commit.sha;
    await gh.as(maint).git.createRef({ ...r, ref: `refs/heads/${name}`, sha: main });
    const res = await gh.as(maint).repos.createOrUpdateFileContents({ ...r, path, branch: name, message: `${name}: ${path}`, content: b64('one\ntwo\n') });
    return res.data.commit.sha as string;
  }

  beforeAll(async () => {
    gh = await startGithubTwin();
    maint = await gh.user('maint');
    await gh.as(maint).repos.createForAuthenticatedUser({ name: 'limits', auto_init: true });
  });
  afterAll(async () => { await gh?.close(); });

  describe('topics', () => {
    it('more than 20 topics is refused with GitHub\'s message; 20 are kept', async () => {
      const twenty = Array.from({ length: 20 }, (_, i) => `topic-${i}`);
      expect((await gh.as(maint).repos.replaceAllTopics({ ...r, names: twenty })).data.names).toEqual(twenty);
      const e = await body422(gh.as(maint).repos.replaceAllTopics({ ...r, names: [...twenty, 'one-more'] }));
      expect(e).toMatchObject({ message: 'Validation Failed', errors: ['A repository cannot have more than 20 topics.'] });
      // 75,000 topics (3.6 MB) made every issue of a list carry 3.6 MB: refused, nothing kept.
      const flood = Array.from({ length: 75_000 }, (_, i) => `topic-${'x'.repeat(36)}${i.toString(36)}`);
      await body422(gh.as(maint).repos.replaceAllTopics({ ...r, names: flood }));
      expect((await gh.as(maint).repos.getAllTopics(r)).data.names).toEqual(twenty);
      expect((await gh.as(maint).repos.get(r)).data.topics).toEqual(twenty);
    });

    it('a topic over 50 characters, or not lower-case letters, digits and hyphens, is refused', async () => {
      const fifty = 'a'.repeat(50);
      expect((await gh.as(maint).repos.replaceAllTopics({ ...r, names: [fifty] })).data.names).toEqual([fifty]);
      const message = 'Topics must start with a lowercase letter or number, consist of 50 characters or less, and can include hyphens.';
      for (const bad of ['a'.repeat(51), '-leading-hyphen', 'under_score', 'space d', '']) {
        expect(await body422(gh.as(maint).repos.replaceAllTopics({ ...r, names: [bad] }))).toMatchObject({ message: 'Validation Failed', errors: [message] });
      }
      // Saved as lower case, as GitHub's docs say.
      expect((await gh.as(maint).repos.replaceAllTopics({ ...r, names: ['Twin', 'twin', 'API-2'] })).data.names).toEqual(['twin', 'api-2']);
    });
  });

  describe('free text', () => {
    const over = (n: number): string => 'x'.repeat(n + 1);

    it('a repository description over 350 characters is refused on create and update', async () => {
      const created = await body422(gh.as(maint).repos.createForAuthenticatedUser({ name: 'described', description: over(350) }));
      expect(created).toMatchObject({ message: 'Repository creation failed.', errors: [{ resource: 'Repository', code: 'custom', field: 'description', message: 'description cannot be more than 350 characters' }] });
      expect((await failure(gh.as(maint).repos.get({ owner: 'maint', repo: 'described' }))).status).toBe(404);
      const updated = await body422(gh.as(maint).repos.update({ ...r, description: over(350) }));
      expect(updated).toMatchObject({ message: 'Validation Failed', errors: [{ resource: 'Repository', field: 'description', code: 'custom' }] });
      expect((await gh.as(maint).repos.update({ ...r, description: 'd'.repeat(350) })).data.description).toHaveLength(350);
    });

    it('an issue body over 65,536 characters and a title over 256 are refused, on create and update', async () => {
      expect(await body422(gh.as(maint).issues.create({ ...r, title: 't', body: over(65_536) }))).toMatchObject(tooLong('Issue', 'body', 65_536));
      expect(await body422(gh.as(maint).issues.create({ ...r, title: over(256) }))).toMatchObject(tooLong('Issue', 'title', 256));
      // At the limit is fine; characters are counted as GitHub counts them (an emoji is one).
      const issue = await gh.as(maint).issues.create({ ...r, title: 'T'.repeat(256), body: '😀'.repeat(65_536) });
      expect(issue.status).toBe(201);
      const n = issue.data.number;
      expect(await body422(gh.as(maint).issues.update({ ...r, issue_number: n, body: over(65_536) }))).toMatchObject(tooLong('Issue', 'body', 65_536));
      expect(await body422(gh.as(maint).issues.update({ ...r, issue_number: n, title: over(256) }))).toMatchObject(tooLong('Issue', 'title', 256));
      const kept = await gh.as(maint).issues.get({ ...r, issue_number: n });
      expect([kept.data.title.length, kept.data.body?.length]).toEqual([256, 2 * 65_536]);
    });

    it('issue comments over 65,536 characters are refused with GitHub\'s words for them, on create and edit', async () => {
      const { data: issue } = await gh.as(maint).issues.create({ ...r, title: 'commented' });
      const refused = { message: 'Validation Failed', errors: [{ resource: 'IssueComment', code: 'unprocessable', field: 'data', message: 'Body is too long (maximum is 65536 characters)' }] };
      expect(await body422(gh.as(maint).issues.createComment({ ...r, issue_number: issue.number, body: over(65_536) }))).toMatchObject(refused);
      const { data: c } = await gh.as(maint).issues.createComment({ ...r, issue_number: issue.number, body: 'c'.repeat(65_536) });
      expect(await body422(gh.as(maint).issues.updateComment({ ...r, comment_id: c.id, body: over(65_536) }))).toMatchObject(refused);
      expect((await gh.as(maint).issues.getComment({ ...r, comment_id: c.id })).data.body).toHaveLength(65_536);
    });

    it('a pull request body or title over the cap is refused (GitHub names the Issue), on create and update', async () => {
      await branch('long', 'long.txt');
      expect(await body422(gh.as(maint).pulls.create({ ...r, title: 'p', head: 'long', base: 'main', body: over(65_536) }))).toMatchObject(tooLong('Issue', 'body', 65_536));
      expect(await body422(gh.as(maint).pulls.create({ ...r, title: over(256), head: 'long', base: 'main' }))).toMatchObject(tooLong('Issue', 'title', 256));
      const { data: pr } = await gh.as(maint).pulls.create({ ...r, title: 'p', head: 'long', base: 'main', body: 'short' });
      expect(await body422(gh.as(maint).pulls.update({ ...r, pull_number: pr.number, body: over(65_536) }))).toMatchObject(tooLong('Issue', 'body', 65_536));
      expect(await body422(gh.as(maint).pulls.update({ ...r, pull_number: pr.number, title: over(256) }))).toMatchObject(tooLong('Issue', 'title', 256));
      // A refused update keeps none of itself: not the new base it carried either.
      await branch('other-base', 'other.txt');
      expect(await body422(gh.as(maint).pulls.update({ ...r, pull_number: pr.number, base: 'other-base', body: over(65_536) }))).toMatchObject(tooLong('Issue', 'body', 65_536));
      expect((await gh.as(maint).pulls.get({ ...r, pull_number: pr.number })).data).toMatchObject({ title: 'p', body: 'short', base: { ref: 'main' } });
    });

    it('review comments over 65,536 characters are refused: new, in a review, replies and edits', async () => {
      await branch('reviewed', 'reviewed.txt');
      const { data: pr } = await gh.as(maint).pulls.create({ ...r, title: 'to review', head: 'reviewed', base: 'main' });
      const at = { ...r, pull_number: pr.number, commit_id: pr.head.sha, path: 'reviewed.txt', line: 1 };
      const refused = tooLong('PullRequestReviewComment', 'body', 65_536);
      expect(await body422(gh.as(maint).pulls.createReviewComment({ ...at, body: over(65_536) }))).toMatchObject(refused);
      expect(await body422(gh.as(maint).pulls.createReview({ ...r, pull_number: pr.number, event: 'COMMENT', body: 'see', comments: [{ path: 'reviewed.txt', line: 1, body: over(65_536) }] }))).toMatchObject(refused);
      const { data: c } = await gh.as(maint).pulls.createReviewComment({ ...at, body: 'fine' });
      expect(await body422(gh.as(maint).pulls.createReplyForReviewComment({ ...r, pull_number: pr.number, comment_id: c.id, body: over(65_536) }))).toMatchObject(refused);
      expect(await body422(gh.as(maint).pulls.updateReviewComment({ ...r, comment_id: c.id, body: over(65_536) }))).toMatchObject(refused);
      expect((await gh.as(maint).pulls.listReviewComments({ ...r, pull_number: pr.number })).data.map((x) => x.body)).toEqual(['fine']);
      // A review's own body: on create, on submit and on edit.
      const reviewRefused = tooLong('PullRequestReview', 'body', 65_536);
      expect(await body422(gh.as(maint).pulls.createReview({ ...r, pull_number: pr.number, event: 'COMMENT', body: over(65_536) }))).toMatchObject(reviewRefused);
      const { data: pending } = await gh.as(maint).pulls.createReview({ ...r, pull_number: pr.number, body: 'draft' });
      expect(await body422(gh.as(maint).pulls.submitReview({ ...r, pull_number: pr.number, review_id: pending.id, event: 'COMMENT', body: over(65_536) }))).toMatchObject(reviewRefused);
      expect(await body422(gh.as(maint).pulls.updateReview({ ...r, pull_number: pr.number, review_id: pending.id, body: over(65_536) }))).toMatchObject(reviewRefused);
      expect((await gh.as(maint).pulls.getReview({ ...r, pull_number: pr.number, review_id: pending.id })).data).toMatchObject({ body: 'draft', state: 'PENDING' });
    });

    it('a release body over 125,000 characters and a name over 256 are refused, on create and update', async () => {
      expect(await body422(gh.as(maint).repos.createRelease({ ...r, tag_name: 'v1', body: over(125_000) }))).toMatchObject(tooLong('Release', 'body', 125_000));
      expect(await body422(gh.as(maint).repos.createRelease({ ...r, tag_name: 'v1', name: over(256) }))).toMatchObject(tooLong('Release', 'name', 256));
      // Nothing was made by the refusals, not even the tag.
      expect((await failure(gh.as(maint).git.getRef({ ...r, ref: 'tags/v1' }))).status).toBe(404);
      const { data: rel } = await gh.as(maint).repos.createRelease({ ...r, tag_name: 'v1', name: 'n'.repeat(256), body: 'b'.repeat(125_000) });
      expect(await body422(gh.as(maint).repos.updateRelease({ ...r, release_id: rel.id, body: over(125_000) }))).toMatchObject(tooLong('Release', 'body', 125_000));
      expect(await body422(gh.as(maint).repos.updateRelease({ ...r, release_id: rel.id, name: over(256) }))).toMatchObject(tooLong('Release', 'name', 256));
      expect((await gh.as(maint).repos.getRelease({ ...r, release_id: rel.id })).data.body).toHaveLength(125_000);
    });

    it('a label description over 100 characters is refused, on create and update', async () => {
      expect(await body422(gh.as(maint).issues.createLabel({ ...r, name: 'wordy', description: over(100) }))).toMatchObject(tooLong('Label', 'description', 100));
      await gh.as(maint).issues.createLabel({ ...r, name: 'wordy', description: 'd'.repeat(100) });
      expect(await body422(gh.as(maint).issues.updateLabel({ ...r, name: 'wordy', description: over(100) }))).toMatchObject(tooLong('Label', 'description', 100));
      expect((await gh.as(maint).issues.getLabel({ ...r, name: 'wordy' })).data.description).toHaveLength(100);
    });
  });

  describe('lists that read the repository once', () => {
    const q = { owner: 'maint', repo: 'many' };

    beforeAll(async () => {
      await gh.as(maint).repos.createForAuthenticatedUser({ name: 'many', auto_init: true, description: 'many pulls' });
      await gh.as(maint).issues.createMilestone({ ...q, title: 'm1' });
      await gh.as(maint).issues.createMilestone({ ...q, title: 'm2' });
      for (let i = 0; i < 6; i++) {
        const { data } = await gh.as(maint).issues.create({ ...q, title: `issue ${i}`, milestone: 1 + (i % 2), labels: [`l${i % 3}`] });
        if (i % 3 === 0) await gh.as(maint).issues.update({ ...q, issue_number: data.number, state: 'closed' });
      }
      const main = (await gh.as(maint).repos.getBranch({ ...q, branch: 'main' })).data.commit.sha;
      for (let i = 0; i < 5; i++) {
        await gh.as(maint).git.createRef({ ...q, ref: `refs/heads/b${i}`, sha: main });
        await gh.as(maint).repos.createOrUpdateFileContents({ ...q, path: `f${i}.txt`, branch: `b${i}`, message: `f${i}`, content: b64(`${i}\n`) });
        const { data: pr } = await gh.as(maint).pulls.create({ ...q, title: `pull ${i}`, head: `b${i}`, base: 'main', body: `body ${i}` });
        await gh.as(maint).issues.update({ ...q, issue_number: pr.number, labels: ['l1', `p${i}`], ...(i < 4 ? { milestone: 1 + (i % 2) } : {}), assignees: ['maint'] });
      }
      await gh.as(maint).pulls.update({ ...q, pull_number: 7, state: 'closed' });
    });

    it('every pull request of a list is what pulls.get shows for it (milestone counts, labels, repository, users)', async () => {
      const list = await gh.as(maint).pulls.list({ ...q, state: 'all', per_page: 100 });
      expect(list.data.map((p) => p.number)).toEqual([11, 10, 9, 8, 7]);
      for (const item of list.data) {
        const one = await gh.as(maint).pulls.get({ ...q, pull_number: item.number });
        expect(one.data).toMatchObject(JSON.parse(JSON.stringify(item)) as object);
      }
      const m1 = list.data.find((p) => p.number === 9)?.milestone;
      // m1: issues 1 (closed), 3, 5, pulls 7 (closed) and 9.
      expect(m1).toMatchObject({ number: 1, title: 'm1', open_issues: 3, closed_issues: 2 });
      // m2: issues 2, 4 (closed), 6, pulls 8 and 10.
      expect(list.data.find((p) => p.number === 8)?.milestone).toMatchObject({ number: 2, open_issues: 4, closed_issues: 1 });
      expect(list.data.find((p) => p.number === 11)?.milestone).toBeNull();
      expect(list.data[0]).toMatchObject({ labels: [{ name: 'l1' }, { name: 'p4' }], assignees: [{ login: 'maint' }], head: { repo: { full_name: 'maint/many', description: 'many pulls' } }, author_association: 'OWNER' });
      // Paged, the same items in the same order.
      const paged = await gh.as(maint).paginate(gh.as(maint).pulls.list, { ...q, state: 'all', per_page: 2 });
      expect(paged).toEqual(list.data);
    });

    it('issues across repositories and in one repository show the milestone counts issues.get shows', async () => {
      const mine = await gh.as(maint).issues.listForRepo({ ...q, state: 'all', per_page: 100 });
      expect(mine.data).toHaveLength(11);
      for (const item of mine.data) {
        const one = await gh.as(maint).issues.get({ ...q, issue_number: item.number });
        expect(one.data).toMatchObject(JSON.parse(JSON.stringify(item)) as object);
      }
      const across = await gh.as(maint).issues.listForAuthenticatedUser({ filter: 'all', state: 'all', per_page: 100 });
      for (const item of across.data.filter((i) => i.repository?.name === 'many')) {
        expect(item).toMatchObject(JSON.parse(JSON.stringify(mine.data.find((x) => x.number === item.number))) as object);
        expect(item.repository).toMatchObject({ full_name: 'maint/many', description: 'many pulls' });
      }
      const milestones = await gh.as(maint).issues.listMilestones({ ...q, state: 'all' });
      expect(milestones.data.map((m) => [m.title, m.open_issues, m.closed_issues])).toEqual([['m1', 3, 2], ['m2', 4, 1]]);
    });
  });

  describe('webhook deliveries', () => {
    let hookId = 0;
    const h = { owner: 'maint', repo: 'limits' };
    type Listed = { id: number; guid: string; status: string; status_code: number; repository_id: number };
    const list = async (perPage: number): Promise<Listed[]> => (await gh.as(maint).repos.listWebhookDeliveries({ ...h, hook_id: hookId, per_page: perPage })).data as Listed[];
    /** GET of a `Link` URL, as a client that resolves links itself makes it. */
    const follow = async (url: string): Promise<{ ids: number[]; link: string }> => {
      const res = await fetch(url, { headers: { authorization: `token ${maint}`, 'x-twins-key': TOKENS.token } });
      expect(res.status).toBe(200);
      return { ids: ((await res.json()) as Listed[]).map((d) => d.id), link: res.headers.get('link') ?? '' };
    };
    const settled = async (n: number): Promise<Listed[]> => {
      for (let i = 0; i < 400; i++) {
        const all = await list(100);
        if (all.length === n && all.every((d) => d.status !== 'pending')) return all;
        await new Promise((res) => setTimeout(res, 25));
      }
      throw new Error('deliveries did not settle');
    };

    beforeAll(async () => {
      const hook = await gh.as(maint).repos.createWebhook({ ...h, config: { url: 'https://example.test/limits', content_type: 'json' }, events: ['issues'] });
      hookId = hook.data.id;
      for (let i = 0; i < 6; i++) await gh.as(maint).repos.pingWebhook({ ...h, hook_id: hookId });
    });

    it('lists deliveries newest first, paged by cursor through Link as GitHub pages them', async () => {
      const all = await list(100);
      expect(all).toHaveLength(7);
      const ids = all.map((d) => d.id);
      expect(ids).toEqual([...ids].sort((a, b) => b - a));
      const first = await gh.as(maint).repos.listWebhookDeliveries({ ...h, hook_id: hookId, per_page: 3 });
      expect(first.data.map((d) => d.id)).toEqual(ids.slice(0, 3));
      expect(first.headers.link).toMatch(new RegExp(`[?&]cursor=v1_${ids[3]}>; rel="next"$`));
      const second = await follow(first.headers.link?.match(/<([^>]+)>; rel="next"/)?.[1] as string);
      expect(second.ids).toEqual(ids.slice(3, 6));
      expect(second.link).toContain(`cursor=v1_${ids[6]}>; rel="next"`);
      expect(second.link).toContain(`cursor=v1_${ids[0]}>; rel="prev"`);
      const third = await follow(second.link.match(/<([^>]+)>; rel="next"/)?.[1] as string);
      expect(third.ids).toEqual(ids.slice(6));
      expect(third.link).not.toContain('rel="next"');
      // Octokit's paginate follows the cursors to the end: every delivery once, in order.
      const paged = await gh.as(maint).paginate(gh.as(maint).repos.listWebhookDeliveries, { ...h, hook_id: hookId, per_page: 2 });
      expect(paged.map((d) => d.id)).toEqual(ids);
      expect(paged.map((d) => [d.guid, d.event])).toEqual(all.map((d) => [d.guid, 'ping']));
      expect((await failure(gh.as(maint).repos.listWebhookDeliveries({ ...h, hook_id: hookId, cursor: 'not a cursor' }))).status).toBe(400);
    });

    it('a hook\'s last_response is its newest delivery\'s outcome', async () => {
      const all = await settled(7);
      const newest = all[0] as Listed;
      let hook = (await gh.as(maint).repos.getWebhook({ ...h, hook_id: hookId })).data;
      expect(hook.last_response).toEqual({ code: newest.status_code, status: 'active', message: 'OK' });
      // What the newest delivery records is what the hook shows; an older one's does not count.
      const path = '/_twin/repositories/{repository_id}/hooks/{hook_id}/deliveries/{delivery_id}';
      await gh.admin.request(`PUT ${path}`, { repository_id: newest.repository_id, hook_id: hookId, delivery_id: newest.id, status_code: 503 });
      await gh.admin.request(`PUT ${path}`, { repository_id: newest.repository_id, hook_id: hookId, delivery_id: (all[1] as Listed).id, status_code: 201 });
      hook = (await gh.as(maint).repos.getWebhook({ ...h, hook_id: hookId })).data;
      expect(hook.last_response).toEqual({ code: 503, status: 'Invalid HTTP Response: 503', message: 'Invalid HTTP Response: 503' });
      await gh.as(maint).repos.pingWebhook({ ...h, hook_id: hookId });
      const latest = (await settled(8))[0] as Listed;
      expect(latest.id).toBeGreaterThan(newest.id);
      hook = (await gh.as(maint).repos.getWebhook({ ...h, hook_id: hookId })).data;
      expect(hook.last_response).toEqual({ code: latest.status_code, status: 'active', message: 'OK' });
    });
  });
  it('a sha takes at most 1,000 statuses per context, as GitHub allows; another context still takes them', async () => {
    const r = { owner: 'admin', repo: 'statuses-capped' };
    await gh.admin.repos.createForAuthenticatedUser({ name: 'statuses-capped', auto_init: true });
    const sha = (await gh.admin.repos.getBranch({ ...r, branch: 'main' })).data.commit.sha;
    for (let i = 0; i < 1000; i++) await gh.admin.repos.createCommitStatus({ ...r, sha, state: 'pending', context: 'ci/poll' });
    const refused = await failure(gh.admin.repos.createCommitStatus({ ...r, sha, state: 'success', context: 'ci/poll' }));
    expect(refused.status).toBe(422);
    expect(refused.response?.data).toMatchObject({ message: 'Validation Failed', errors: [{ resource: 'Status', code: 'custom', message: 'This SHA and context has reached the maximum number of statuses.' }] });
    expect((await gh.admin.repos.createCommitStatus({ ...r, sha, state: 'success', context: 'ci/other' })).status).toBe(201);
    expect((await gh.admin.repos.getCombinedStatusForRef({ ...r, ref: sha })).data).toMatchObject({ state: 'pending', total_count: 2 });
  });
});
