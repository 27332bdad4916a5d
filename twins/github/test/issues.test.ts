/**
 * Issues, comments, labels, milestones, assignees and issue search through @octokit/rest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGithubTwin, type GithubTwin } from './harness.js';
import { failure } from './helpers.js';

describe('GitHub twin: issues', () => {
  let gh: GithubTwin;
  let maint: string;
  let visitor: string;
  const r = { owner: 'maint', repo: 'tracker' };

  beforeAll(async () => {
    gh = await startGithubTwin();
    maint = await gh.user('maint');
    visitor = await gh.user('visitor');
    await gh.as(maint).repos.createForAuthenticatedUser({ name: 'tracker', auto_init: true });
  });
  afterAll(async () => { await gh?.close(); });

  it('creates, gets and updates an issue; closing sets closed_at and state_reason', async () => {
    const created = await gh.as(visitor).issues.create({ ...r, title: 'Crash on start', body: 'It crashes. cc @maint' });
    expect(created.status).toBe(201);
    expect(created.data).toMatchObject({ number: 1, state: 'open', title: 'Crash on start', user: { login: 'visitor' }, comments: 0, locked: false, author_association: 'NONE' });
    const got = await gh.as(maint).issues.get({ ...r, issue_number: 1 });
    expect(got.data.body).toBe('It crashes. cc @maint');
    const closed = await gh.as(maint).issues.update({ ...r, issue_number: 1, state: 'closed', state_reason: 'not_planned' });
    expect(closed.data).toMatchObject({ state: 'closed', state_reason: 'not_planned', closed_by: { login: 'maint' } });
    expect(closed.data.closed_at).toBe('2026-01-01T00:00:00Z');
    const reopened = await gh.as(visitor).issues.update({ ...r, issue_number: 1, state: 'open' });
    expect(reopened.data).toMatchObject({ state: 'open', state_reason: 'reopened', closed_at: null });
    const noTitle = await failure(gh.as(visitor).issues.create({ ...r, title: '' }));
    expect(noTitle.status).toBe(422);
    const other = await gh.user('stranger');
    expect((await failure(gh.as(other).issues.update({ ...r, issue_number: 1, title: 'hijacked' }))).status).toBe(403);
    expect((await failure(gh.as(maint).issues.get({ ...r, issue_number: 999 }))).status).toBe(404);
  });

  it('labels: made on the fly by a writer, listed, filtered, removed; a visitor\'s labels are dropped', async () => {
    await gh.as(maint).issues.createLabel({ ...r, name: 'bug', color: 'd73a4a', description: 'Something is broken' });
    const dup = await failure(gh.as(maint).issues.createLabel({ ...r, name: 'BUG', color: 'ffffff' }));
    expect(dup.status).toBe(422);
    expect((dup.response?.data as { errors: { code: string }[] }).errors[0]?.code).toBe('already_exists');
    const i2 = await gh.as(maint).issues.create({ ...r, title: 'Docs typo', labels: ['docs', 'bug'] });
    expect(i2.data.labels.map((l) => (typeof l === 'string' ? l : l.name))).toEqual(['docs', 'bug']);
    const i3 = await gh.as(visitor).issues.create({ ...r, title: 'Please label me', labels: ['bug'] });
    expect(i3.data.labels).toEqual([]);
    const bugs = await gh.as(visitor).issues.listForRepo({ ...r, labels: 'bug' });
    expect(bugs.data.map((i) => i.number)).toEqual([i2.data.number]);
    await gh.as(maint).issues.addLabels({ ...r, issue_number: i3.data.number, labels: ['bug'] });
    expect((await gh.as(visitor).issues.listForRepo({ ...r, labels: 'bug' })).data.map((i) => i.number)).toEqual([i3.data.number, i2.data.number]);
    const left = await gh.as(maint).issues.removeLabel({ ...r, issue_number: i2.data.number, name: 'bug' });
    expect(left.data.map((l) => l.name)).toEqual(['docs']);
    const renamed = await gh.as(maint).issues.updateLabel({ ...r, name: 'docs', new_name: 'documentation' });
    expect(renamed.data.name).toBe('documentation');
    const onIssue = await gh.as(maint).issues.listLabelsOnIssue({ ...r, issue_number: i2.data.number });
    expect(onIssue.data.map((l) => l.name)).toEqual(['documentation']);
  });

  it('assignees: only people with push access; filter by assignee and none', async () => {
    const bad = await failure(gh.as(maint).issues.create({ ...r, title: 'x', assignees: ['visitor'] }));
    expect(bad.status).toBe(422);
    const a = await gh.as(maint).issues.create({ ...r, title: 'Assigned work', assignees: ['maint'] });
    expect(a.data.assignees?.map((u) => u.login)).toEqual(['maint']);
    expect((await gh.as(maint).issues.checkUserCanBeAssigned({ ...r, assignee: 'maint' })).status).toBe(204);
    expect((await failure(gh.as(maint).issues.checkUserCanBeAssigned({ ...r, assignee: 'visitor' }))).status).toBe(404);
    const mine = await gh.as(maint).issues.listForRepo({ ...r, assignee: 'maint' });
    expect(mine.data.map((i) => i.title)).toEqual(['Assigned work']);
    const none = await gh.as(maint).issues.listForRepo({ ...r, assignee: 'none' });
    expect(none.data.map((i) => i.title)).not.toContain('Assigned work');
    const removed = await gh.as(maint).issues.removeAssignees({ ...r, issue_number: a.data.number, assignees: ['maint'] });
    expect(removed.data.assignees).toEqual([]);
    const added = await gh.as(maint).issues.addAssignees({ ...r, issue_number: a.data.number, assignees: ['maint', 'visitor'] });
    expect(added.data.assignees?.map((u) => u.login)).toEqual(['maint']);
  });

  it('milestones count their open and closed issues; issues filter by milestone', async () => {
    const m = await gh.as(maint).issues.createMilestone({ ...r, title: 'v1.0', due_on: '2026-03-01T00:00:00Z' });
    expect(m.data).toMatchObject({ number: 1, title: 'v1.0', state: 'open', open_issues: 0, closed_issues: 0 });
    const i = await gh.as(maint).issues.create({ ...r, title: 'For v1', milestone: m.data.number });
    const j = await gh.as(maint).issues.create({ ...r, title: 'Also v1', milestone: m.data.number });
    await gh.as(maint).issues.update({ ...r, issue_number: j.data.number, state: 'closed' });
    const got = await gh.as(maint).issues.getMilestone({ ...r, milestone_number: 1 });
    expect(got.data).toMatchObject({ open_issues: 1, closed_issues: 1 });
    const filtered = await gh.as(maint).issues.listForRepo({ ...r, milestone: '1', state: 'all' });
    expect(filtered.data.map((x) => x.number).sort()).toEqual([i.data.number, j.data.number].sort());
    expect((await failure(gh.as(maint).issues.create({ ...r, title: 'bad', milestone: 42 }))).status).toBe(422);
    await gh.as(maint).issues.updateMilestone({ ...r, milestone_number: 1, state: 'closed' });
    expect((await gh.as(maint).issues.listMilestones({ ...r })).data).toEqual([]);
    expect((await gh.as(maint).issues.listMilestones({ ...r, state: 'closed' })).data.map((x) => x.title)).toEqual(['v1.0']);
  });

  it('milestone counts follow issues moved between milestones, closed, reopened, and let go when a milestone is deleted', async () => {
    const q = { owner: 'maint', repo: 'counted' };
    await gh.as(maint).repos.createForAuthenticatedUser({ name: q.repo, auto_init: true });
    const milestone = async (title: string): Promise<number> => (await gh.as(maint).issues.createMilestone({ ...q, title })).data.number;
    const a = await milestone('a'), b = await milestone('b'), c = await milestone('c');
    const issue = async (milestone: number | undefined): Promise<number> => (await gh.as(maint).issues.create({ ...q, title: 't', ...(milestone === undefined ? {} : { milestone }) })).data.number;
    const n1 = await issue(a), n2 = await issue(a), n3 = await issue(b), n4 = await issue(undefined);
    await gh.as(maint).issues.update({ ...q, issue_number: n1, state: 'closed' });
    await gh.as(maint).issues.update({ ...q, issue_number: n2, milestone: b });
    await gh.as(maint).issues.update({ ...q, issue_number: n4, milestone: c, state: 'closed' });
    await gh.as(maint).issues.update({ ...q, issue_number: n4, state: 'open' });
    await gh.as(maint).issues.update({ ...q, issue_number: n3, milestone: null });
    // Each milestone's counts are what a list of its issues shows, in its own answer and on its issues.
    const counts = async (): Promise<[string, number, number][]> =>
      (await gh.as(maint).issues.listMilestones({ ...q, state: 'all' })).data.map((m) => [m.title, m.open_issues, m.closed_issues]);
    const listed = async (m: number): Promise<[number, number]> => {
      const all = (await gh.as(maint).issues.listForRepo({ ...q, milestone: String(m), state: 'all' })).data;
      return [all.filter((i) => i.state === 'open').length, all.filter((i) => i.state === 'closed').length];
    };
    expect(await counts()).toEqual([['a', 0, 1], ['b', 1, 0], ['c', 1, 0]]);
    for (const m of [a, b, c]) {
      const [open, closed] = await listed(m);
      expect((await gh.as(maint).issues.getMilestone({ ...q, milestone_number: m })).data).toMatchObject({ open_issues: open, closed_issues: closed });
    }
    expect((await gh.as(maint).issues.get({ ...q, issue_number: n2 })).data.milestone).toMatchObject({ title: 'b', open_issues: 1, closed_issues: 0 });
    await gh.as(maint).issues.deleteMilestone({ ...q, milestone_number: b });
    expect((await gh.as(maint).issues.get({ ...q, issue_number: n2 })).data.milestone).toBeNull();
    expect(await counts()).toEqual([['a', 0, 1], ['c', 1, 0]]);
    // A new milestone of the same title starts at nothing.
    const again = (await gh.as(maint).issues.createMilestone({ ...q, title: 'b' })).data;
    expect([again.open_issues, again.closed_issues]).toEqual([0, 0]);
  });

  it('comments count on the issue; edit and delete; a locked issue refuses outsiders', async () => {
    const issue = await gh.as(maint).issues.create({ ...r, title: 'Discuss' });
    const n = issue.data.number;
    const c1 = await gh.as(visitor).issues.createComment({ ...r, issue_number: n, body: 'first' });
    expect(c1.status).toBe(201);
    await gh.as(maint).issues.createComment({ ...r, issue_number: n, body: 'second' });
    expect((await gh.as(maint).issues.get({ ...r, issue_number: n })).data.comments).toBe(2);
    const edited = await gh.as(visitor).issues.updateComment({ ...r, comment_id: c1.data.id, body: 'first (edited)' });
    expect(edited.data.body).toBe('first (edited)');
    const list = await gh.as(maint).issues.listComments({ ...r, issue_number: n });
    expect(list.data.map((c) => c.body)).toEqual(['first (edited)', 'second']);
    await gh.as(maint).issues.deleteComment({ ...r, comment_id: c1.data.id });
    expect((await gh.as(maint).issues.get({ ...r, issue_number: n })).data.comments).toBe(1);
    expect((await failure(gh.as(maint).issues.getComment({ ...r, comment_id: c1.data.id }))).status).toBe(404);

    expect((await gh.as(maint).issues.lock({ ...r, issue_number: n, lock_reason: 'too heated' })).status).toBe(204);
    expect((await gh.as(maint).issues.get({ ...r, issue_number: n })).data).toMatchObject({ locked: true, active_lock_reason: 'too heated' });
    const refused = await failure(gh.as(visitor).issues.createComment({ ...r, issue_number: n, body: 'let me in' }));
    expect(refused.status).toBe(403);
    expect((await gh.as(maint).issues.createComment({ ...r, issue_number: n, body: 'maintainers still can' })).status).toBe(201);
    expect((await failure(gh.as(visitor).issues.lock({ ...r, issue_number: n }))).status).toBe(403);
    await gh.as(maint).issues.unlock({ ...r, issue_number: n });
    expect((await gh.as(visitor).issues.createComment({ ...r, issue_number: n, body: 'thanks' })).status).toBe(201);
  });

  it('lists with sorting and direction, creator and mentioned filters, paginated', async () => {
    const all = await gh.as(maint).paginate(gh.as(maint).issues.listForRepo, { ...r, state: 'all', per_page: 2 });
    const numbers = all.map((i) => i.number);
    expect(numbers).toEqual([...numbers].sort((a, b) => b - a));
    const asc = await gh.as(maint).issues.listForRepo({ ...r, state: 'all', direction: 'asc', per_page: 3 });
    expect(asc.data.map((i) => i.number)).toEqual([1, 2, 3]);
    const byComments = await gh.as(maint).issues.listForRepo({ ...r, state: 'all', sort: 'comments', per_page: 1 });
    expect(byComments.data[0]?.title).toBe('Discuss');
    const byVisitor = await gh.as(maint).issues.listForRepo({ ...r, state: 'all', creator: 'visitor' });
    expect(byVisitor.data.map((i) => i.title).sort()).toEqual(['Crash on start', 'Please label me']);
    const mentioning = await gh.as(maint).issues.listForRepo({ ...r, mentioned: 'maint' });
    expect(mentioning.data.map((i) => i.title)).toEqual(['Crash on start']);
    const since = await gh.as(maint).issues.listForRepo({ ...r, state: 'all', since: '2027-01-01T00:00:00Z' });
    expect(since.data).toEqual([]);
    // `since` compares instants, whatever the zone or precision; one GitHub cannot read is 422.
    const updated = all.map((i) => i.updated_at).sort();
    const newest = updated[updated.length - 1] as string;
    const atNewest = await gh.as(maint).issues.listForRepo({ ...r, state: 'all', since: newest.replace('Z', '.000+00:00') });
    expect(atNewest.data.map((i) => i.updated_at)).toEqual(updated.filter((u) => u === newest));
    const early = await gh.as(maint).issues.listForRepo({ ...r, state: 'all', since: '2000-01-01T02:00:00+02:00', per_page: 100 });
    expect(early.data).toHaveLength(all.length);
    const bad = await failure(gh.as(maint).issues.listForRepo({ ...r, since: 'notadate' }));
    expect([bad.status, (bad.response?.data as { message: string }).message]).toEqual([422, 'The since parameter needs to be in ISO 8601 format: YYYY-MM-DDTHH:MM:SSZ']);
    const badUntil = await failure(gh.as(maint).repos.listCommits({ ...r, until: 'yesterday' }));
    expect(badUntil.status).toBe(422);
  });

  it('search: free text, repo:, is:, label:, author:, no:, negation, sort', async () => {
    const q = (s: string) => gh.as(maint).search.issuesAndPullRequests({ q: s });
    expect((await q('crash repo:maint/tracker')).data.items.map((i) => i.title)).toEqual(['Crash on start']);
    expect((await q('repo:maint/tracker is:issue is:closed')).data.items.map((i) => i.title)).toEqual(['Also v1']);
    expect((await q('repo:maint/tracker label:bug')).data.total_count).toBe(1);
    expect((await q('repo:maint/tracker author:visitor')).data.items.map((i) => i.title).sort()).toEqual(['Crash on start', 'Please label me']);
    const unlabeled = (await q('repo:maint/tracker no:label is:open')).data.items.map((i) => i.title);
    expect(unlabeled).not.toContain('Please label me');
    expect(unlabeled).toContain('Discuss');
    expect((await q('repo:maint/tracker -author:maint')).data.items.every((i) => i.user?.login !== 'maint')).toBe(true);
    const sorted = (await q('repo:maint/tracker sort:comments')).data;
    expect(sorted.total_count).toBeGreaterThan(0);
    const byComments = await gh.as(maint).search.issuesAndPullRequests({ q: 'repo:maint/tracker', sort: 'comments', order: 'desc' });
    expect(byComments.data.items[0]?.title).toBe('Discuss');
    expect((await q('"on start" in:title')).data.items.map((i) => i.title)).toEqual(['Crash on start']);
    // Many words against one issue's text (lower-cased once per issue, not per word).
    const negated = Array.from({ length: 30 }, (_, i) => `-z${i}`).join(' ');
    expect((await q(`crash start ${negated} repo:maint/tracker`)).data.items.map((i) => i.title)).toEqual(['Crash on start']);
    expect((await q(`crash -start repo:maint/tracker`)).data.items).toEqual([]);
    const missing = await failure(q('repo:maint/nothing-here'));
    expect(missing.status).toBe(422);
    expect((await failure(gh.as(maint).search.issuesAndPullRequests({ q: '' }))).status).toBe(422);
  });

  it('issues across repositories: assigned to me (default), created by me, mentioning me, with the repository attached', async () => {
    await gh.as(visitor).repos.createForAuthenticatedUser({ name: 'own' });
    await gh.as(visitor).issues.create({ owner: 'visitor', repo: 'own', title: 'Mine, assigned', assignees: ['visitor'] });
    const assigned = await gh.as(visitor).issues.listForAuthenticatedUser();
    expect(assigned.data.map((i) => `${i.repository?.full_name}#${i.title}`)).toEqual(['visitor/own#Mine, assigned']);
    const created = await gh.as(visitor).issues.list({ filter: 'created', state: 'all' });
    expect(created.data.map((i) => i.title).sort()).toEqual(['Crash on start', 'Mine, assigned', 'Please label me']);
    // Member repositories only for /user/issues: maint/tracker is someone else's.
    expect((await gh.as(visitor).issues.listForAuthenticatedUser({ filter: 'created', state: 'all' })).data.map((i) => i.title)).toEqual(['Mine, assigned']);
    const mentioned = await gh.as(maint).issues.list({ filter: 'mentioned' });
    expect(mentioned.data.map((i) => i.title)).toEqual(['Crash on start']);
    expect((await failure(gh.anonymous.issues.list())).status).toBe(401);
  });

  it('labels: a PATCH naming 1,000 new labels is 200 (each label event built from one lookup), 1,001 is 422, not a 500', async () => {
    const q = { owner: 'maint', repo: 'labelled' };
    await gh.as(maint).repos.createForAuthenticatedUser({ name: 'labelled' });
    const issue = await gh.as(maint).issues.create({ ...q, title: 'many labels' });
    const names = Array.from({ length: 1000 }, (_, i) => `l${i}`);
    // 901 new labels made the sandbox ask the host for a page past its 1,000: a 500.
    const updated = await gh.as(maint).issues.update({ ...q, issue_number: issue.data.number, labels: names });
    expect(updated.data.labels.length).toBe(1000);
    const over = await failure(gh.as(maint).issues.update({ ...q, issue_number: issue.data.number, labels: [...names, 'one more'] }));
    expect([over.status, over.message]).toEqual([422, expect.stringContaining('Validation Failed')]);
    expect((await gh.as(maint).issues.get({ ...q, issue_number: issue.data.number })).data.labels.length).toBe(1000);
    // With a hook listening: one `labeled` (or `unlabeled`) event per label, each naming its own.
    await gh.as(maint).repos.createWebhook({ ...q, config: { url: 'https://example.test/labels', content_type: 'json' }, events: ['issues'] });
    const second = await gh.as(maint).issues.create({ ...q, title: 'fewer labels', labels: names.slice(0, 100) });
    await gh.as(maint).issues.update({ ...q, issue_number: second.data.number, labels: ['l0', 'l1', 'fresh', 'l2'] });
    const sent = (): { action: string; label: { name: string }; issue: { labels: unknown[] } }[] =>
      gh.received.filter((x) => x.url === 'https://example.test/labels').map((x) => JSON.parse(x.body) as { action: string; label: { name: string }; issue: { labels: unknown[] } });
    await gh.until(() => sent().filter((e) => e.action === 'unlabeled').length === 97);
    // Up to 8 deliveries are in flight at once, so a receiver may take them in any order: put
    // them in the order the twin asked for them (its log), by their delivery GUID.
    const asked = (await gh.events()).filter((e) => e.type === 'webhook.delivery').map((e) => (e.data as { guid: string }).guid);
    const rank = (x: { headers: Record<string, string> }): number => asked.indexOf(x.headers['x-github-delivery'] ?? '');
    const events = gh.received.filter((x) => x.url === 'https://example.test/labels').sort((a, b) => rank(a) - rank(b))
      .map((x) => JSON.parse(x.body) as { action: string; label: { name: string }; issue: { labels: unknown[] } });
    expect(events).toHaveLength(sent().length);
    expect(events.filter((e) => e.action === 'labeled').map((e) => e.label.name).slice(-1)).toEqual(['fresh']);
    expect(events.filter((e) => e.action === 'unlabeled').map((e) => e.label.name)).toEqual(names.slice(3, 100));
    expect(events.filter((e) => e.action === 'unlabeled').every((e) => e.issue.labels.length === 4)).toBe(true);
  });
});

