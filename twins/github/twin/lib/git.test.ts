import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TwinContext } from '../../../../sdk/twin/index.js';
import {
  fromRaw, isDotGitmodules, personLine, rawContent, lineDiff, paint, pathProblem, putBlob, putObject, refConflict, setRef, sortEntries, treeEntryProblem, treeProblem,
  objectId, validRefName, walk, type CommitObject, type FileEntry, type TreeEntry,
} from './git.js';
import { utf8Encode } from './bytes.js';
import { buildTree, fileFolderClash, flatten, mergeFlat } from './flat.test-helper.js';
import { memoryCtx, rng } from './memory.test-helper.js';

function ancestors(ctx: TwinContext, sha: string): Set<string> {
  return new Set(walk(ctx.tree, 1, [sha]).map((c) => c.sha));
}

describe('paint (merge base, ahead, behind)', () => {
  it('agrees with brute-force ancestor sets on random histories with merges, equal clocks and skewed clocks', () => {
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const next = rng(seed);
      const ctx = memoryCtx();
      const tree = buildTree(ctx, 1, new Map());
      const shas: string[] = [];
      for (let i = 0; i < 40; i++) {
        const parents: string[] = [];
        if (shas.length > 0 && next() > 0.08) parents.push(shas[Math.floor(next() * shas.length)] as string);
        if (shas.length > 2 && next() > 0.7) parents.push(shas[Math.floor(next() * shas.length)] as string);
        // Seeds 1–3: every commit at the same instant (a frozen world clock); 4–6: clocks that go backwards.
        const date = seed <= 3 ? '2026-01-01T00:00:00Z' : new Date(Date.UTC(2026, 0, 1) + Math.floor(next() * 1e6) * 1000).toISOString().replace('.000', '');
        const who = { name: 'a', email: 'a@x', date };
        shas.push(putObject(ctx, 1, { t: 'commit', tree, parents: [...new Set(parents)], author: who, committer: who, message: `c${i}` }));
      }
      for (let k = 0; k < 60; k++) {
        const a = shas[Math.floor(next() * shas.length)] as string;
        const b = shas[Math.floor(next() * shas.length)] as string;
        const A = ancestors(ctx, a), B = ancestors(ctx, b);
        const p = paint(ctx.tree, 1, a, b);
        expect(p.ahead.map((c) => c.sha).sort()).toEqual([...B].filter((x) => !A.has(x)).sort());
        expect(p.behind).toBe([...A].filter((x) => !B.has(x)).length);
        const common = [...A].filter((x) => B.has(x));
        if (common.length === 0) expect(p.mergeBase).toBeUndefined();
        else {
          // A best common ancestor: common, and no other common commit descends from it.
          expect(common).toContain(p.mergeBase);
          expect(common.some((c) => c !== p.mergeBase && ancestors(ctx, c).has(p.mergeBase as string))).toBe(false);
        }
        // Parents before children in `ahead`.
        const pos = new Map(p.ahead.map((c, i) => [c.sha, i]));
        for (const c of p.ahead) for (const parent of (c.commit as CommitObject).parents) if (pos.has(parent)) expect(pos.get(parent)).toBeLessThan(pos.get(c.sha) as number);
      }
    }
  });
});

describe('trees and merges', () => {
  it('buildTree and flatten round-trip nested paths', () => {
    const ctx = memoryCtx();
    const blob = putBlob(ctx, 1, utf8Encode('x\n'));
    const files = new Map<string, FileEntry>([['a/b/c.txt', { mode: '100644', type: 'blob', sha: blob }], ['a/d.txt', { mode: '100755', type: 'blob', sha: blob }], ['e', { mode: '100644', type: 'blob', sha: blob }]]);
    const root = buildTree(ctx, 1, files);
    expect([...flatten(ctx.tree, 1, root)].sort()).toEqual([...files].sort());
  });

  it('mergeFlat takes one-sided changes and reports two-sided ones as a conflict', () => {
    const f = (sha: string): FileEntry => ({ mode: '100644', type: 'blob', sha });
    const base = new Map([['a', f('1')], ['b', f('2')]]);
    const ours = new Map([['a', f('9')], ['b', f('2')]]);
    const theirs = new Map([['a', f('1')], ['b', f('2')], ['c', f('3')]]);
    expect(mergeFlat(base, ours, theirs)).toEqual(new Map([['a', f('9')], ['b', f('2')], ['c', f('3')]]));
    expect(mergeFlat(base, ours, new Map([['a', f('8')], ['b', f('2')]]))).toBe('conflict');
    // Deleted on one side, unchanged on the other: deleted.
    expect(mergeFlat(base, new Map([['b', f('2')]]), base)).toEqual(new Map([['b', f('2')]]));
  });

  it('mergeFlat: a file on one side where the other side made a folder of the same name is a conflict, not a corrupt tree', () => {
    const f = (sha: string): FileEntry => ({ mode: '100644', type: 'blob', sha });
    const base = new Map([['x', f('1')]]);
    expect(mergeFlat(base, new Map([['x', f('1')], ['a', f('2')]]), new Map([['x', f('1')], ['a/b', f('3')]]))).toBe('conflict');
  });
});

/** A bare repository for asking the real git what it thinks. */
describe('names git refuses', () => {
  let dir: string;
  const git = (args: string[], input?: string): string =>
    execFileSync('git', args, { cwd: dir, input, env: { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1' }, stdio: ['pipe', 'pipe', 'pipe'] }).toString().trim();
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'twin-names-'));
    git(['init', '-q', '--bare']);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a tree entry name is refused exactly where `git fsck --strict` refuses it (.git in any case, NTFS and HFS+ spellings)', () => {
    const names = [
      '.git', '.GIT', '.Git', '.git.', '.git ', '.git. .', 'git~1', 'GIT~1', '.git::$INDEX_ALLOCATION', 'a\\.git', 'a\\GIT~1\\b', '.g\u200cit', '\ufeff.git', '.gi\u200dt',
      '.', '..', '...', '.gitmodules', '.gitignore', '.git~1', 'git~10', 'git', '.gi', 'x.git', '.github', 'ok.txt', 'h i', 'ü.txt', '😀',
    ];
    const blob = git(['hash-object', '-w', '--stdin'], 'x\n');
    const treeOf = new Map<string, string>();
    for (const name of names) treeOf.set(git(['mktree'], `100644 blob ${blob}\t${name}\n`), name);
    let report = '';
    try {
      git(['fsck', '--strict', '--no-dangling']);
    } catch (e) {
      report = String((e as { stderr: Buffer }).stderr);
    }
    const refusedByGit = new Set([...report.matchAll(/in tree ([0-9a-f]{40}): (\w+)/g)].map((m) => treeOf.get(m[1] as string)));
    for (const name of names) expect(treeEntryProblem(name) !== undefined, JSON.stringify(name)).toBe(refusedByGit.has(name));
    // What mktree cannot write: an empty name, a slash, a NUL.
    expect(treeEntryProblem('')).toMatch(/^emptyName/);
    expect(treeEntryProblem('a/b')).toMatch(/^fullPathname/);
    expect(treeEntryProblem('h\u0000i.txt')).toBeDefined();
    expect(pathProblem('d//e.txt')).toMatch(/^emptyName/);
    expect(pathProblem('f/.git/x')).toMatch(/^hasDotgit/);
    expect(pathProblem('src/ok.ts')).toBeUndefined();
  });

  it('a symlink is refused as .gitmodules exactly where `git fsck --strict` says gitmodulesSymlink (any case, NTFS short names and streams, HFS+ ignorables)', () => {
    const matches = [
      '.gitmodules', '.GITMODULES', '.GitModules', '.gitmodules.', '.gitmodules ', '.gitmodules. .', '.gitmodules:$DATA', 'gitmod~1', 'GITMOD~4', 'gitmod~1.',
      'gi7eba~1', 'GI7EBA~9', 'gi7eb~12', '~1234567', '.git\u200cmodules', '\ufeff.gitmodules', '.gitmodules\u200d', 'a\\.gitmodules', 'a\\b\\GITMOD~2',
    ];
    const others = [
      '.gitmodulesx', 'gitmodules', '.gitmodule', '.gitmodules\\a', 'gitmod~5', 'gitmod~1x', 'gitmod~11', 'gi7eba~12', '.gitmodules.x', '.gitignore', '.gitmodul\u212aes',
      '.gitmodules\u00a0', 'x.gitmodules', '~123456',
    ];
    for (const name of matches) expect(isDotGitmodules(name), JSON.stringify(name)).toBe(true);
    for (const name of others) expect(isDotGitmodules(name), JSON.stringify(name)).toBe(false);
    const blob = git(['hash-object', '-w', '--stdin'], '/etc/passwd');
    const treeOf = new Map<string, string>();
    for (const name of [...matches, ...others]) treeOf.set(git(['mktree'], `120000 blob ${blob}\t${name}\n`), name);
    let report = '';
    try {
      git(['fsck', '--strict', '--no-dangling']);
    } catch (e) {
      report = String((e as { stderr: Buffer }).stderr);
    }
    const refusedByGit = new Set([...report.matchAll(/in tree ([0-9a-f]{40}): gitmodulesSymlink: \.gitmodules is a symbolic link/g)].map((m) => treeOf.get(m[1] as string)));
    expect([...refusedByGit].sort()).toEqual([...matches].sort());
    const e = (name: string, mode: string): TreeEntry => ({ mode, type: 'blob', sha: blob, name });
    expect(treeProblem([e('.GITMODULES', '120000')])).toBe('gitmodulesSymlink: .gitmodules is a symbolic link');
    expect(treeProblem([e('.gitmodules', '100644')])).toBeUndefined();
    expect(treeEntryProblem('.gitmodules')).toBeUndefined();
  });

  it('entries out of git\'s byte order or named twice are refused, and sortEntries keeps git\'s order past U+FFFF', () => {
    const e = (name: string, type: TreeEntry['type'] = 'blob'): TreeEntry => ({ mode: type === 'tree' ? '040000' : '100644', type, sha: 'a'.repeat(40), name });
    expect(treeProblem([e('a'), e('b')])).toBeUndefined();
    expect(treeProblem([e('b'), e('a')])).toMatch(/^treeNotSorted/);
    expect(treeProblem([e('a'), e('a', 'tree')])).toMatch(/^duplicateEntries/);
    // UTF-8 byte order: U+FF01 (EF BC 81) before U+1F600 (F0 9F 98 80), though UTF-16 puts the emoji's surrogate first.
    const sorted = sortEntries([e('\u{1F600}'), e('\uFF01')]).map((x) => x.name);
    expect(sorted).toEqual(['\uFF01', '\u{1F600}']);
    // The same tree by git (mktree sorts what it is given) has the twin's id.
    const blob = git(['hash-object', '-w', '--stdin'], 'x\n');
    const entries = sortEntries([{ ...e('\u{1F600}'), sha: blob }, { ...e('\uFF01'), sha: blob }, { ...e('\uFF01x', 'tree'), sha: git(['mktree'], '') }]);
    const listing = entries.map((x) => `${x.mode} ${x.type} ${x.sha}\t${x.name}\n`).join('');
    expect(objectId({ t: 'tree', entries })).toBe(git(['mktree'], listing));
    expect(treeProblem(sortEntries([e('\u{1F600}'), e('\uFF01')]))).toBeUndefined();
  });

  it('ref names: valid exactly when `git check-ref-format` says so', () => {
    const refs = [
      'refs/heads/main', 'refs/heads/ok-branch/sub', 'refs/tags/v1.0.0', 'refs/heads/ü', 'refs/heads/a.lock/b', 'refs/heads/a.lock', 'refs/heads/.hidden',
      'refs/heads/a/.b', 'refs/heads/a..b', 'refs/heads/a b', 'refs/heads/a~b', 'refs/heads/a^b', 'refs/heads/a:b', 'refs/heads/a?b', 'refs/heads/a*b',
      'refs/heads/a[b', 'refs/heads/a\\b', 'refs/heads/a@{b', 'refs/heads/a@b', 'refs/heads/end.', 'refs/heads/end/', 'refs/heads//x', '/refs/heads/x',
      'refs/heads/a\u0001b', 'refs/heads/a\u007fb', '@', 'refs/heads/@', 'refs/heads/x.lockx', 'refs/heads/-dash',
    ];
    for (const ref of refs) {
      let gitSays = true;
      try {
        git(['check-ref-format', ref]);
      } catch {
        gitSays = false;
      }
      expect(validRefName(ref), JSON.stringify(ref)).toBe(gitSays);
    }
  });

  it('refConflict finds a ref that is a folder of the new one or sits inside it; setRef will not create either', () => {
    const ctx = memoryCtx();
    setRef(ctx, 1, 'refs/heads/ok-branch', 'a'.repeat(40));
    setRef(ctx, 1, 'refs/heads/deep/a/b', 'a'.repeat(40));
    setRef(ctx, 2, 'refs/heads/other', 'a'.repeat(40));
    expect(refConflict(ctx.tree, 1, 'refs/heads/ok-branch/sub')).toBe('refs/heads/ok-branch');
    expect(refConflict(ctx.tree, 1, 'refs/heads/deep')).toBe('refs/heads/deep/a/b');
    expect(refConflict(ctx.tree, 1, 'refs/heads/deep/a')).toBe('refs/heads/deep/a/b');
    expect(refConflict(ctx.tree, 1, 'refs/heads/ok-branch-2')).toBeUndefined();
    expect(refConflict(ctx.tree, 1, 'refs/heads/deep/ab')).toBeUndefined();
    expect(refConflict(ctx.tree, 1, 'refs/heads/other/x')).toBeUndefined();
    expect(() => setRef(ctx, 1, 'refs/heads/ok-branch/sub', 'b'.repeat(40))).toThrow(TypeError);
    expect(() => setRef(ctx, 1, 'refs/heads/bad..name', 'b'.repeat(40))).toThrow(TypeError);
    // Moving an existing ref is no creation.
    setRef(ctx, 1, 'refs/heads/ok-branch', 'b'.repeat(40));
  });

  it('lineDiff counts and prints a hunk', () => {
    const ctx = memoryCtx();
    const a = putBlob(ctx, 1, utf8Encode('one\ntwo\nthree\n'));
    const b = putBlob(ctx, 1, utf8Encode('one\n2\nthree\nfour\n'));
    const d = lineDiff(ctx.tree, 1, a, b);
    expect(d).toMatchObject({ additions: 2, deletions: 1 });
    expect(d.patch).toBe('@@ -1,3 +1,4 @@\n one\n-two\n+2\n three\n+four');
    const bin = putBlob(ctx, 1, Uint8Array.from([0, 1, 2]));
    expect(lineDiff(ctx.tree, 1, a, bin)).toEqual({ additions: 0, deletions: 0 });
  });

  it('lineDiff spends its alignment from a budget; past it, the counts are the changed lines, unaligned', () => {
    const ctx = memoryCtx();
    // Lines 1..20 against 1..20 with every other line changed: aligned, 10 and 10; unaligned, 19 and 19.
    const a = putBlob(ctx, 1, utf8Encode(Array.from({ length: 20 }, (_, i) => `${i}\n`).join('')));
    const b = putBlob(ctx, 1, utf8Encode(Array.from({ length: 20 }, (_, i) => (i % 2 === 1 ? `x${i}\n` : `${i}\n`)).join('')));
    const budget = { cells: 19 * 19 };
    expect(lineDiff(ctx.tree, 1, a, b, undefined, budget)).toMatchObject({ additions: 10, deletions: 10 });
    expect(budget.cells).toBe(0);
    expect(lineDiff(ctx.tree, 1, a, b, undefined, budget)).toEqual({ additions: 19, deletions: 19 });
  });
});

describe('hostile inputs cost time in proportion to their size', () => {
  it('fromRaw splits author lines as /^(.*) <(.*)> (\\d+) ([+-]\\d{4})$/ does, in one pass over 600 KB of " <>"', () => {
    const who = { name: ' <>'.repeat(200_000), email: 'e<x> 1', date: '2026-01-01T00:00:00Z' };
    const o: CommitObject = { t: 'commit', tree: 'a'.repeat(40), parents: [], author: who, committer: who, message: 'm', tz: ['+0200', '-0130'] };
    const raw = rawContent(o);
    expect(fromRaw('commit', raw, objectId(o))).toEqual(o);
    const bad = utf8Encode(`tree ${'a'.repeat(40)}\nauthor ${' <>'.repeat(200_000)}\ncommitter x <y> 1 +0000\n\nm`);
    expect(fromRaw('commit', bad, 'b'.repeat(40))).toBeUndefined();
    // Against the regex on short random lines (its cost only shows on long ones).
    const re = /^(.*) <(.*)> (\d+) ([+-]\d{4})$/;
    const alphabet = [' ', '<', '>', '1', '0', '+', '-', 'a', '\r', '\u2028'];
    const next = rng(7);
    for (let k = 0; k < 20_000; k++) {
      let v = '';
      for (let i = Math.floor(next() * 14); i > 0; i--) v += alphabet[Math.floor(next() * alphabet.length)];
      if (next() < 0.5) v += next() < 0.5 ? ' <x> 12 +0100' : '> 3 -0000';
      const m = re.exec(v);
      expect(personLine(v), JSON.stringify(v)).toEqual(m === null ? undefined : { name: m[1], email: m[2], seconds: m[3], tz: m[4] });
    }
  });

  it('isDotGitmodules and treeEntryProblem over 1 MB of "A\\" look at each part once', () => {
    const name = 'A\\'.repeat(500_000) + 'z';
    expect(isDotGitmodules(name)).toBe(false);
    expect(isDotGitmodules(name + '\\GITMOD~1. .')).toBe(true);
    expect(isDotGitmodules('.gitmodules '.repeat(100_000))).toBe(false);
    expect(treeEntryProblem(name, '120000')).toBeUndefined();
    expect(treeEntryProblem(name + '\\.GIT. ', '100644')).toBe("hasDotgit: contains '.git'");
    expect(treeEntryProblem(name + '\\.gitmodules:x', '120000')).toBe('gitmodulesSymlink: .gitmodules is a symbolic link');
  });

  it('fileFolderClash over a path 200,000 folders deep finds the file among its folders', { timeout: 5000 }, () => {
    const deep = 'a/'.repeat(200_000) + 'f';
    const file = 'a/'.repeat(1000).slice(0, -1);
    expect(fileFolderClash(new Map([[deep, 1], [file, 2]]))).toBe(file);
    expect(fileFolderClash(new Map([[deep, 1], ['a/b', 2]]))).toBeUndefined();
    // The first path (in the map's order) inside a file names it.
    expect(fileFolderClash(new Map([['x', 1], ['x/y/z', 1], ['y/z', 1], ['x/y', 1], ['y', 1]]))).toBe('x');
    expect(fileFolderClash(new Map([['y/z', 1], ['x', 1], ['x/y', 1], ['y', 1]]))).toBe('y');
  });

  it('walk and paint take the same order as the linear scans they replace, and an octopus of 30,000 parents (the scans took 54 s over it)', () => {
    // The scans as they were: the newest (then first queued) commit taken each step.
    const oldWalk = (ctx: TwinContext, start: string[]): string[] => {
      const out: string[] = [];
      const seen = new Set<string>();
      const queue: { sha: string; commit: CommitObject }[] = [];
      const push = (sha: string): void => {
        if (seen.has(sha)) return;
        seen.add(sha);
        const commit = ctx.tree.get<CommitObject>('obj', `1:${sha}`);
        if (commit !== undefined) queue.push({ sha, commit });
      };
      for (const s of start) push(s);
      while (queue.length > 0) {
        let best = 0;
        for (let i = 1; i < queue.length; i++) if ((queue[i] as { commit: CommitObject }).commit.committer.date > (queue[best] as { commit: CommitObject }).commit.committer.date) best = i;
        const next = queue.splice(best, 1)[0] as { sha: string; commit: CommitObject };
        out.push(next.sha);
        for (const p of next.commit.parents) push(p);
      }
      return out;
    };
    for (const seed of [11, 12, 13, 14]) {
      const next = rng(seed);
      const ctx = memoryCtx();
      const tree = buildTree(ctx, 1, new Map());
      const shas: string[] = [];
      for (let i = 0; i < 60; i++) {
        const parents = new Set<string>();
        for (let k = next() < 0.3 ? 3 : 1; k > 0 && shas.length > 0; k--) parents.add(shas[Math.floor(next() * shas.length)] as string);
        const date = new Date(Date.UTC(2026, 0, 1) + Math.floor(next() * (seed % 2 === 0 ? 3 : 1e6)) * 1000).toISOString().replace('.000', '');
        const who = { name: 'a', email: 'a@x', date };
        shas.push(putObject(ctx, 1, { t: 'commit', tree, parents: [...parents], author: who, committer: who, message: `c${i}` }));
      }
      for (let k = 0; k < 40; k++) {
        const a = shas[Math.floor(next() * shas.length)] as string, b = shas[Math.floor(next() * shas.length)] as string;
        expect(walk(ctx.tree, 1, [a, b]).map((c) => c.sha)).toEqual(oldWalk(ctx, [a, b]));
        const full = paint(ctx.tree, 1, a, b).ahead.map((c) => c.sha);
        for (const n of [1, 3, 20]) expect(paint(ctx.tree, 1, a, b, n).ahead.map((c) => c.sha)).toEqual(full.slice(Math.max(0, full.length - n)));
      }
    }
    const ctx = memoryCtx();
    const tree = buildTree(ctx, 1, new Map());
    const at = (s: number): { name: string; email: string; date: string } => ({ name: 'a', email: 'a@x', date: new Date(Date.UTC(2026, 0, 1) + s * 1000).toISOString().replace('.000', '') });
    const root = putObject(ctx, 1, { t: 'commit', tree, parents: [], author: at(0), committer: at(0), message: 'root' });
    const parents: string[] = [];
    for (let i = 1; i <= 30_000; i++) parents.push(putObject(ctx, 1, { t: 'commit', tree, parents: [root], author: at(i), committer: at(i), message: `p${i}` }));
    const oct = putObject(ctx, 1, { t: 'commit', tree, parents, author: at(40_000), committer: at(40_000), message: 'octopus' });
    const log = walk(ctx.tree, 1, [oct], 100_000).map((c) => c.sha);
    expect(log).toEqual([oct, ...parents.slice().reverse(), root]);
    const p = paint(ctx.tree, 1, root, oct);
    expect(p.mergeBase).toBe(root);
    expect(p.behind).toBe(0);
    expect(p.ahead.length).toBe(30_001);
    expect(p.ahead[p.ahead.length - 1]?.sha).toBe(oct);
    expect(paint(ctx.tree, 1, root, oct, 20).ahead.map((c) => c.sha)).toEqual(p.ahead.slice(-20).map((c) => c.sha));
    expect(paint(ctx.tree, 1, parents[0] as string, oct).ahead.length).toBe(30_000);
  });
});
