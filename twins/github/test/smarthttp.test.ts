/**
 * `git clone`, `git fetch` and `git push` — the real git binary — against the twin served in a
 * world: objects and refs made through the API come out of a clone with the same ids, and a
 * push is visible to the API at once.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOKENS, startGithubTwin, type GithubTwin } from './harness.js';
import { b64, copy, delta, failure, pack, unb64 } from './helpers.js';

describe('GitHub twin: git smart HTTP', () => {
  let gh: GithubTwin;
  let dir: string;
  const env = (): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH, HOME: dir, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Pusher', GIT_AUTHOR_EMAIL: 'pusher@example.test', GIT_COMMITTER_NAME: 'Pusher', GIT_COMMITTER_EMAIL: 'pusher@example.test',
    GIT_AUTHOR_DATE: '2026-01-02T10:00:00+02:00', GIT_COMMITTER_DATE: '2026-01-02T10:00:00+02:00',
  });
  // Asynchronous: the world's server runs in this process, so a blocking exec would stall it.
  const run = (cwd: string, args: string[], input?: string): Promise<{ ok: boolean; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      const child = execFile('git', args, { cwd, env: env(), timeout: 60_000 }, (error, stdout, stderr) => resolve({ ok: error === null, stdout: String(stdout).trim(), stderr: String(stderr) }));
      if (input !== undefined) {
        child.stdin?.on('error', () => {});
        child.stdin?.end(input);
      }
    });
  const gitWith = async (input: string, cwd: string, ...args: string[]): Promise<string> => {
    const r = await run(cwd, args, input);
    if (!r.ok) throw new Error(`git ${args.join(' ')} failed: ${r.stderr}`);
    return r.stdout;
  };
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
    // Deleting a ref that is not there: ok, as git reports it, and no push webhook.
    const hook = await gh.admin.repos.createWebhook({ owner: 'admin', repo: 'app', config: { url: 'https://example.test/hook', content_type: 'json' }, events: ['push'] });
    const deliveries = async (): Promise<number> => (await gh.admin.repos.listWebhookDeliveries({ owner: 'admin', repo: 'app', hook_id: hook.data.id })).data.length;
    const sent = await deliveries();
    const ghost = await post('git-receive-pack', line(`${zero} ${zero} refs/heads/never-was\0report-status\n`) + '0000', 'application/x-git-receive-pack-request');
    expect(ghost.text).toContain('ok refs/heads/never-was');
    expect(await deliveries()).toBe(sent);
    await gh.admin.repos.deleteWebhook({ owner: 'admin', repo: 'app', hook_id: hook.data.id });
    // A push of more ref updates than one request may make is refused whole.
    const many = Array.from({ length: 1001 }, (_, i) => line(`${zero} ${zero} refs/heads/g${i}${i === 0 ? '\0report-status' : ''}\n`)).join('');
    const tooMany = await post('git-receive-pack', many + '0000', 'application/x-git-receive-pack-request');
    expect(tooMany.text).toMatch(/unpack too many ref updates/);
    expect((await post('git-upload-pack', 'zzzz', 'application/x-git-upload-pack-request')).status).toBe(400);
    expect((await post('git-upload-pack', line(`want ${'3'.repeat(40)}\n`) + '0000' + line('done\n'), 'application/x-git-upload-pack-request')).status).toBe(400);
    const dumb = await fetch(`${gh.baseUrl}/admin/app.git/info/refs`, { headers: { authorization: `token ${TOKENS.token}` } });
    expect(dumb.status).toBe(403);
    const nowhere = await fetch(`${gh.baseUrl}/admin/nope.git/info/refs?service=git-upload-pack`, { headers: { authorization: `token ${TOKENS.token}` } });
    expect(nowhere.status).toBe(404);
    expect((await gh.admin.repos.getBranch({ owner: 'admin', repo: 'app', branch: 'main' })).data.commit.sha).toBe(before);
    expect((await gh.admin.repos.listBranches({ owner: 'admin', repo: 'app' })).data.map((b) => b.name)).toEqual(['main']);
  });

  it('paths git cannot hold in a tree never reach one: the API answers 422, so a clone still checks out and passes fsck --strict', async () => {
    const r = { owner: 'admin', repo: 'paths' };
    await gh.admin.repos.createForAuthenticatedUser({ name: 'paths', auto_init: true });
    for (const path of ['h\u0000i.txt', '.git/config', 'f/.git/x', 'd//e.txt', '.GIT/hooks/post-checkout']) {
      expect((await failure(gh.admin.repos.createOrUpdateFileContents({ ...r, path, message: 'evil', content: b64('x') }))).status, JSON.stringify(path)).toBe(422);
    }
    const base = (await gh.admin.repos.getBranch({ ...r, branch: 'main' })).data.commit.commit.tree.sha;
    for (const path of ['a\u0000b', '.GIT', 'git~1/x']) {
      expect((await failure(gh.admin.git.createTree({ ...r, base_tree: base, tree: [{ path, mode: '100644', type: 'blob', content: 'x' }] }))).status, JSON.stringify(path)).toBe(422);
    }
    await gh.admin.repos.createOrUpdateFileContents({ ...r, path: 'fine/ok.txt', message: 'fine', content: b64('ok\n') });
    await git(dir, 'clone', '-q', url('paths'), 'paths');
    const work = join(dir, 'paths');
    expect(await git(work, 'fsck', '--strict')).toBe('');
    expect(await git(work, 'ls-files')).toBe('README.md\nfine/ok.txt');
  });

  it('a push of a tree git fsck refuses (.GIT, git~1, .git.) is refused with an unpack error naming the tree, and stores nothing', async () => {
    const work = join(dir, 'app');
    const blob = await git(work, 'rev-parse', 'HEAD:NOTES.md');
    for (const name of ['.GIT', 'git~1', '.git.']) {
      const inner = await gitWith(`100644 blob ${blob}\tconfig\n`, work, 'mktree');
      const root = await gitWith(`100644 blob ${blob}\tNOTES.md\n040000 tree ${inner}\t${name}\n`, work, 'mktree');
      const commit = await git(work, 'commit-tree', root, '-p', 'HEAD', '-m', 'evil');
      const refused = await gitFails(work, 'push', 'origin', `${commit}:refs/heads/evil`);
      expect(refused).toMatch(new RegExp(`remote unpack failed: error in tree ${root}: hasDotgit: contains '.git'`));
      expect(refused).toMatch(/\[remote rejected\] .* -> evil \(unpacker error\)/);
      expect((await failure(gh.admin.git.getTree({ owner: 'admin', repo: 'app', tree_sha: root }))).status).toBe(404);
    }
    expect((await gh.admin.repos.listBranches({ owner: 'admin', repo: 'app' })).data.map((b) => b.name)).toEqual(['main']);
  });

  it('a .gitmodules symlink (gitmodulesSymlink, as git fsck says) is refused: a push with an unpack error and the branch unmoved, the trees API with 422', async () => {
    const r = { owner: 'admin', repo: 'app' };
    await git(dir, 'clone', '-q', url('app'), 'app-gitmodules');
    const work = join(dir, 'app-gitmodules');
    const before = await git(work, 'rev-parse', 'HEAD');
    const target = await gitWith('/etc/passwd', work, 'hash-object', '-w', '--stdin');
    // The local git will not put such a symlink in its index (update-index: Invalid path), so mktree writes the tree.
    const root = await gitWith(`${await git(work, 'ls-tree', 'HEAD')}\n120000 blob ${target}\t.gitmodules\n`, work, 'mktree');
    const commit = await git(work, 'commit-tree', root, '-p', before, '-m', 'symlinked .gitmodules');
    const refused = await gitFails(work, 'push', 'origin', `${commit}:refs/heads/main`);
    expect(refused).toContain(`remote unpack failed: error in tree ${root}: gitmodulesSymlink: .gitmodules is a symbolic link`);
    expect(refused).toMatch(/\[remote rejected\] .* -> main \(unpacker error\)/);
    expect((await gh.admin.repos.getBranch({ ...r, branch: 'main' })).data.commit.sha).toBe(before);
    expect((await failure(gh.admin.git.getTree({ ...r, tree_sha: root }))).status).toBe(404);
    // The NTFS short name in a folder, too.
    const inner = await gitWith(`120000 blob ${target}\tGITMOD~1\n`, work, 'mktree');
    const root2 = await gitWith(`040000 tree ${inner}\tsub\n`, work, 'mktree');
    const commit2 = await git(work, 'commit-tree', root2, '-p', before, '-m', 'short name');
    expect(await gitFails(work, 'push', 'origin', `${commit2}:refs/heads/evil`)).toContain(`error in tree ${inner}: gitmodulesSymlink: .gitmodules is a symbolic link`);
    expect((await gh.admin.repos.listBranches(r)).data.map((b) => b.name)).not.toContain('evil');
    // The trees API: a symlink named .gitmodules is 422; a plain .gitmodules file and a symlink of another name are fine.
    const base = (await gh.admin.git.getCommit({ ...r, commit_sha: before })).data.tree.sha;
    for (const path of ['.gitmodules', 'sub/.GitModules', 'gitmod~1']) {
      const res = await failure(gh.admin.git.createTree({ ...r, base_tree: base, tree: [{ path, mode: '120000', type: 'blob', content: '/etc/passwd' }] }));
      expect(res.status, path).toBe(422);
      expect((res.response?.data as { message: string }).message).toBe(`tree.path ${path} is a symbolic link named .gitmodules`);
    }
    expect((await gh.admin.git.createTree({ ...r, base_tree: base, tree: [{ path: '.gitmodules', mode: '100644', type: 'blob', content: '' }] })).status).toBe(201);
    expect((await gh.admin.git.createTree({ ...r, base_tree: base, tree: [{ path: '.gitmodulesx', mode: '120000', type: 'blob', content: 'x' }] })).status).toBe(201);
  });

  it('a branch and a sub-branch of one name cannot coexist: the API answers 422, a push is rejected with git\'s reason, and clones keep working', async () => {
    const r = { owner: 'admin', repo: 'nested' };
    await gh.admin.repos.createForAuthenticatedUser({ name: 'nested', auto_init: true });
    await git(dir, 'clone', '-q', url('nested'), 'nested');
    const work = join(dir, 'nested');
    const head = await git(work, 'rev-parse', 'HEAD');
    await gh.admin.git.createRef({ ...r, ref: 'refs/heads/ok-branch', sha: head });
    expect((await failure(gh.admin.git.createRef({ ...r, ref: 'refs/heads/ok-branch/sub', sha: head }))).status).toBe(422);
    const rejected = await gitFails(work, 'push', 'origin', 'HEAD:refs/heads/ok-branch/sub');
    expect(rejected).toContain("[remote rejected] HEAD -> ok-branch/sub (cannot lock ref 'refs/heads/ok-branch/sub': 'refs/heads/ok-branch' exists; cannot create 'refs/heads/ok-branch/sub')");
    await git(work, 'push', '-q', 'origin', 'HEAD:refs/heads/topic/inner');
    expect(await gitFails(work, 'push', 'origin', 'HEAD:refs/heads/topic')).toContain("'refs/heads/topic/inner' exists; cannot create 'refs/heads/topic'");
    expect((await failure(gh.admin.git.createRef({ ...r, ref: 'refs/heads/topic', sha: head }))).status).toBe(422);
    // One push may swap a branch for a folder of that name: the deletion goes first.
    await git(work, 'push', '-q', 'origin', ':ok-branch', 'HEAD:refs/heads/ok-branch/sub');
    await git(dir, 'clone', '-q', url('nested'), 'nested-2');
    expect((await git(join(dir, 'nested-2'), 'branch', '-r')).split('\n').map((b) => b.trim())).toEqual(['origin/HEAD -> origin/main', 'origin/main', 'origin/ok-branch/sub', 'origin/topic/inner']);
  });

  it('a decompression bomb (61 KB inflating to 60 MiB, as an object, a delta or a gzip body) is refused at once with an unpack error; the world serves on', async () => {
    const before = (await gh.admin.repos.getBranch({ owner: 'admin', repo: 'app', branch: 'main' })).data.commit.sha;
    const receive = async (body: Buffer, headers: Record<string, string> = {}): Promise<{ status: number; text: string; ms: number }> => {
      const started = performance.now();
      const res = await fetch(`${gh.baseUrl}/admin/app.git/git-receive-pack`, {
        method: 'POST', headers: { authorization: `token ${TOKENS.token}`, 'content-type': 'application/x-git-receive-pack-request', ...headers }, body: new Uint8Array(body),
      });
      return { status: res.status, text: Buffer.from(await res.arrayBuffer()).toString('latin1'), ms: performance.now() - started };
    };
    const line = (t: string): string => (t.length + 4).toString(16).padStart(4, '0') + t;
    const command = Buffer.from(line(`${'0'.repeat(40)} ${'b'.repeat(40)} refs/heads/bomb\0report-status\n`) + '0000');
    const big = 60 * 2 ** 20;
    const asObject = Buffer.concat([command, pack([{ type: 3, content: Buffer.alloc(big) }])]);
    expect(asObject.length).toBeLessThan(64 * 1024);
    const object = await receive(asObject);
    expect(object.status).toBe(200);
    expect(object.text).toContain(`unpack a blob of ${big} bytes is over the limit of 4194304 bytes per object`);
    expect(object.text).toContain('ng refs/heads/bomb unpacker error');
    // A blob of 60 000 bytes and a 5 KB delta that copies it a thousand times.
    const copies = Array.from({ length: 1000 }, () => copy(0, 60_000));
    const asDelta = await receive(Buffer.concat([command, pack([{ type: 3, content: Buffer.alloc(60_000) }, { type: 6, rel: 0, content: delta(60_000, 60_000_000, copies) }])]));
    expect(asDelta.text).toContain('unpack a blob of 60000000 bytes is over the limit of 4194304 bytes per object');
    const asGzip = await receive(gzipSync(Buffer.concat([command, Buffer.alloc(big)])), { 'content-encoding': 'gzip' });
    expect(asGzip.status).toBe(200);
    expect(asGzip.text).toContain('unpack inflated data too large');
    // Refused on the sizes declared, before inflating: no time to speak of (a gzip body is
    // inflated up to the 8 MiB limit first, about half a second in QuickJS).
    for (const r of [object, asDelta]) expect(r.ms).toBeLessThan(1000);
    // git itself is told why, for a file over the limit (zeros pack small; the twin reads the size).
    const work = join(dir, 'app');
    writeFileSync(join(work, 'big.bin'), Buffer.alloc(5 * 2 ** 20));
    await git(work, 'add', 'big.bin');
    await git(work, 'commit', '-q', '-m', 'big');
    expect(await gitFails(work, 'push', 'origin', 'HEAD:refs/heads/big')).toContain('remote unpack failed: a blob of 5242880 bytes is over the limit of 4194304 bytes per object');
    await git(work, 'reset', '-q', '--hard', 'HEAD~1');
    expect((await gh.admin.repos.getBranch({ owner: 'admin', repo: 'app', branch: 'main' })).data.commit.sha).toBe(before);
    expect((await gh.admin.repos.listBranches({ owner: 'admin', repo: 'app' })).data.map((b) => b.name)).toEqual(['main']);
  });
});
