/**
 * Reference implementations over whole path maps (every path of a tree in one Map), for tests
 * only: the twin walks and edits trees instead (`diffTrees`, `mergeTrees`, `TreeEditor` in
 * git.ts), and the tests check those against these (`buildTree` writes a map's trees whole) on
 * random trees. Not part of the twin's bundle.
 */
import type { ReadTree, TwinContext } from '../../../../sdk/twin/index.js';
import { putObject, sortEntries, treeWalk, type FileChange, type FileEntry, type TreeEntry } from './git.js';

/**
 * A path of `files` that is also a folder of another (`a` beside `a/b`), or undefined. No tree
 * can hold both: git would see one name twice. The first such folder of the first path that
 * has one, found through a tree of the paths' parts, so a deep path costs its length, not the
 * square of it.
 */
export function fileFolderClash(files: Map<string, unknown>): string | undefined {
  interface Node { file: boolean; dirs?: Map<string, Node> }
  const root: Node = { file: false };
  for (const path of files.keys()) {
    let node = root;
    for (let from = 0; ;) {
      const slash = path.indexOf('/', from);
      const part = slash < 0 ? path.slice(from) : path.slice(from, slash);
      node.dirs ??= new Map();
      let next = node.dirs.get(part);
      if (next === undefined) node.dirs.set(part, (next = { file: false }));
      node = next;
      if (slash < 0) break;
      from = slash + 1;
    }
    node.file = true;
  }
  for (const path of files.keys()) {
    let node = root;
    let from = 0;
    for (let i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) {
      node = (node.dirs as Map<string, Node>).get(path.slice(from, i)) as Node;
      from = i + 1;
      if (node.file) return path.slice(0, i);
    }
  }
  return undefined;
}

/**
 * A tree as `path → file`, recursively (trees themselves are implied by paths).
 */
export function flatten(tree: ReadTree, repoId: number, treeSha: string, prefix = '', out = new Map<string, FileEntry>()): Map<string, FileEntry> {
  for (const { path, entry: e } of treeWalk(tree, repoId, treeSha, prefix)) {
    if (e.type !== 'tree') out.set(path, { mode: e.mode, type: e.type, sha: e.sha });
  }
  return out;
}

/** The files that differ between two path maps, in path order (UTF-16). */
export function diffFlat(a: Map<string, FileEntry>, b: Map<string, FileEntry>): FileChange[] {
  const out: FileChange[] = [];
  for (const [path, f] of b) {
    const old = a.get(path);
    if (old === undefined) out.push({ filename: path, status: 'added', sha: f.sha, previousSha: null, mode: f.mode });
    else if (old.sha !== f.sha) out.push({ filename: path, status: 'modified', sha: f.sha, previousSha: old.sha, mode: f.mode });
    else if (old.mode !== f.mode) out.push({ filename: path, status: 'changed', sha: f.sha, previousSha: old.sha, mode: f.mode });
  }
  for (const [path, f] of a) if (!b.has(path)) out.push({ filename: path, status: 'removed', sha: null, previousSha: f.sha, mode: f.mode });
  return out.sort((x, y) => (x.filename < y.filename ? -1 : x.filename > y.filename ? 1 : 0));
}

/**
 * A three-way merge at file level: a path changed on one side only takes that side; changed
 * on both sides to different contents is a conflict (the twin does not merge inside files).
 */
export function mergeFlat(base: Map<string, FileEntry>, ours: Map<string, FileEntry>, theirs: Map<string, FileEntry>): Map<string, FileEntry> | 'conflict' {
  const out = new Map<string, FileEntry>();
  const paths = new Set<string>([...base.keys(), ...ours.keys(), ...theirs.keys()]);
  const same = (x: FileEntry | undefined, y: FileEntry | undefined): boolean => (x === undefined ? y === undefined : y !== undefined && x.sha === y.sha && x.mode === y.mode);
  for (const p of paths) {
    const b = base.get(p), o = ours.get(p), t = theirs.get(p);
    let pick: FileEntry | undefined;
    if (same(o, t)) pick = o;
    else if (same(b, o)) pick = t;
    else if (same(b, t)) pick = o;
    else return 'conflict';
    if (pick !== undefined) out.set(p, pick);
  }
  // One side made a file `a` where the other made `a/b`: git calls it a conflict too.
  return fileFolderClash(out) === undefined ? out : 'conflict';
}

/** Writes the trees for a path map; answers the root tree's sha. */
export function buildTree(ctx: TwinContext, repoId: number, files: Map<string, FileEntry>): string {
  interface Dir { files: TreeEntry[]; dirs: Map<string, Dir> }
  const root: Dir = { files: [], dirs: new Map() };
  for (const [path, f] of files) {
    const parts = path.split('/');
    let dir = root;
    for (let i = 0; i < parts.length - 1; i++) {
      const name = parts[i] as string;
      let next = dir.dirs.get(name);
      if (next === undefined) dir.dirs.set(name, (next = { files: [], dirs: new Map() }));
      dir = next;
    }
    dir.files.push({ mode: f.mode, type: f.type, sha: f.sha, name: parts[parts.length - 1] as string });
  }
  // Each folder written after its subfolders, in the order a recursive writer would take, with a
  // stack of its own (a deep path would overflow the call stack).
  interface Frame { dir: Dir; entries: TreeEntry[]; subs: [string, Dir][]; next: number }
  const frame = (dir: Dir): Frame => ({ dir, entries: dir.files.slice(), subs: [...dir.dirs], next: 0 });
  const stack: Frame[] = [frame(root)];
  let written = '';
  for (;;) {
    const top = stack[stack.length - 1] as Frame;
    const sub = top.subs[top.next];
    if (sub !== undefined) {
      stack.push(frame(sub[1]));
      continue;
    }
    written = putObject(ctx, repoId, { t: 'tree', entries: sortEntries(top.entries) });
    stack.pop();
    const parent = stack[stack.length - 1];
    if (parent === undefined) return written;
    const [name] = parent.subs[parent.next++] as [string, Dir];
    parent.entries.push({ mode: '040000', type: 'tree', sha: written, name });
  }
}
