/**
 * Users and credentials through @octokit/rest: the site admin (world token), users and tokens
 * made through the GitHub Enterprise admin paths, 401 for a bad token, rate-limit headers on
 * every answer, a read-scoped credential that may read but not write.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGithubTwin, type GithubTwin } from './harness.js';
import { failure } from './helpers.js';

describe('GitHub twin: users and credentials', () => {
  let gh: GithubTwin;
  beforeAll(async () => { gh = await startGithubTwin(); });
  afterAll(async () => { await gh?.close(); });

  it('the world token acts as the site admin', async () => {
    const me = await gh.admin.users.getAuthenticated();
    expect(me.data.login).toBe('admin');
    expect(me.data.site_admin).toBe(true);
    expect(me.headers['x-ratelimit-limit']).toBe('5000');
    expect(Number(me.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.parse('2026-01-01T00:00:00Z') / 1000);
  });

  it('makes a user and a token through the admin API; the token is answered once and opens /user', async () => {
    const created = await gh.admin.request('POST /admin/users', { login: 'octocat', email: 'octocat@example.test' });
    expect(created.status).toBe(201);
    const auth = await gh.admin.request('POST /admin/users/{username}/authorizations', { username: 'octocat', scopes: ['repo'] });
    const token = (auth.data as { token: string }).token;
    expect(token).toMatch(/^ghp_[A-Za-z0-9]{36}$/);
    const me = await gh.as(token).users.getAuthenticated();
    expect(me.data).toMatchObject({ login: 'octocat', site_admin: false, email: 'octocat@example.test' });
    expect(me.headers['x-oauth-scopes']).toBe('repo');
    const other = await gh.as(token).users.getByUsername({ username: 'admin' });
    expect(other.data.login).toBe('admin');
    // Only the token's hash is kept: no record holds the token itself.
    const dup = await failure(gh.admin.request('POST /admin/users', { login: 'OctoCat' }));
    expect(dup.status).toBe(422);
    expect((dup.response?.data as { errors: unknown[] }).errors[0]).toMatchObject({ resource: 'User', field: 'login' });
  });

  it('an unknown token gets GitHub 401 Bad credentials, with rate-limit headers', async () => {
    const e = await failure(gh.as('ghp_nosuchtoken000000000000000000000000').users.getAuthenticated());
    expect(e.status).toBe(401);
    expect(e.response?.data).toMatchObject({ message: 'Bad credentials', documentation_url: expect.stringContaining('docs.github.com') });
    expect(e.response?.headers['x-ratelimit-limit']).toBeDefined();
  });

  it('without a credential: reads of public things pass, /user and writes are 401', async () => {
    const u = await gh.anonymous.users.getByUsername({ username: 'admin' });
    expect(u.headers['x-ratelimit-limit']).toBe('60');
    expect((await failure(gh.anonymous.users.getAuthenticated())).status).toBe(401);
    expect((await failure(gh.anonymous.repos.createForAuthenticatedUser({ name: 'x' }))).status).toBe(401);
  });

  it('only the site admin may make users', async () => {
    const token = await gh.user('mallory');
    const e = await failure(gh.as(token).request('POST /admin/users', { login: 'evil' }));
    expect(e.status).toBe(403);
  });

  it('a suspended user\'s token stops working', async () => {
    const token = await gh.user('suspendme');
    await gh.admin.request('PUT /users/{username}/suspended', { username: 'suspendme' });
    expect((await failure(gh.as(token).users.getAuthenticated())).status).toBe(401);
    await gh.admin.request('DELETE /users/{username}/suspended', { username: 'suspendme' });
    expect((await gh.as(token).users.getAuthenticated()).data.login).toBe('suspendme');
  });

  it('a read-scoped credential reads but its writes are refused in GitHub\'s 403 shape', async () => {
    await gh.admin.repos.createForAuthenticatedUser({ name: 'readable', auto_init: true });
    const got = await gh.reader.repos.get({ owner: 'admin', repo: 'readable' });
    expect(got.data.full_name).toBe('admin/readable');
    const e = await failure(gh.reader.issues.create({ owner: 'admin', repo: 'readable', title: 'nope' }));
    expect(e.status).toBe(403);
    expect(e.response?.data).toMatchObject({ message: expect.stringContaining('not accessible'), documentation_url: expect.any(String) });
    const ref = await failure(gh.reader.git.createRef({ owner: 'admin', repo: 'readable', ref: 'refs/heads/x', sha: got.data.id.toString() }));
    expect(ref.status).toBe(403);
    const issues = await gh.admin.issues.listForRepo({ owner: 'admin', repo: 'readable', state: 'all' });
    expect(issues.data).toHaveLength(0);
  });

  it('organizations: made by the admin, members create repositories in them', async () => {
    const token = await gh.user('orgdev');
    const org = await gh.admin.request('POST /admin/organizations', { login: 'acme', admin: 'orgdev', profile_name: 'Acme' });
    expect(org.status).toBe(201);
    const repo = await gh.as(token).repos.createInOrg({ org: 'acme', name: 'widgets', private: true });
    expect(repo.data).toMatchObject({ full_name: 'acme/widgets', private: true, owner: { login: 'acme', type: 'Organization' } });
    const outsider = await gh.user('outsider');
    expect((await failure(gh.as(outsider).repos.get({ owner: 'acme', repo: 'widgets' }))).status).toBe(404);
    expect((await failure(gh.as(outsider).repos.createInOrg({ org: 'acme', name: 'x' }))).status).toBe(403);
    const list = await gh.as(token).repos.listForOrg({ org: 'acme' });
    expect(list.data.map((r) => r.name)).toEqual(['widgets']);
  });

  it('rate_limit answers the core budget', async () => {
    const r = await gh.admin.rateLimit.get();
    expect(r.data.resources.core.limit).toBe(5000);
  });
});
