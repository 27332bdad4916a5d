/**
 * `git clone`, `git fetch` and `git push` — the real git binary — against the twin served in a
 * world: objects and refs made through the API come out of a clone with the same ids, and a
 * push is visible to the API at once.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKENS, startGithubTwin, type GithubTwin } from './harness.js';
import { b64, unb64 } from './helpers.js';

describe('GitHub twin: git smart HTTP', () => {
  let gh: GithubTwin;
  let dir: string;
  const env = (): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH, HOME: dir, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Pusher', GIT_AUTHOR_EMAIL: 'pusher@example.test', GIT_COMMITTER_NAME: 'Pusher', GIT_COMMITTER_EMAIL: 'pusher@example.test',
    GIT_AUTHOR_DATE: '2026-01-02T10:00:00+02:00', GIT_COMMITTER_DATE: '2026-01-02T10:00:00+02:00',
  });
  // Asynchronous: the world's server runs in this process, so a blocking exec would stall it.
  const run = (cwd: string, args: string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      execFile('git', args, { cwd, env: env(), timeout: 60_000 }, (error, stdout, stderr) => resolve({ ok: error === null, stdout: String(stdout).trim(), stderr: String(stderr) }));
    });
  const git = async (cwd: string, ...args: string[]): Promise<string> => {
    const r = await run(cwd, args);
    if (!r.ok) throw new Error(`git ${args.join(' ')} failed: ${r.stderr}`);
    return r.stdout;
  };
  const gitFails = async (cwd: string, ...args: string[]): Promise<string> => {
    const r = await run(cwd, args);
    if (r.ok) throw new Error(`git ${args.join(' ')} succeeded`);
    return r.stderr;
  };
  const url = (repo: string, token = TOKENS.token): string => {
    const u = new URL(`${gh.baseUrl}/admin/${repo}.git`);
    u.username = 'x-access-token';
    u.password = token;
    return u.toString();
  };

  beforeAll(async () => {
    gh = await startGithubTwin();
    dir = mkdtempSync(join(tmpdir(), 'twin-smart-'));
    await gh.admin.repos.createForAuthenticatedUser({ name: 'app', auto_init: true });
    await gh.admin.repos.createOrUpdateFileContents({ owner: 'admin', repo: 'app', path: 'src/index.ts', message: 'Add index', content: b64('export const x = 1;\n') });
  });
  afterAll(async () => {
    await gh?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('clones what the API made, with the same commit ids', async () => {
    await git(dir, 'clone', '-q', url('app'), 'app');
    const work = join(dir, 'app');
    expect(readFileSync(join(work, 'src/index.ts'), 'utf8')).toBe('export const x = 1;\n');
    const api = (await gh.admin.repos.getBranch({ owner: 'admin', repo: 'app', branch: 'main' })).data.commit.sha;
    expect(await git(work, 'rev-parse', 'HEAD')).toBe(api);
    expect(await git(work, 'log', '--format=%s')).toBe('Add index\nInitial commit');
    expect(await git(work, 'fsck', '--strict')).toBe('');
  });

  it('pushes commits (with a time zone) that the API then shows; a new branch and its deletion too', async () => {
    const work = join(dir, 'app');
    writeFileSync(join(work, 'src/index.ts'), 'export const x = 2;\n');
    writeFileSync(join(work, 'NOTES.md'), '# Notes\n');
    await git(work, 'add', '-A');
    await git(work, 'commit', '-q', '-m', 'Pushed from git');
    await git(work, 'push', '-q', 'origin', 'main');
    const head = await git(work, 'rev-parse', 'HEAD');
    const branch = await gh.admin.repos.getBranch({ owner: 'admin', repo: 'app', branch: 'main' });
    expect(branch.data.commit.sha).toBe(head);
    expect(branch.data.commit.commit.author).toMatchObject({ name: 'Pusher', email: 'pusher@example.test', date: '2026-01-02T08:00:00Z' });
    const notes = await gh.admin.repos.getContent({ owner: 'admin', repo: 'app', path: 'NOTES.md' });
    expect(unb64((notes.data as { content: string }).content)).toBe('# Notes\n');
    const commit = await gh.admin.repos.getCommit({ owner: 'admin', repo: 'app', ref: head });
    expect(commit.data.files?.map((f) => `${f.status} ${f.filename}`)).toEqual(['added NOTES.md', 'modified src/index.ts']);

    await git(work, 'checkout', '-q', '-b', 'topic');
    writeFileSync(join(work, 'topic.txt'), 'topic\n');
    await git(work, 'add', '-A');
    await git(work, 'commit', '-q', '-m', 'Topic work');
    await git(work, 'push', '-q', 'origin', 'topic');
    const pr = await gh.admin.pulls.create({ owner: 'admin', repo: 'app', title: 'Topic', head: 'topic', base: 'main' });
    expect(pr.data.head.sha).toBe(await git(work, 'rev-parse', 'HEAD'));
    await git(work, 'push', '-q', 'origin', ':topic');
    expect((await gh.admin.repos.listBranches({ owner: 'admin', repo: 'app' })).data.map((b) => b.name)).toEqual(['main']);
  });

  it('fetches what the API added since the clone (negotiating with haves)', async () => {
    const work = join(dir, 'app');
    await git(work, 'checkout', '-q', 'main');
    await gh.admin.repos.createOrUpdateFileContents({ owner: 'admin', repo: 'app', path: 'api.txt', message: 'From the API', content: b64('api\n') });
    await git(work, 'pull', '-q', '--ff-only', 'origin', 'main');
    expect(readFileSync(join(work, 'api.txt'), 'utf8')).toBe('api\n');
    expect(await git(work, 'log', '-1', '--format=%s')).toBe('From the API');
  });

  it('pushes into an empty repository; a stale push is refused; a bad token is refused', async () => {
    await gh.admin.repos.createForAuthenticatedUser({ name: 'blank' });
    const work = join(dir, 'blank');
    await git(dir, 'clone', '-q', url('blank'), 'blank');
    writeFileSync(join(work, 'a.txt'), 'a\n');
    await git(work, 'add', '-A');
    await git(work, 'commit', '-q', '-m', 'first');
    await git(work, 'push', '-q', 'origin', 'HEAD:main');
    expect((await gh.admin.repos.listCommits({ owner: 'admin', repo: 'blank' })).data.map((c) => c.commit.message)).toEqual(['first\n']);

    // Someone else moves main through the API; a push based on the old tip is not a fast-forward.
    await gh.admin.repos.createOrUpdateFileContents({ owner: 'admin', repo: 'blank', path: 'b.txt', message: 'meanwhile', content: b64('b\n') });
    writeFileSync(join(work, 'c.txt'), 'c\n');
    await git(work, 'add', '-A');
    await git(work, 'commit', '-q', '-m', 'behind');
    expect(await gitFails(work, 'push', 'origin', 'HEAD:main')).toMatch(/rejected|fetch first/);

    expect(await gitFails(dir, 'clone', '-q', url('app', 'tok_not_a_token'), 'nope')).toMatch(/Authentication failed|401|403/);
  });

  it('a read-scoped token clones but cannot push', async () => {
    await git(dir, 'clone', '-q', url('app', TOKENS.readToken), 'readonly');
    const work = join(dir, 'readonly');
    writeFileSync(join(work, 'x.txt'), 'x\n');
    await git(work, 'add', '-A');
    await git(work, 'commit', '-q', '-m', 'x');
    expect(await gitFails(work, 'push', 'origin', 'HEAD:main')).toMatch(/403|read-only|denied/);
  });

  it('hostile requests: garbage packs and commands get git-shaped refusals and change nothing', async () => {
    const post = async (path: string, body: string, type: string): Promise<{ status: number; text: string }> => {
      const res = await fetch(`${gh.baseUrl}/admin/app.git/${path}`, { method: 'POST', headers: { authorization: `token ${TOKENS.token}`, 'content-type': type }, body });
      return { status: res.status, text: Buffer.from(await res.arrayBuffer()).toString('latin1') };
    };
    const before = (await gh.admin.repos.getBranch({ owner: 'admin', repo: 'app', branch: 'main' })).data.commit.sha;
    const zero = '0'.repeat(40);
    const cmd = `${before} ${'1'.repeat(40)} refs/heads/main\0report-status\n`;
    const line = (t: string): string => (t.length + 4).toString(16).padStart(4, '0') + t;
    const garbage = await post('git-receive-pack', line(cmd) + '0000' + 'PACK\x00\x00\x00\x02garbage-garbage-garbage-garbage', 'application/x-git-receive-pack-request');
    expect(garbage.status).toBe(200);
    expect(garbage.text).toMatch(/unpack (?!ok)/);
    expect(garbage.text).toContain('ng refs/heads/main');
    const badCmd = await post('git-receive-pack', line('not a command\n') + '0000', 'application/x-git-receive-pack-request');
    expect(badCmd.text).toMatch(/unpack bad command/);
    const missing = await post('git-receive-pack', line(`${zero} ${'2'.repeat(40)} refs/heads/x\0report-status\n`) + '0000', 'application/x-git-receive-pack-request');
    expect(missing.text).toMatch(/unpack (?!ok)|ng refs\/heads\/x/);
    expect((await post('git-upload-pack', 'zzzz', 'application/x-git-upload-pack-request')).status).toBe(400);
    expect((await post('git-upload-pack', line(`want ${'3'.repeat(40)}\n`) + '0000' + line('done\n'), 'application/x-git-upload-pack-request')).status).toBe(400);
    const dumb = await fetch(`${gh.baseUrl}/admin/app.git/info/refs`, { headers: { authorization: `token ${TOKENS.token}` } });
    expect(dumb.status).toBe(403);
    const nowhere = await fetch(`${gh.baseUrl}/admin/nope.git/info/refs?service=git-upload-pack`, { headers: { authorization: `token ${TOKENS.token}` } });
    expect(nowhere.status).toBe(404);
    expect((await gh.admin.repos.getBranch({ owner: 'admin', repo: 'app', branch: 'main' })).data.commit.sha).toBe(before);
    expect((await gh.admin.repos.listBranches({ owner: 'admin', repo: 'app' })).data.map((b) => b.name)).toEqual(['main']);
  });
});
