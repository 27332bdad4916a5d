/**
 * Git data and code through @octokit/rest: object ids are git's own (checked against a real
 * `git` building the same objects), refs move only forward unless forced, the contents API
 * writes commits, the commits list and compare walk real history.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGithubTwin, type GithubTwin } from './harness.js';
import { b64, failure, unb64 } from './helpers.js';

describe('GitHub twin: git data and contents', () => {
  let gh: GithubTwin;
  let gitDir: string;
  const git = (args: string[], input?: string, env: Record<string, string> = {}): string =>
    execFileSync('git', args, { cwd: gitDir, input, env: { ...process.env, ...env } }).toString().trim();
  const o = { owner: 'admin', repo: 'objects' };

  beforeAll(async () => {
    gh = await startGithubTwin();
    gitDir = mkdtempSync(join(tmpdir(), 'twin-git-'));
    git(['init', '-q', '--bare']);
    await gh.admin.repos.createForAuthenticatedUser({ name: 'objects' });
  });
  afterAll(async () => {
    await gh?.close();
    rmSync(gitDir, { recursive: true, force: true });
  });

  it('blobs, trees and commits get the ids git gives them', async () => {
    const blob = await gh.admin.git.createBlob({ ...o, content: 'hello twin\n' });
    expect(blob.data.sha).toBe(git(['hash-object', '-w', '--stdin'], 'hello twin\n'));
    const bin = await gh.admin.git.createBlob({ ...o, content: Buffer.from([0, 1, 2, 255]).toString('base64'), encoding: 'base64' });
    const back = await gh.admin.git.getBlob({ ...o, file_sha: bin.data.sha });
    expect(Buffer.from(back.data.content, 'base64')).toEqual(Buffer.from([0, 1, 2, 255]));

    const tree = await gh.admin.git.createTree({
      ...o,
      tree: [
        { path: 'README.md', mode: '100644', type: 'blob', sha: blob.data.sha },
        { path: 'src/main.ts', mode: '100644', type: 'blob', content: 'export {};\n' },
        { path: 'bin/run', mode: '100755', type: 'blob', content: '#!/bin/sh\n' },
      ],
    });
    // The same tree built by git itself.
    const mainSha = git(['hash-object', '-w', '--stdin'], 'export {};\n');
    const runSha = git(['hash-object', '-w', '--stdin'], '#!/bin/sh\n');
    const src = git(['mktree'], `100644 blob ${mainSha}\tmain.ts\n`);
    const bin2 = git(['mktree'], `100755 blob ${runSha}\trun\n`);
    const root = git(['mktree'], `100644 blob ${blob.data.sha}\tREADME.md\n040000 tree ${bin2}\tbin\n040000 tree ${src}\tsrc\n`);
    expect(tree.data.sha).toBe(root);
    const recursive = await gh.admin.git.getTree({ ...o, tree_sha: tree.data.sha, recursive: 'true' });
    expect(recursive.data.tree.map((e) => `${e.mode} ${e.type} ${e.path}`)).toEqual([
      '100644 blob README.md', '040000 tree bin', '100755 blob bin/run', '040000 tree src', '100644 blob src/main.ts',
    ]);

    const who = { name: 'Ada Lovelace', email: 'ada@example.test', date: '2026-01-01T00:00:00Z' };
    const commit = await gh.admin.git.createCommit({ ...o, message: 'First\n\nwith a body\n', tree: tree.data.sha, author: who, committer: who });
    const env = { GIT_AUTHOR_NAME: who.name, GIT_AUTHOR_EMAIL: who.email, GIT_AUTHOR_DATE: '1767225600 +0000', GIT_COMMITTER_NAME: who.name, GIT_COMMITTER_EMAIL: who.email, GIT_COMMITTER_DATE: '1767225600 +0000' };
    expect(commit.data.sha).toBe(git(['commit-tree', tree.data.sha, '-m', 'First\n\nwith a body'], undefined, env));
    const got = await gh.admin.git.getCommit({ ...o, commit_sha: commit.data.sha });
    expect(got.data).toMatchObject({ sha: commit.data.sha, message: 'First\n\nwith a body\n', tree: { sha: tree.data.sha }, parents: [], author: who });

    const ref = await gh.admin.git.createRef({ ...o, ref: 'refs/heads/main', sha: commit.data.sha });
    expect(ref.status).toBe(201);
    expect((await gh.admin.git.getRef({ ...o, ref: 'heads/main' })).data.object.sha).toBe(commit.data.sha);
  });

  it('refs: duplicates and bad objects are 422, non-fast-forward needs force, delete is 204', async () => {
    const main = (await gh.admin.git.getRef({ ...o, ref: 'heads/main' })).data.object.sha;
    const dup = await failure(gh.admin.git.createRef({ ...o, ref: 'refs/heads/main', sha: main }));
    expect(dup.status).toBe(422);
    expect(dup.response?.data).toMatchObject({ message: 'Reference already exists' });
    expect((await failure(gh.admin.git.createRef({ ...o, ref: 'refs/heads/x', sha: 'f'.repeat(40) }))).status).toBe(422);
    expect((await failure(gh.admin.git.createRef({ ...o, ref: 'refs/heads/bad..name', sha: main }))).status).toBe(422);

    const mainCommit = (await gh.admin.git.getCommit({ ...o, commit_sha: main })).data;
    const sibling = await gh.admin.git.createCommit({ ...o, message: 'sibling', tree: mainCommit.tree.sha, parents: [] });
    await gh.admin.git.createRef({ ...o, ref: 'refs/heads/feature', sha: main });
    const nff = await failure(gh.admin.git.updateRef({ ...o, ref: 'heads/feature', sha: sibling.data.sha }));
    expect(nff.status).toBe(422);
    expect(nff.response?.data).toMatchObject({ message: 'Update is not a fast forward' });
    const forced = await gh.admin.git.updateRef({ ...o, ref: 'heads/feature', sha: sibling.data.sha, force: true });
    expect(forced.data.object.sha).toBe(sibling.data.sha);
    const matching = await gh.admin.git.listMatchingRefs({ ...o, ref: 'heads/' });
    expect(matching.data.map((r) => r.ref)).toEqual(['refs/heads/feature', 'refs/heads/main']);
    expect((await gh.admin.git.deleteRef({ ...o, ref: 'heads/feature' })).status).toBe(204);
    await gh.admin.git.createRef({ ...o, ref: 'refs/tags/v1.0.0', sha: main });
    const tags = await gh.admin.repos.listTags({ ...o });
    expect(tags.data.map((t) => `${t.name} ${t.commit.sha}`)).toEqual([`v1.0.0 ${main}`]);
    expect((await failure(gh.admin.git.getRef({ ...o, ref: 'heads/feature' }))).status).toBe(404);
  });

  it('contents: create, read, update (sha required and checked), delete — each a commit on the branch', async () => {
    const c = { owner: 'admin', repo: 'objects' };
    const created = await gh.admin.repos.createOrUpdateFileContents({ ...c, path: 'docs/guide.md', message: 'Add guide', content: b64('# Guide\n') });
    expect(created.status).toBe(201);
    const sha1 = created.data.content?.sha as string;
    expect(sha1).toBe(git(['hash-object', '--stdin'], '# Guide\n'));
    const file = await gh.admin.repos.getContent({ ...c, path: 'docs/guide.md' });
    expect(unb64((file.data as { content: string }).content)).toBe('# Guide\n');
    const dir = await gh.admin.repos.getContent({ ...c, path: 'docs' });
    expect((dir.data as { name: string; type: string }[]).map((f) => `${f.type}:${f.name}`)).toEqual(['file:guide.md']);

    const noSha = await failure(gh.admin.repos.createOrUpdateFileContents({ ...c, path: 'docs/guide.md', message: 'Edit', content: b64('# Guide v2\n') }));
    expect(noSha.status).toBe(422);
    const wrongSha = await failure(gh.admin.repos.createOrUpdateFileContents({ ...c, path: 'docs/guide.md', message: 'Edit', content: b64('x'), sha: 'a'.repeat(40) }));
    expect(wrongSha.status).toBe(409);
    const updated = await gh.admin.repos.createOrUpdateFileContents({ ...c, path: 'docs/guide.md', message: 'Edit guide', content: b64('# Guide v2\n'), sha: sha1 });
    expect(updated.status).toBe(200);
    expect(updated.data.commit.message).toBe('Edit guide');
    const head = (await gh.admin.repos.getBranch({ ...c, branch: 'main' })).data.commit.sha;
    expect(head).toBe(updated.data.commit.sha);

    const del = await gh.admin.repos.deleteFile({ ...c, path: 'docs/guide.md', message: 'Remove guide', sha: updated.data.content?.sha as string });
    expect(del.data.content).toBeNull();
    expect((await failure(gh.admin.repos.getContent({ ...c, path: 'docs/guide.md' }))).status).toBe(404);
    const log = await gh.admin.repos.listCommits({ ...c });
    expect(log.data.map((x) => x.commit.message)).toEqual(['Remove guide', 'Edit guide', 'Add guide', 'First\n\nwith a body\n']);
    const forPath = await gh.admin.repos.listCommits({ ...c, path: 'docs/guide.md' });
    expect(forPath.data.map((x) => x.commit.message)).toEqual(['Remove guide', 'Edit guide', 'Add guide']);
    const one = await gh.admin.repos.getCommit({ ...c, ref: updated.data.commit.sha as string });
    expect(one.data.files?.[0]).toMatchObject({ filename: 'docs/guide.md', status: 'modified', additions: 1, deletions: 1 });
    expect(one.data.files?.[0]?.patch).toContain('-# Guide\n+# Guide v2');
  });

  it('listCommits by path: a file, its folder, commits that change only a sibling, a path never there', async () => {
    const c = { owner: 'admin', repo: 'history' };
    await gh.admin.repos.createForAuthenticatedUser({ name: 'history', auto_init: true });
    const readme = (await gh.admin.repos.getContent({ ...c, path: 'README.md' })).data as { sha: string };
    let file: Record<string, string> = { 'README.md': readme.sha };
    const put = async (path: string, content: string, message: string): Promise<void> => {
      const made = await gh.admin.repos.createOrUpdateFileContents({ ...c, path, message, content: b64(content), ...(file[path] === undefined ? {} : { sha: file[path] }) });
      file = { ...file, [path]: made.data.content?.sha as string };
    };
    await put('docs/a.md', 'a1\n', 'add a');
    await put('src/x.ts', 'x1\n', 'add x');
    await put('docs/b.md', 'b1\n', 'add b');
    await put('src/x.ts', 'x2\n', 'edit x');
    await put('docs/a.md', 'a2\n', 'edit a');
    await put('README.md', 'readme\n', 'edit readme');
    const messages = async (path: string): Promise<string[]> => (await gh.admin.repos.listCommits({ ...c, path })).data.map((x) => x.commit.message);
    expect(await messages('docs/a.md')).toEqual(['edit a', 'add a']);
    expect(await messages('docs')).toEqual(['edit a', 'add b', 'add a']);
    expect(await messages('src/x.ts')).toEqual(['edit x', 'add x']);
    expect(await messages('README.md')).toEqual(['edit readme', 'Initial commit']);
    expect(await messages('docs/nothing.md')).toEqual([]);
    expect(await messages('docs/a.md/deeper')).toEqual([]);
  });

  it('compare: ahead_by, behind_by, merge base, status and files', async () => {
    const r = { owner: 'admin', repo: 'cmp' };
    await gh.admin.repos.createForAuthenticatedUser({ name: 'cmp', auto_init: true });
    const base = (await gh.admin.repos.getBranch({ ...r, branch: 'main' })).data.commit.sha;
    await gh.admin.git.createRef({ ...r, ref: 'refs/heads/topic', sha: base });
    await gh.admin.repos.createOrUpdateFileContents({ ...r, path: 'a.txt', message: 'a', content: b64('a\n'), branch: 'topic' });
    await gh.admin.repos.createOrUpdateFileContents({ ...r, path: 'b.txt', message: 'b', content: b64('b\n'), branch: 'topic' });
    await gh.admin.repos.createOrUpdateFileContents({ ...r, path: 'main.txt', message: 'on main', content: b64('m\n') });
    const cmp = await gh.admin.repos.compareCommitsWithBasehead({ ...r, basehead: 'main...topic' });
    expect(cmp.data).toMatchObject({ status: 'diverged', ahead_by: 2, behind_by: 1, total_commits: 2, merge_base_commit: { sha: base } });
    expect(cmp.data.commits.map((c) => c.commit.message)).toEqual(['a', 'b']);
    expect(cmp.data.files?.map((f) => `${f.status} ${f.filename}`)).toEqual(['added a.txt', 'added b.txt']);
    const same = await gh.admin.repos.compareCommits({ ...r, base: 'topic', head: 'topic' });
    expect(same.data.status).toBe('identical');
    expect((await failure(gh.admin.repos.compareCommitsWithBasehead({ ...r, basehead: 'main...nope' }))).status).toBe(404);
  });

  it('commit statuses: posted per context, listed newest first, combined by the newest per context', async () => {
    const r = { owner: 'admin', repo: 'objects' };
    const sha = (await gh.admin.repos.getBranch({ ...r, branch: 'main' })).data.commit.sha;
    const empty = await gh.admin.repos.getCombinedStatusForRef({ ...r, ref: 'main' });
    expect(empty.data).toMatchObject({ state: 'pending', total_count: 0, sha });
    await gh.admin.repos.createCommitStatus({ ...r, sha, state: 'pending', context: 'ci/build' });
    await gh.admin.repos.createCommitStatus({ ...r, sha, state: 'success', context: 'ci/lint', target_url: 'https://ci.example.test/1' });
    expect((await gh.admin.repos.getCombinedStatusForRef({ ...r, ref: sha })).data.state).toBe('pending');
    await gh.admin.repos.createCommitStatus({ ...r, sha, state: 'success', context: 'ci/build', description: 'ok' });
    const combined = await gh.admin.repos.getCombinedStatusForRef({ ...r, ref: 'main' });
    expect(combined.data).toMatchObject({ state: 'success', total_count: 2 });
    const list = await gh.admin.repos.listCommitStatusesForRef({ ...r, ref: 'main' });
    expect(list.data.map((s) => `${s.context}:${s.state}`)).toEqual(['ci/build:success', 'ci/lint:success', 'ci/build:pending']);
    await gh.admin.repos.createCommitStatus({ ...r, sha, state: 'failure', context: 'ci/test' });
    expect((await gh.admin.repos.getCombinedStatusForRef({ ...r, ref: 'main' })).data.state).toBe('failure');
    expect((await failure(gh.admin.repos.createCommitStatus({ ...r, sha, state: 'great' as 'success' }))).status).toBe(422);
    expect((await failure(gh.admin.repos.createCommitStatus({ ...r, sha: 'c'.repeat(40), state: 'success' }))).status).toBe(422);
    // getCommit still answers for a ref, beside the status paths under /commits/.
    expect((await gh.admin.repos.getCommit({ ...r, ref: 'main' })).data.sha).toBe(sha);
  });

  it('contents: a path git cannot hold in a tree (NUL, .git in any case or spelling, empty, . or .. parts) is 422 and writes nothing', async () => {
    const c = { owner: 'admin', repo: 'objects' };
    const head = (await gh.admin.repos.getBranch({ ...c, branch: 'main' })).data.commit.sha;
    const bad = ['h\u0000i.txt', '.git/config', 'f/.git/x', 'd//e.txt', '.GIT/x', 'x/.Git', 'git~1/x', '.git./x', '.g\u200cit/x', 'a/./b', 'a/../b', 'a/'];
    for (const path of bad) {
      const put = await failure(gh.admin.repos.createOrUpdateFileContents({ ...c, path, message: 'evil', content: b64('x') }));
      expect(put.status, JSON.stringify(path)).toBe(422);
      expect(put.response?.data).toMatchObject({ message: 'path contains a malformed path component', errors: [{ resource: 'Commit', field: 'path', code: 'invalid' }] });
      expect((await failure(gh.admin.repos.deleteFile({ ...c, path, message: 'evil', sha: 'a'.repeat(40) }))).status, JSON.stringify(path)).toBe(422);
    }
    const slash = await failure(gh.admin.repos.createOrUpdateFileContents({ ...c, path: '/x.txt', message: 'evil', content: b64('x') }));
    expect(slash.response?.data).toMatchObject({ message: 'path cannot start with a slash' });
    expect((await gh.admin.repos.getBranch({ ...c, branch: 'main' })).data.commit.sha).toBe(head);
    // A name that only looks like one: fine.
    expect((await gh.admin.repos.createOrUpdateFileContents({ ...c, path: '.github/git~10/.gitx', message: 'ok', content: b64('x') })).status).toBe(201);
  });

  it('trees: an entry name git refuses is 422 in any case or spelling; an item replaces a folder, but nothing goes inside a file', async () => {
    for (const path of ['a\u0000b', '.GIT', '.git', 'x/.Git/y', 'git~1', '.git ', '..', 'a//b', 'a/', '']) {
      const res = await failure(gh.admin.git.createTree({ ...o, tree: [{ path, mode: '100644', type: 'blob', content: 'x' }] }));
      expect(res.status, JSON.stringify(path)).toBe(422);
      expect(res.response?.data, JSON.stringify(path)).toMatchObject({ message: 'tree.path contains a malformed path component' });
    }
    expect((await failure(gh.admin.git.createTree({ ...o, tree: [{ path: '/a', mode: '100644', type: 'blob', content: 'x' }] }))).response?.data)
      .toMatchObject({ message: 'tree.path cannot start with a slash' });
    const base = await gh.admin.git.createTree({ ...o, tree: [{ path: 'README.md', mode: '100644', type: 'blob', content: 'r\n' }, { path: 'src/main.ts', mode: '100644', type: 'blob', content: 'm\n' }] });
    const inside = await failure(gh.admin.git.createTree({ ...o, base_tree: base.data.sha, tree: [{ path: 'README.md/inner', mode: '100644', type: 'blob', content: 'x' }] }));
    expect(inside.response?.data).toMatchObject({ message: 'tree.path README.md is both a file and a directory' });
    const replaced = await gh.admin.git.createTree({ ...o, base_tree: base.data.sha, tree: [{ path: 'src', mode: '100644', type: 'blob', content: 'now a file\n' }] });
    const listed = await gh.admin.git.getTree({ ...o, tree_sha: replaced.data.sha, recursive: 'true' });
    expect(listed.data.tree.map((e) => `${e.type} ${e.path}`)).toEqual(['blob README.md', 'blob src']);
    // The same tree as git makes it.
    const readme = git(['hash-object', '-w', '--stdin'], 'r\n'), src = git(['hash-object', '-w', '--stdin'], 'now a file\n');
    expect(replaced.data.sha).toBe(git(['mktree'], `100644 blob ${readme}\tREADME.md\n100644 blob ${src}\tsrc\n`));
  });

  it('refs: a branch beside a sub-branch of the same name (either way round) is 422, as are names git check-ref-format refuses; release tags too', async () => {
    const main = (await gh.admin.git.getRef({ ...o, ref: 'heads/main' })).data.object.sha;
    await gh.admin.git.createRef({ ...o, ref: 'refs/heads/ok-branch', sha: main });
    const sub = await failure(gh.admin.git.createRef({ ...o, ref: 'refs/heads/ok-branch/sub', sha: main }));
    expect(sub.status).toBe(422);
    expect(sub.response?.data).toMatchObject({ message: 'Reference update failed' });
    await gh.admin.git.createRef({ ...o, ref: 'refs/heads/deep/a/b', sha: main });
    for (const ref of ['refs/heads/deep', 'refs/heads/deep/a']) expect((await failure(gh.admin.git.createRef({ ...o, ref, sha: main }))).status, ref).toBe(422);
    // Neighbours that only share a prefix are fine.
    await gh.admin.git.createRef({ ...o, ref: 'refs/heads/ok-branch-2', sha: main });
    await gh.admin.git.createRef({ ...o, ref: 'refs/heads/deep/ab', sha: main });
    for (const ref of ['refs/heads/a.lock/b', 'refs/heads/x/.y', 'refs/heads/a b', 'refs/heads/a\\b', 'refs/heads/end.']) {
      expect((await failure(gh.admin.git.createRef({ ...o, ref, sha: main }))).response?.data, ref).toMatchObject({ message: `${ref} is not a valid ref name.` });
    }
    await gh.admin.git.createRef({ ...o, ref: 'refs/tags/v9', sha: main });
    const release = await failure(gh.admin.repos.createRelease({ ...o, tag_name: 'v9/rc1' }));
    expect(release.status).toBe(422);
    expect(release.response?.data).toMatchObject({ errors: [{ resource: 'Release', code: 'invalid', field: 'tag_name' }] });
    const heads = (await gh.admin.git.listMatchingRefs({ ...o, ref: 'heads/' })).data.map((r) => r.ref);
    expect(heads).toEqual(['refs/heads/deep/a/b', 'refs/heads/deep/ab', 'refs/heads/main', 'refs/heads/ok-branch', 'refs/heads/ok-branch-2']);
    expect((await gh.admin.git.listMatchingRefs({ ...o, ref: 'tags/' })).data.map((r) => r.ref)).toEqual(['refs/tags/v1.0.0', 'refs/tags/v9']);
  });

  it('hostile trees: 10,000 items, 1,000 entries of one 2.9 MB blob, a path 400,000 folders deep each answer in time', async () => {
    const h = { owner: 'admin', repo: 'hostile' };
    await gh.admin.repos.createForAuthenticatedUser({ name: 'hostile', auto_init: true });
    // Each item used to scan every path so far (served: 10,000 took 0.43 s, 20,000 1.4 s, 40,000 ended the world).
    const wide = await gh.admin.git.createTree({ ...h, tree: Array.from({ length: 10_000 }, (_, i) => ({ path: `d${i % 50}/f${i}`, mode: '100644' as const, type: 'blob' as const, content: '' })) });
    expect(wide.data.tree.length).toBe(50);
    const replaced = await gh.admin.git.createTree({ ...h, base_tree: wide.data.sha, tree: [{ path: 'd7', mode: '100644', type: 'blob', content: 'file now' }, { path: 'd8/f8', mode: '100644', type: 'blob', sha: null }] });
    expect(replaced.data.tree.find((e) => e.path === 'd7')?.type).toBe('blob');
    const d8 = await gh.admin.git.getTree({ ...h, tree_sha: replaced.data.tree.find((e) => e.path === 'd8')?.sha as string });
    expect(d8.data.tree.length).toBe(199);
    const clash = await failure(gh.admin.git.createTree({ ...h, base_tree: wide.data.sha, tree: [{ path: 'd7/f7/x', mode: '100644', type: 'blob', content: '' }] }));
    expect([clash.status, clash.message]).toEqual([422, expect.stringContaining('tree.path d7/f7 is both a file and a directory')]);

    // One big (binary) blob named 1,000 times: its type and size are read once per request.
    const big = await gh.admin.git.createBlob({ ...h, content: Buffer.concat([Buffer.from([0]), Buffer.alloc(2_900_000, 'x')]).toString('base64'), encoding: 'base64' });
    const many = await gh.admin.git.createTree({ ...h, tree: Array.from({ length: 1000 }, (_, i) => ({ path: `f${i}`, mode: '100644' as const, type: 'blob' as const, sha: big.data.sha })) });
    expect(many.data.tree.every((e) => e.size === 2_900_001)).toBe(true);
    expect((await gh.admin.git.getTree({ ...h, tree_sha: many.data.sha })).data.tree.length).toBe(1000);
    const main = (await gh.admin.git.getRef({ ...h, ref: 'heads/main' })).data.object.sha;
    const c = await gh.admin.git.createCommit({ ...h, message: 'many', tree: many.data.sha, parents: [main] });
    await gh.admin.git.updateRef({ ...h, ref: 'heads/main', sha: c.data.sha });
    const listing = await gh.admin.repos.getContent({ ...h, path: '' });
    expect((listing.data as { size: number }[]).map((e) => e.size)).toEqual(Array(1000).fill(2_900_001));
    const cmp = await gh.admin.repos.compareCommitsWithBasehead({ ...h, basehead: `${main}...${c.data.sha}` });
    expect(cmp.data.files?.length).toBe(300);

    // Deeper than git's core.maxTreeDepth (4,096): 422 like any path git refuses, not a stack overflow.
    const deep = await failure(gh.admin.git.createTree({ ...h, tree: [{ path: 'a/'.repeat(400_000) + 'f', mode: '100644', type: 'blob', content: 'x' }] }));
    expect([deep.status, deep.message]).toEqual([422, expect.stringContaining('tree.path contains a malformed path component')]);
    const deepest = await gh.admin.git.createTree({ ...h, tree: [{ path: 'a/'.repeat(4095) + 'f', mode: '100644', type: 'blob', content: 'x' }] });
    expect(deepest.status).toBe(201);
    expect(deepest.data.tree.map((e) => e.path)).toEqual(['a']);
  });
});

