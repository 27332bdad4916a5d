/**
 * Limits of trees, contents and diffs, through @octokit/rest: a pushed "tree bomb" (one subtree
 * named many times over: a 1 KB push, a million paths) is stored as git would, its recursive
 * listing stops at GitHub's limits, and commits, compare, contents and trees over it cost what
 * changed; a diff's patches stay within GitHub's limits however many paths share a big pair of
 * blobs; a directory's contents list 1,000 entries. Then the tree walks themselves against
 * the whole-map versions they replace, on random trees.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  TreeEditor, diffTrees, mergeTrees, putObject, type FileEntry, type GitObject,
} from '../twin/lib/git.js';
import { buildTree, diffFlat, fileFolderClash, flatten, mergeFlat } from '../twin/lib/flat.test-helper.js';
import { memoryCtx, rng } from '../twin/lib/memory.test-helper.js';
import { TOKENS, startGithubTwin, type GithubTwin } from './harness.js';
import { b64, pack } from './helpers.js';

/** A git object as a pack carries it, with its id. */
interface Raw { type: number; content: Buffer; sha: string }
const TYPES = { commit: 1, tree: 2, blob: 3 } as const;
function raw(type: keyof typeof TYPES, content: Buffer): Raw {
  return { type: TYPES[type], content, sha: createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest('hex') };
}
/** A tree of `entries`, already in git's order (names of one length, no folder beside a file of its name). */
function rawTree(entries: { mode: string; name: string; sha: string }[]): Raw {
  return raw('tree', Buffer.concat(entries.map((e) => Buffer.concat([Buffer.from(`${e.mode} ${e.name}\0`), Buffer.from(e.sha, 'hex')]))));
}
function rawCommit(tree: string, parents: string[], message: string): Raw {
  const who = 'Pusher <pusher@example.test> 1767225600 +0000';
  return raw('commit', Buffer.from(`tree ${tree}\n${parents.map((p) => `parent ${p}\n`).join('')}author ${who}\ncommitter ${who}\n\n${message}\n`));
}

describe('GitHub twin: limits of trees, contents and diffs', () => {
  let gh: GithubTwin;
  const r = { owner: 'admin', repo: 'bomb' };
  const names = (n: number, prefix: string): string[] => Array.from({ length: n }, (_, i) => prefix + String(i).padStart(4, '0'));

  /** `git push` of `objects` moving refs/heads/main from `from` to `to`: git's report. */
  const push = async (repo: string, from: string, to: string, objects: Raw[]): Promise<string> => {
    const line = (t: string): string => (t.length + 4).toString(16).padStart(4, '0') + t;
    const body = Buffer.concat([Buffer.from(line(`${from} ${to} refs/heads/main\0report-status\n`) + '0000'), pack(objects)]);
    const res = await fetch(`${gh.baseUrl}/admin/${repo}.git/git-receive-pack`, {
      method: 'POST', headers: { authorization: `token ${TOKENS.token}`, 'content-type': 'application/x-git-receive-pack-request' }, body: new Uint8Array(body),
    });
    expect(res.status).toBe(200);
    return Buffer.from(await res.arrayBuffer()).toString('latin1');
  };

  // The bomb: one blob named 100 times in a tree, that tree 100 times in the next, three levels.
  const leaf = raw('blob', Buffer.from('x\n'));
  const files = rawTree(names(100, 'f').map((name) => ({ mode: '100644', name, sha: leaf.sha })));
  const middle = rawTree(names(100, 'd').map((name) => ({ mode: '40000', name, sha: files.sha })));
  const top = rawTree(names(100, 'd').map((name) => ({ mode: '40000', name, sha: middle.sha })));
  const first = rawCommit(top.sha, [], 'a million paths');

  beforeAll(async () => {
    gh = await startGithubTwin();
    await gh.admin.repos.createForAuthenticatedUser({ name: 'bomb' });
    const objects = [leaf, files, middle, top, first];
    expect(pack(objects).length).toBeLessThan(1200);
    expect(await push('bomb', '0'.repeat(40), first.sha, objects)).toContain('ok refs/heads/main');
  });
  afterAll(async () => {
    await gh?.close();
  });

  it('a tree bomb (a 1 KB push, a million paths) is stored as pushed; its recursive listing stops at GitHub\'s limits (100,000 entries, 7 MB) with truncated: true', async () => {
    expect((await gh.admin.repos.getBranch({ ...r, branch: 'main' })).data.commit.sha).toBe(first.sha);
    const listed = await gh.admin.git.getTree({ ...r, tree_sha: top.sha, recursive: 'true' });
    expect(listed.data.truncated).toBe(true);
    expect(listed.data.tree.length).toBeGreaterThan(1000);
    expect(listed.data.tree.length).toBeLessThanOrEqual(100_000);
    expect(JSON.stringify(listed.data.tree).length).toBeLessThanOrEqual(7 * 1024 * 1024);
    // An answer this large carries no ETag (hashing it in the sandbox cost most of its time).
    expect(listed.headers.etag).toBeUndefined();
    // Depth first, as git ls-tree -r -t lists it: the first paths of the million.
    expect(listed.data.tree.slice(0, 4).map((e) => `${e.type} ${e.path}`)).toEqual(['tree d0000', 'tree d0000/d0000', 'blob d0000/d0000/f0000', 'blob d0000/d0000/f0001']);
    // Nothing of it is lost: each tree is there as pushed, whole.
    const plain = await gh.admin.git.getTree({ ...r, tree_sha: top.sha });
    expect([plain.data.tree.length, plain.data.truncated]).toEqual([100, false]);
    expect((await gh.admin.git.getTree({ ...r, tree_sha: middle.sha })).data.tree.every((e) => e.sha === files.sha)).toBe(true);
    expect((await gh.admin.git.getTree({ ...r, tree_sha: files.sha, recursive: 'true' })).data).toMatchObject({ truncated: false, tree: expect.arrayContaining([expect.objectContaining({ path: 'f0099', sha: leaf.sha, size: 2 })]) });
  });

  it('over a tree bomb, a commit changing one file (contents API) lists that one file in getCommit and compare; a tree on it (base_tree) keeps the rest by id', async () => {
    // The bomb's own commit adds every path: its files stop at 300, as GitHub lists them.
    const root = await gh.admin.repos.getCommit({ ...r, ref: first.sha });
    expect(root.data.files?.length).toBe(300);
    expect(root.data.files?.[0]).toMatchObject({ filename: 'd0000/d0000/f0000', status: 'added', additions: 1 });

    const put = await gh.admin.repos.createOrUpdateFileContents({ ...r, path: 'd0042/d0007/f0099', message: 'one file', content: b64('y\n'), sha: leaf.sha });
    const second = put.data.commit.sha as string;
    const commit = await gh.admin.repos.getCommit({ ...r, ref: second });
    expect(commit.data.files?.map((f) => [f.filename, f.status, f.additions, f.deletions, f.patch])).toEqual([['d0042/d0007/f0099', 'modified', 1, 1, '@@ -1,1 +1,1 @@\n-x\n+y']]);
    expect(commit.data.stats).toMatchObject({ total: 2, additions: 1, deletions: 1 });
    const cmp = await gh.admin.repos.compareCommitsWithBasehead({ ...r, basehead: `${first.sha}...main` });
    expect([cmp.data.status, cmp.data.ahead_by, cmp.data.files?.map((f) => f.filename)]).toEqual(['ahead', 1, ['d0042/d0007/f0099']]);
    // The commit's tree shares all but the changed file's folders with the bomb.
    const tree = (await gh.admin.git.getTree({ ...r, tree_sha: second })).data.tree;
    expect(tree.filter((e) => e.sha !== middle.sha).map((e) => e.path)).toEqual(['d0042']);
    expect((await gh.admin.repos.getContent({ ...r, path: 'd0042/d0007/f0099' })).data).toMatchObject({ content: b64('y\n') + '\n' });

    const made = await gh.admin.git.createTree({ ...r, base_tree: top.sha, tree: [{ path: 'd0001/new.txt', mode: '100644', type: 'blob', content: 'new\n' }] });
    expect(made.data.tree.length).toBe(100);
    expect(made.data.tree.filter((e) => e.sha !== middle.sha).map((e) => e.path)).toEqual(['d0001']);
    const d0001 = await gh.admin.git.getTree({ ...r, tree_sha: made.data.tree[1]?.sha as string });
    expect([d0001.data.tree.length, d0001.data.tree[100]?.path]).toEqual([101, 'new.txt']);
  });

  it('a file whose patch is over 500 KB is listed without patch, its counts kept; patches stop at 1 MB in all, a pair of blobs shared by 40 paths counted each time', async () => {
    const p = { owner: 'admin', repo: 'patches' };
    await gh.admin.repos.createForAuthenticatedUser({ name: p.repo, auto_init: true });
    const blob = async (text: string): Promise<string> => (await gh.admin.git.createBlob({ ...p, content: b64(text), encoding: 'base64' })).data.sha;
    // One line each of 600 KB; and 80 KB lines that 40 paths share.
    const [bigA, bigB, smallA, smallB] = [await blob('a'.repeat(600_000)), await blob('b'.repeat(600_000)), await blob('c'.repeat(80_000) + '\n'), await blob('d'.repeat(80_000) + '\n')];
    const main = (await gh.admin.git.getRef({ ...p, ref: 'heads/main' })).data.object.sha;
    const commitOf = async (big: string, small: string, parent: string): Promise<string> => {
      const tree = await gh.admin.git.createTree({ ...p, tree: [{ path: 'big.txt', mode: '100644', type: 'blob', sha: big }, ...names(40, 'f').map((path) => ({ path, mode: '100644' as const, type: 'blob' as const, sha: small }))] });
      return (await gh.admin.git.createCommit({ ...p, message: 'm', tree: tree.data.sha, parents: [parent] })).data.sha;
    };
    const before = await commitOf(bigA, smallA, main);
    const after = await commitOf(bigB, smallB, before);
    await gh.admin.git.updateRef({ ...p, ref: 'heads/main', sha: after });
    for (const files of [(await gh.admin.repos.getCommit({ ...p, ref: after })).data.files, (await gh.admin.repos.compareCommitsWithBasehead({ ...p, basehead: `${before}...${after}` })).data.files]) {
      expect(files?.length).toBe(41);
      // Every file keeps its counts.
      expect(files?.every((f) => f.additions === 1 && f.deletions === 1 && f.changes === 2)).toBe(true);
      expect(files?.[0]).toMatchObject({ filename: 'big.txt', status: 'modified' });
      expect(files?.[0]?.patch).toBeUndefined();
      const patches = (files ?? []).map((f) => f.patch?.length ?? 0);
      // The first of the shared pair's patches are shown, until the total would pass 1 MB; none after.
      const shown = patches.filter((n) => n > 0).length;
      expect(shown).toBeGreaterThan(5);
      expect(shown).toBeLessThan(40);
      expect(patches.slice(1, 1 + shown).every((n) => n > 160_000)).toBe(true);
      expect(patches.slice(1 + shown).every((n) => n === 0)).toBe(true);
      expect(patches.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(1024 * 1024);
    }
  });

  it('pulls.listFiles and getCommit page through a commit\'s files up to 3,000 (GitHub\'s limit), not the first 300 only, and count them all; merging it takes them all', async () => {
    const m = { owner: 'admin', repo: 'many' };
    await gh.admin.repos.createForAuthenticatedUser({ name: m.repo, auto_init: true });
    const main = (await gh.admin.git.getRef({ ...m, ref: 'heads/main' })).data.object.sha;
    const base = (await gh.admin.git.getCommit({ ...m, commit_sha: main })).data.tree.sha;
    const tree = await gh.admin.git.createTree({ ...m, base_tree: base, tree: names(350, 'f').map((f) => ({ path: `src/${f}`, mode: '100644' as const, type: 'blob' as const, content: `${f}\n` })) });
    const commit = await gh.admin.git.createCommit({ ...m, message: '350 files', tree: tree.data.sha, parents: [main] });
    await gh.admin.git.createRef({ ...m, ref: 'refs/heads/topic', sha: commit.data.sha });
    const pr = await gh.admin.pulls.create({ ...m, title: 'many', head: 'topic', base: 'main' });
    const files = await gh.admin.paginate(gh.admin.pulls.listFiles, { ...m, pull_number: pr.data.number, per_page: 100 });
    expect(files.length).toBe(350);
    expect([files[0]?.filename, files[349]?.filename, files[349]?.patch]).toEqual(['src/f0000', 'src/f0349', '@@ -0,0 +1,1 @@\n+f0349']);
    // The pull request's counts are over all its files, not the first 300.
    const got = (await gh.admin.pulls.get({ ...m, pull_number: pr.data.number })).data;
    expect([got.changed_files, got.additions, got.deletions]).toEqual([350, 350, 0]);
    // getCommit lists 300 files a page, with Link headers for the rest; every page carries the whole commit's stats.
    const first = await gh.admin.repos.getCommit({ ...m, ref: commit.data.sha });
    expect([first.data.files?.length, first.data.files?.[299]?.filename, first.data.stats]).toEqual([300, 'src/f0299', { total: 350, additions: 350, deletions: 0 }]);
    expect(first.headers.link).toMatch(/[?&]page=2>; rel="next"/);
    const second = await gh.admin.repos.getCommit({ ...m, ref: commit.data.sha, page: 2 });
    expect([second.data.files?.length, second.data.files?.[49]?.filename, second.data.files?.[49]?.patch, second.data.stats?.total]).toEqual([50, 'src/f0349', '@@ -0,0 +1,1 @@\n+f0349', 350]);
    expect(second.headers.link).toMatch(/rel="prev"/);
    expect(second.headers.link).not.toMatch(/rel="next"/);
    const small = await gh.admin.repos.getCommit({ ...m, ref: commit.data.sha, per_page: 100, page: 4 });
    expect([small.data.files?.length, small.data.files?.[0]?.filename]).toEqual([50, 'src/f0300']);
    expect((await gh.admin.pulls.merge({ ...m, pull_number: pr.data.number })).data.merged).toBe(true);
    const merged = (await gh.admin.repos.getContent({ ...m, path: 'src' })).data as { name: string }[];
    expect(merged.length).toBe(350);
  });

  it('past the alignment budget, a commit\'s files still add up to its stats, page after page', async () => {
    const m = { owner: 'admin', repo: 'aligned' };
    await gh.admin.repos.createForAuthenticatedUser({ name: m.repo, auto_init: true });
    const main = (await gh.admin.git.getRef({ ...m, ref: 'heads/main' })).data.object.sha;
    // 30 files of 500 lines, each its own, then every other line changed: aligned, 250 and 250
    // a file; the budget (4M cells) aligns 16 of them and counts the rest unaligned (499 and 499).
    const lines = (file: number, odd: string): string => Array.from({ length: 500 }, (_, i) => `${file} line ${i}${i % 2 === 1 ? odd : ''}\n`).join('');
    const commitOf = async (odd: string, parent: string): Promise<string> => {
      const tree = await gh.admin.git.createTree({ ...m, tree: names(30, 'f').map((path, i) => ({ path, mode: '100644' as const, type: 'blob' as const, content: lines(i, odd) })) });
      return (await gh.admin.git.createCommit({ ...m, message: 'm', tree: tree.data.sha, parents: [parent] })).data.sha;
    };
    const second = await commitOf(' changed', await commitOf('', main));
    let additions = 0, deletions = 0, stats: { additions?: number; deletions?: number } | undefined;
    for (let page = 1; page <= 3; page++) {
      const got = (await gh.admin.repos.getCommit({ ...m, ref: second, per_page: 10, page })).data;
      stats = got.stats;
      for (const f of got.files ?? []) { additions += f.additions; deletions += f.deletions; }
    }
    expect([additions, deletions]).toEqual([stats?.additions, stats?.deletions]);
    // 16 aligned, 14 not.
    expect(stats?.additions).toBe(16 * 250 + 14 * 499);
  });

  it('a directory of 1,050 files: the contents API lists the first 1,000 (GitHub\'s limit), the trees API all of them', async () => {
    const d = { owner: 'admin', repo: 'wide' };
    await gh.admin.repos.createForAuthenticatedUser({ name: d.repo, auto_init: true });
    const empty = (await gh.admin.git.createBlob({ ...d, content: '' })).data.sha;
    const tree = await gh.admin.git.createTree({ ...d, tree: names(1050, 'f').map((path) => ({ path: `dir/${path}`, mode: '100644' as const, type: 'blob' as const, sha: empty })) });
    const main = (await gh.admin.git.getRef({ ...d, ref: 'heads/main' })).data.object.sha;
    const commit = await gh.admin.git.createCommit({ ...d, message: 'wide', tree: tree.data.sha, parents: [main] });
    const listing = (await gh.admin.repos.getContent({ ...d, path: 'dir', ref: commit.data.sha })).data as { name: string }[];
    expect(listing.length).toBe(1000);
    expect([listing[0]?.name, listing[999]?.name]).toEqual(['f0000', 'f0999']);
    const dir = (await gh.admin.git.getTree({ ...d, tree_sha: tree.data.tree[0]?.sha as string })).data;
    expect([dir.tree.length, dir.truncated]).toEqual([1050, false]);
  });
});

// ------------------------------------------------------------------ the walks, against the whole-map versions

describe('tree walks that skip what two trees share', () => {
  const ctx = memoryCtx();
  const put = (o: GitObject): string => putObject(ctx, 1, o);
  const file = (sha: string, mode = '100644'): FileEntry => ({ mode, type: 'blob', sha });
  /** Paths from a small alphabet, so trees share folders, files and folders meet under one name, and edits collide. */
  const randomFiles = (next: () => number, n: number): Map<string, FileEntry> => {
    const out = new Map<string, FileEntry>();
    for (let i = 0; i < n; i++) {
      const depth = 1 + Math.floor(next() * 3);
      const path = Array.from({ length: depth }, () => 'abc'[Math.floor(next() * 3)]).join('/');
      out.set(path, file(String(Math.floor(next() * 3)).repeat(40), next() < 0.1 ? '100755' : '100644'));
    }
    // Keep only maps a tree can hold (no path that is also another's folder).
    for (let clash = fileFolderClash(out); clash !== undefined; clash = fileFolderClash(out)) out.delete(clash);
    return out;
  };
  const changed = (files: Map<string, FileEntry>, next: () => number): Map<string, FileEntry> => {
    const out = new Map(files);
    for (const [path] of files) if (next() < 0.3) out.delete(path);
    for (const [path, f] of randomFiles(next, 4)) if (fileFolderClash(new Map([...out, [path, f]])) === undefined) out.set(path, f);
    return out;
  };

  it('diffTrees lists what diffFlat of the flattened trees lists, and stops at its limit', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const next = rng(seed);
      const a = randomFiles(next, 8), b = changed(a, next);
      const [ta, tb] = [buildTree(ctx, 1, a), buildTree(ctx, 1, b)];
      const expected = diffFlat(flatten(ctx.tree, 1, ta), flatten(ctx.tree, 1, tb));
      expect(diffTrees(ctx.tree, 1, ta, tb, 1000), `seed ${seed}`).toEqual({ changes: expected, complete: true });
      expect(diffTrees(ctx.tree, 1, null, tb, 1000).changes).toEqual(diffFlat(new Map(), b));
      if (expected.length > 1) expect(diffTrees(ctx.tree, 1, ta, tb, 1)).toEqual({ changes: [expected[0]], complete: false });
    }
  });

  it('mergeTrees merges as mergeFlat merges the flattened trees (conflicts too), written or only hashed', () => {
    let conflicts = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const next = rng(seed);
      const base = randomFiles(next, 8), ours = changed(base, next), theirs = changed(base, next);
      const [tb, to, tt] = [buildTree(ctx, 1, base), buildTree(ctx, 1, ours), buildTree(ctx, 1, theirs)];
      const expected = mergeFlat(base, ours, theirs);
      const dry = mergeTrees(ctx.tree, 1, tb, to, tt);
      const written = mergeTrees(ctx.tree, 1, tb, to, tt, put);
      if (expected === 'conflict') {
        conflicts++;
        expect([dry, written], `seed ${seed}`).toEqual(['conflict', 'conflict']);
      } else {
        expect(written, `seed ${seed}`).toBe(buildTree(ctx, 1, expected));
        expect(dry).toBe(written);
      }
    }
    // Both kinds were met.
    expect(conflicts).toBeGreaterThan(20);
    expect(conflicts).toBeLessThan(280);
  });

  it('TreeEditor makes the tree that editing the path map and building it again makes; a path through a file is its clash', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const next = rng(seed);
      const base = randomFiles(next, 8);
      const edit = new TreeEditor(ctx.tree, 1, buildTree(ctx, 1, base));
      const files = new Map(base);
      for (let i = 0; i < 3; i++) {
        const path = Array.from({ length: 1 + Math.floor(next() * 3) }, () => 'abc'[Math.floor(next() * 3)]).join('/');
        // What an item does: it replaces whatever is at its path, a file or a whole folder.
        for (const k of [...files.keys()]) if (k === path || k.startsWith(path + '/')) files.delete(k);
        if (next() < 0.25) edit.set(path, null);
        else {
          const f = file('9'.repeat(40));
          files.set(path, f);
          edit.set(path, f);
        }
      }
      const clash = edit.clash();
      if (fileFolderClash(files) === undefined) {
        expect(clash, `seed ${seed}`).toBeUndefined();
        expect(edit.write(put), `seed ${seed}`).toBe(buildTree(ctx, 1, files));
      } else expect(files.has(clash as string) && [...files.keys()].some((k) => k.startsWith(`${clash}/`)), `seed ${seed}: ${clash}`).toBe(true);
    }
  });
});
