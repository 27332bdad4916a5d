/**
 * Repositories through @octokit/rest, plus the machinery every list and read shares:
 * pagination with `Link` and `per_page`, ETag / If-None-Match → 304, 404 and 422 in GitHub's
 * error shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGithubTwin, TOKENS, type GithubTwin } from './harness.js';
import { failure } from './helpers.js';

describe('GitHub twin: repositories', () => {
  let gh: GithubTwin;
  let dev: string;
  beforeAll(async () => {
    gh = await startGithubTwin();
    dev = await gh.user('dev');
  });
  afterAll(async () => { await gh?.close(); });

  it('creates a repository for the caller; auto_init makes a first commit with a README', async () => {
    const created = await gh.as(dev).repos.createForAuthenticatedUser({ name: 'app', description: 'An app', auto_init: true });
    expect(created.status).toBe(201);
    expect(created.data).toMatchObject({ name: 'app', full_name: 'dev/app', private: false, default_branch: 'main', description: 'An app', owner: { login: 'dev' } });
    const branch = await gh.as(dev).repos.getBranch({ owner: 'dev', repo: 'app', branch: 'main' });
    expect(branch.data.commit.commit.message).toBe('Initial commit');
    const readme = await gh.as(dev).repos.getContent({ owner: 'dev', repo: 'app', path: 'README.md' });
    expect(Buffer.from((readme.data as { content: string }).content, 'base64').toString()).toBe('# app\n\nAn app\n');
  });

  it('an empty repository has no branches and says so on contents', async () => {
    await gh.as(dev).repos.createForAuthenticatedUser({ name: 'empty' });
    expect((await gh.as(dev).repos.listBranches({ owner: 'dev', repo: 'empty' })).data).toEqual([]);
    const e = await failure(gh.as(dev).repos.getContent({ owner: 'dev', repo: 'empty', path: 'x' }));
    expect(e.status).toBe(404);
    expect(e.response?.data).toMatchObject({ message: 'This repository is empty.' });
  });

  it('a duplicate name is a 422 with GitHub\'s errors array; a missing repo is 404 Not Found', async () => {
    const dup = await failure(gh.as(dev).repos.createForAuthenticatedUser({ name: 'APP' }));
    expect(dup.status).toBe(422);
    expect(dup.response?.data).toMatchObject({
      message: 'Repository creation failed.',
      errors: [{ resource: 'Repository', code: 'custom', field: 'name', message: 'name already exists on this account' }],
      documentation_url: expect.stringContaining('https://docs.github.com/'),
    });
    const missing = await failure(gh.as(dev).repos.get({ owner: 'dev', repo: 'nope' }));
    expect(missing.status).toBe(404);
    expect(missing.response?.data).toMatchObject({ message: 'Not Found', documentation_url: expect.any(String) });
    // Deliberately not what the types allow: the twin must refuse it in GitHub's shape.
    const noName = await failure(gh.as(dev).request('POST /user/repos', {} as never));
    expect(noName.status).toBe(422);
    expect((noName.response?.data as { errors: unknown[] }).errors[0]).toMatchObject({ resource: 'Repository', field: 'name', code: 'missing_field' });
  });

  it('updates (rename keeps issues and history), and deletes', async () => {
    await gh.as(dev).repos.createForAuthenticatedUser({ name: 'old-name', auto_init: true });
    await gh.as(dev).issues.create({ owner: 'dev', repo: 'old-name', title: 'survives the rename' });
    const up = await gh.as(dev).repos.update({ owner: 'dev', repo: 'old-name', name: 'new-name', description: 'renamed', has_wiki: false });
    expect(up.data).toMatchObject({ name: 'new-name', description: 'renamed', has_wiki: false });
    expect((await failure(gh.as(dev).repos.get({ owner: 'dev', repo: 'old-name' }))).status).toBe(404);
    const issues = await gh.as(dev).issues.listForRepo({ owner: 'dev', repo: 'new-name' });
    expect(issues.data.map((i) => i.title)).toEqual(['survives the rename']);
    expect((await gh.as(dev).repos.listCommits({ owner: 'dev', repo: 'new-name' })).data).toHaveLength(1);
    await gh.as(dev).repos.delete({ owner: 'dev', repo: 'new-name' });
    expect((await failure(gh.as(dev).repos.get({ owner: 'dev', repo: 'new-name' }))).status).toBe(404);
  });

  it('private repositories are invisible to others (404), visible to the owner and the site admin', async () => {
    await gh.as(dev).repos.createForAuthenticatedUser({ name: 'secret', private: true });
    const other = await gh.user('other');
    expect((await failure(gh.as(other).repos.get({ owner: 'dev', repo: 'secret' }))).status).toBe(404);
    expect((await gh.admin.repos.get({ owner: 'dev', repo: 'secret' })).data.private).toBe(true);
    const theirs = await gh.as(other).repos.listForUser({ username: 'dev' });
    expect(theirs.data.map((r) => r.name)).not.toContain('secret');
    const mine = await gh.as(dev).repos.listForAuthenticatedUser();
    expect(mine.data.map((r) => r.name)).toContain('secret');
    // Someone who can read a public repository cannot change it.
    expect((await failure(gh.as(other).repos.update({ owner: 'dev', repo: 'app', description: 'mine now' }))).status).toBe(403);
  });

  it('pages with per_page and a Link header that Octokit follows', async () => {
    const pager = await gh.user('pager');
    for (let i = 0; i < 7; i++) await gh.as(pager).repos.createForAuthenticatedUser({ name: `r${i}` });
    const first = await gh.as(pager).repos.listForAuthenticatedUser({ per_page: 3, sort: 'full_name' });
    expect(first.data.map((r) => r.name)).toEqual(['r0', 'r1', 'r2']);
    // Absolute, as GitHub's are, under the address Octokit used for the twin.
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.link ?? '')?.[1];
    expect(next).toBe(`${gh.baseUrl}/user/repos?sort=full_name&per_page=3&page=2`);
    expect(first.headers.link).toMatch(/page=3>; rel="last"/);
    // A client that follows the link as RFC 8288 says (resolved against the request's URL) gets page 2.
    const followed = await fetch(new URL(next as string, `${gh.baseUrl}/user/repos?per_page=3`), {
      headers: { authorization: `token ${pager}`, 'x-twins-key': TOKENS.token },
    });
    expect(((await followed.json()) as { name: string }[]).map((r) => r.name)).toEqual(['r3', 'r4', 'r5']);
    const all = await gh.as(pager).paginate(gh.as(pager).repos.listForAuthenticatedUser, { per_page: 3, sort: 'full_name' });
    expect(all.map((r) => r.name)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6']);
    const last = await gh.as(pager).repos.listForAuthenticatedUser({ per_page: 3, page: 3, sort: 'full_name' });
    expect(last.data.map((r) => r.name)).toEqual(['r6']);
    expect(last.headers.link).toMatch(/rel="prev"/);
    expect(last.headers.link).not.toMatch(/rel="next"/);
  });

  it('answers 304 to If-None-Match with the current ETag, and 200 once the resource changed', async () => {
    const first = await gh.as(dev).repos.get({ owner: 'dev', repo: 'app' });
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^W\/"[0-9a-f]+"$/);
    const again = await failure(gh.as(dev).repos.get({ owner: 'dev', repo: 'app', headers: { 'if-none-match': etag } }));
    expect(again.status).toBe(304);
    await gh.as(dev).repos.update({ owner: 'dev', repo: 'app', description: 'changed' });
    const changed = await gh.as(dev).repos.get({ owner: 'dev', repo: 'app', headers: { 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
  });

  it('topics replace as a set', async () => {
    const t = await gh.as(dev).repos.replaceAllTopics({ owner: 'dev', repo: 'app', names: ['twin', 'testing', 'twin'] });
    expect(t.data.names).toEqual(['twin', 'testing']);
    expect((await failure(gh.as(dev).repos.replaceAllTopics({ owner: 'dev', repo: 'app', names: ['Bad Topic'] }))).status).toBe(422);
  });

  it('an unknown path is GitHub\'s 404', async () => {
    const res = await gh.raw('GET', '/no/such/endpoint', { headers: { authorization: `token ${dev}` } });
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text)).toMatchObject({ message: 'Not Found' });
    expect(res.headers['x-ratelimit-limit']).toBe('5000');
  });

  it('hostile input: a body that is not an object, a huge page number, odd names — clear errors, no state', async () => {
    // JSON under a form's content type (what `curl -d` sends) is read as JSON, as GitHub does; a form is not JSON.
    const curled = await gh.raw('POST', '/user/repos', { headers: { authorization: `token ${dev}`, 'content-type': 'application/x-www-form-urlencoded' }, body: '{"name":"curled"}' });
    expect([curled.status, JSON.parse(curled.text).name]).toEqual([201, 'curled']);
    const form = await gh.raw('POST', '/user/repos', { headers: { authorization: `token ${dev}`, 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=formed' });
    expect([form.status, JSON.parse(form.text).message]).toEqual([400, 'Problems parsing JSON']);
    const arr = await gh.raw('POST', '/user/repos', { headers: { authorization: `token ${dev}`, 'content-type': 'application/json' }, body: '[1,2]' });
    expect(arr.status).toBe(400);
    expect(JSON.parse(arr.text)).toMatchObject({ message: 'Problems parsing JSON' });
    const bad = await failure(gh.as(dev).repos.createForAuthenticatedUser({ name: '../etc' }));
    expect(bad.status).toBe(422);
    const far = await gh.as(dev).repos.listForAuthenticatedUser({ page: 99999999 });
    expect(far.data).toEqual([]);
    const wrongType = await failure(gh.as(dev).request('POST /user/repos', { name: 'typed', private: 'yes' } as never));
    expect(wrongType.status).toBe(422);
    expect((await failure(gh.as(dev).repos.get({ owner: 'dev', repo: 'typed' }))).status).toBe(404);
  });

  it('collaborators: push access opens a private repository for writing, not for its settings; removal closes it', async () => {
    await gh.as(dev).repos.createForAuthenticatedUser({ name: 'team', private: true, auto_init: true });
    const collab = await gh.user('collab');
    const r = { owner: 'dev', repo: 'team' };
    expect((await failure(gh.as(collab).repos.get(r))).status).toBe(404);
    const added = await gh.as(dev).repos.addCollaborator({ ...r, username: 'collab', permission: 'push' });
    expect(added.status).toBe(201);
    expect((await gh.as(dev).repos.addCollaborator({ ...r, username: 'collab', permission: 'push' })).status).toBe(204);
    const seen = await gh.as(collab).repos.get(r);
    expect(seen.data.permissions).toEqual({ admin: false, maintain: false, push: true, triage: true, pull: true });
    await gh.as(collab).repos.createOrUpdateFileContents({ ...r, path: 'c.txt', message: 'by collab', content: Buffer.from('c\n').toString('base64') });
    const issue = await gh.as(collab).issues.create({ ...r, title: 'triaged', labels: ['mine'], assignees: ['collab'] });
    expect(issue.data.assignees?.map((u) => u.login)).toEqual(['collab']);
    expect((await failure(gh.as(collab).repos.update({ ...r, description: 'nope' }))).status).toBe(403);
    expect((await failure(gh.as(collab).repos.listWebhooks(r))).status).toBe(403);
    expect((await gh.as(dev).repos.getCollaboratorPermissionLevel({ ...r, username: 'collab' })).data.permission).toBe('write');
    expect((await gh.as(dev).repos.listCollaborators(r)).data.map((u) => u.login).sort()).toEqual(['collab', 'dev']);
    expect((await gh.as(collab).repos.listForAuthenticatedUser()).data.map((x) => x.full_name)).toContain('dev/team');
    await gh.as(dev).repos.removeCollaborator({ ...r, username: 'collab' });
    expect((await failure(gh.as(collab).repos.get(r))).status).toBe(404);
    expect((await failure(gh.as(dev).repos.checkCollaborator({ ...r, username: 'collab' }))).status).toBe(404);
    const reader = await gh.user('reader');
    await gh.as(dev).repos.addCollaborator({ ...r, username: 'reader', permission: 'pull' });
    expect((await gh.as(reader).repos.get(r)).data.permissions?.push).toBe(false);
    expect((await failure(gh.as(reader).repos.createOrUpdateFileContents({ ...r, path: 'r.txt', message: 'r', content: 'cg==' }))).status).toBe(403);
  });

  it('releases: creating one makes its tag; drafts are hidden from readers; latest skips drafts and prereleases', async () => {
    const r = { owner: 'dev', repo: 'app' };
    const main = (await gh.as(dev).repos.getBranch({ ...r, branch: 'main' })).data.commit.sha;
    const v1 = await gh.as(dev).repos.createRelease({ ...r, tag_name: 'v1.0.0', name: 'One', body: 'first' });
    expect(v1.status).toBe(201);
    expect((await gh.as(dev).git.getRef({ ...r, ref: 'tags/v1.0.0' })).data.object.sha).toBe(main);
    await gh.as(dev).repos.createRelease({ ...r, tag_name: 'v2.0.0-rc1', prerelease: true });
    const draft = await gh.as(dev).repos.createRelease({ ...r, tag_name: 'v2.0.0', draft: true });
    expect((await failure(gh.as(dev).git.getRef({ ...r, ref: 'tags/v2.0.0' }))).status).toBe(404);
    const other = await gh.user('release-reader');
    expect((await gh.as(other).repos.listReleases(r)).data.map((x) => x.tag_name)).toEqual(['v2.0.0-rc1', 'v1.0.0']);
    expect((await gh.as(dev).repos.listReleases(r)).data.map((x) => x.tag_name)).toEqual(['v2.0.0', 'v2.0.0-rc1', 'v1.0.0']);
    expect((await gh.as(other).repos.getLatestRelease(r)).data.tag_name).toBe('v1.0.0');
    expect((await gh.as(other).repos.getReleaseByTag({ ...r, tag: 'v1.0.0' })).data.name).toBe('One');
    expect((await failure(gh.as(dev).repos.createRelease({ ...r, tag_name: 'v1.0.0' }))).status).toBe(422);
    const published = await gh.as(dev).repos.updateRelease({ ...r, release_id: draft.data.id, draft: false, name: 'Two' });
    expect(published.data).toMatchObject({ draft: false, name: 'Two' });
    expect(published.data.published_at).not.toBeNull();
    expect((await gh.as(dev).git.getRef({ ...r, ref: 'tags/v2.0.0' })).data.object.sha).toBe(main);
    await gh.as(dev).repos.deleteRelease({ ...r, release_id: v1.data.id });
    expect((await failure(gh.as(dev).repos.getRelease({ ...r, release_id: v1.data.id }))).status).toBe(404);
  });
});
