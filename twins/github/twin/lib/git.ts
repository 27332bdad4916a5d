/**
 * Git's object model over the twin's tree, with real object ids: an id is the SHA-1 of the
 * object as git stores it (`<type> <size>\0<content>`), so a blob's sha matches
 * `git hash-object` and a commit made here has the id git would give it.
 *
 * - `obj/<repo id>:<sha>` → GitObject (blobs keep their bytes as base64);
 * - `ref/<repo id>:<refs/heads/main>` → `{ sha }`.
 */
import type { ReadTree, TwinContext } from '../../../../sdk/twin/index.js';
import { base64Decode, base64DecodeCanonical, base64Encode, concat, fromHex, utf8Decode, utf8Encode } from './bytes.js';
import { gitObjectId } from './hash.js';

export interface Person {
  name: string;
  email: string;
  /** ISO 8601, whole seconds, UTC. */
  date: string;
}

export interface TreeEntry {
  /** As the API shows it: `100644`, `100755`, `040000`, `120000`, `160000`. */
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  sha: string;
  name: string;
}

export type GitObject =
  | { t: 'blob'; b64: string; size: number }
  | { t: 'tree'; entries: TreeEntry[] }
  | {
      t: 'commit'; tree: string; parents: string[]; author: Person; committer: Person; message: string;
      /** Generation number (1 + the parents' highest), kept beside the object, not hashed: history walks order by it. */
      gen?: number;
      /** Time zones of author and committer as git writes them (`+0200`), when not `+0000` (pushed commits). */
      tz?: [string, string];
      /**
       * Stored from a push webhook of the real repository behind the twin (`../root/`) without
       * being rebuilt to its id (its parents or message were guessed): the next refresh reads it again.
       */
      partial?: true;
    };

export type CommitObject = Extract<GitObject, { t: 'commit' }>;

export const SHA = /^[0-9a-f]{40}$/;

const objKey = (repoId: number, sha: string): string => `${repoId}:${sha}`;

export function getObject(tree: ReadTree, repoId: number, sha: string): GitObject | undefined {
  if (!SHA.test(sha)) return undefined;
  return tree.get<GitObject>('obj', objKey(repoId, sha));
}

/**
 * A reader of objects' type and size (a blob's `size`), each object read once per reader: a
 * blob's record holds its whole content, so a tree naming one blob many times reads it once.
 * Make one per request (objects never change, but a request may store new ones).
 */
export function objectInfo(tree: ReadTree, repoId: number): (sha: string) => { t: GitObject['t']; size: number } | undefined {
  const memo = new Map<string, { t: GitObject['t']; size: number } | undefined>();
  return (sha) => {
    if (memo.has(sha)) return memo.get(sha);
    const o = getObject(tree, repoId, sha);
    const info = o === undefined ? undefined : { t: o.t, size: o.t === 'blob' ? o.size : 0 };
    memo.set(sha, info);
    return info;
  };
}

export function getCommit(tree: ReadTree, repoId: number, sha: string): CommitObject | undefined {
  const o = getObject(tree, repoId, sha);
  return o?.t === 'commit' ? o : undefined;
}

function gitSeconds(date: string, tz = '+0000'): string {
  return `${Math.floor(Date.parse(date) / 1000)} ${tz}`;
}

function treeSortKey(e: TreeEntry): string {
  return e.type === 'tree' ? e.name + '/' : e.name;
}

/**
 * Compares names in git's order, the byte order of their UTF-8: code point order, which is
 * UTF-16's except that a surrogate (a code point past U+FFFF) sorts after U+E000–U+FFFF.
 */
function compareNames(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i), y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

function codePointRank(unit: number): number {
  return unit >= 0xd800 && unit <= 0xdfff ? unit + 0x2000 : unit >= 0xe000 ? unit - 0x800 : unit;
}

/** Entries in git's order (byte order of names, a tree's name compared as if it ended in `/`). */
export function sortEntries(entries: TreeEntry[]): TreeEntry[] {
  return entries.slice().sort((a, b) => compareNames(treeSortKey(a), treeSortKey(b)));
}

/** The object's content as git hashes it (without the `<type> <size>\0` header). */
export function rawContent(o: GitObject): Uint8Array {
  if (o.t === 'blob') return base64Decode(o.b64) ?? new Uint8Array(0);
  if (o.t === 'tree') {
    const parts: Uint8Array[] = [];
    for (const e of o.entries) {
      parts.push(utf8Encode(`${e.mode === '040000' ? '40000' : e.mode} ${e.name}\0`), fromHex(e.sha));
    }
    return concat(parts);
  }
  let text = `tree ${o.tree}\n`;
  for (const p of o.parents) text += `parent ${p}\n`;
  text += `author ${o.author.name} <${o.author.email}> ${gitSeconds(o.author.date, o.tz?.[0])}\n`;
  text += `committer ${o.committer.name} <${o.committer.email}> ${gitSeconds(o.committer.date, o.tz?.[1])}\n\n`;
  text += o.message;
  return utf8Encode(text);
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/**
 * An author or committer line's value (`Name <email> 1700000000 +0200`), split as
 * `/^(.*) <(.*)> (\d+) ([+-]\d{4})$/` would split it (the name up to the last ` <`, the
 * email up to the `> ` before the time), but in one pass: that regex backtracks quadratically
 * over a line of many ` <>`.
 */
export function personLine(value: string): { name: string; email: string; seconds: string; tz: string } | undefined {
  // `.` matches no line terminator, so no part of the regex would.
  if (/[\n\r\u2028\u2029]/.test(value)) return undefined;
  const n = value.length;
  // ` [+-]dddd` at the end.
  if (n < 6 || value[n - 6] !== ' ' || (value[n - 5] !== '+' && value[n - 5] !== '-')) return undefined;
  for (let i = n - 4; i < n; i++) if (!isDigit(value[i])) return undefined;
  // The seconds: every digit before it (the `> ` before them ends the email, so the run is whole).
  let start = n - 6;
  while (isDigit(value[start - 1])) start--;
  if (start === n - 6 || value[start - 1] !== ' ' || value[start - 2] !== '>') return undefined;
  const head = value.slice(0, start - 2);
  const lt = head.lastIndexOf(' <');
  if (lt < 0) return undefined;
  return { name: head.slice(0, lt), email: head.slice(lt + 2), seconds: value.slice(start, n - 6), tz: value.slice(n - 5) };
}

/**
 * A raw git object (as a pack carries it) in the twin's stored form, or undefined when the
 * stored form could not give the same id back (annotated tags, signed commits, extra headers):
 * such a push is refused rather than stored under a different id. `sha` is the id of `content`
 * (`rawId`), which the stored form must hash to.
 */
export function fromRaw(type: string, content: Uint8Array, sha: string): GitObject | undefined {
  let o: GitObject | undefined;
  // A blob's stored form is its bytes: it hashes to `sha` whenever `content` does, so it is not hashed again.
  if (type === 'blob') return { t: 'blob', b64: base64Encode(content), size: content.length };
  if (type === 'tree') {
    const entries: TreeEntry[] = [];
    let pos = 0;
    while (pos < content.length) {
      const space = content.indexOf(0x20, pos);
      const nul = content.indexOf(0, space + 1);
      if (space < 0 || nul < 0 || nul + 21 > content.length) return undefined;
      const rawMode = utf8Decode(content.subarray(pos, space));
      const mode = rawMode === '40000' ? '040000' : rawMode;
      const kind = mode === '040000' ? 'tree' : mode === '160000' ? 'commit' : ['100644', '100755', '120000'].includes(mode) ? 'blob' : undefined;
      if (kind === undefined) return undefined;
      let sha1hex = '';
      for (let i = nul + 1; i < nul + 21; i++) sha1hex += ((content[i] as number) < 16 ? '0' : '') + (content[i] as number).toString(16);
      entries.push({ mode, type: kind, sha: sha1hex, name: utf8Decode(content.subarray(space + 1, nul)) });
      pos = nul + 21;
    }
    o = { t: 'tree', entries };
  } else if (type === 'commit') {
    const text = utf8Decode(content);
    const split = text.indexOf('\n\n');
    if (split < 0) return undefined;
    const headers = text.slice(0, split).split('\n');
    const message = text.slice(split + 2);
    let tree: string | undefined;
    const parents: string[] = [];
    let author: Person | undefined, committer: Person | undefined;
    const tz: [string, string] = ['+0000', '+0000'];
    for (const h of headers) {
      const sp = h.indexOf(' ');
      const key = h.slice(0, sp), value = h.slice(sp + 1);
      if (key === 'tree') tree = value;
      else if (key === 'parent') parents.push(value);
      else if (key === 'author' || key === 'committer') {
        const m = personLine(value);
        if (m === undefined) return undefined;
        const p: Person = { name: m.name, email: m.email, date: new Date(Number(m.seconds) * 1000).toISOString().replace('.000Z', 'Z') };
        if (key === 'author') { author = p; tz[0] = m.tz; } else { committer = p; tz[1] = m.tz; }
      } else return undefined;
    }
    if (tree === undefined || author === undefined || committer === undefined) return undefined;
    o = { t: 'commit', tree, parents, author, committer, message };
    if (tz[0] !== '+0000' || tz[1] !== '+0000') o.tz = tz;
  }
  return o !== undefined && objectId(o) === sha ? o : undefined;
}

// ------------------------------------------------------------------ names git accepts in a tree

/** Code points HFS+ ignores in a file name (git's `next_hfs_char`): `.g\u200cit` opens `.git` there. */
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g;

/**
 * Whether a name opens the repository's own `.git` on some file system, as git's fsck judges
 * it (`is_hfs_dotgit`, `is_ntfs_dotgit`): `.git` in any letter case; on HFS+ with ignorable
 * code points inside; on NTFS followed by dots or spaces (`.git.`, `.git `), as its short name
 * `git~1`, or with a stream (`.git::$INDEX_ALLOCATION`), where a backslash separates folders.
 */
function isDotGit(name: string): boolean {
  if (/^\.[gG][iI][tT]$/.test(name.replace(HFS_IGNORED, ''))) return true;
  return name.split('\\').some((part) => /^(?:\.[gG][iI][tT]|[gG][iI][tT]~1)[. ]*(?::|$)/.test(part));
}

/** `text` with ASCII capitals lowered and nothing else touched, as C's `tolower` in git's checks. */
function asciiLower(text: string): string {
  return text.replace(/[A-Z]+/g, (s) => s.toLowerCase());
}

/**
 * Whether NTFS may open `name` as `.<needle>` (git's `is_ntfs_dot_generic`): `.<needle>` in any
 * case followed only by dots and spaces (or a `:` stream); the short name `<needle's first
 * six>~1` to `~4`; or the fallback short name, up to six characters of `shortPrefix` then `~`
 * and digits, eight characters in all (so even `~1234567`, as in git).
 */
function isNtfsDot(low: string, at: number, needle: string, shortPrefix: string): boolean {
  // Only the dots and spaces right after the name are read, so each call costs what it matches.
  const onlyDotsAndSpaces = (from: number): boolean => {
    let i = from;
    while (low[i] === '.' || low[i] === ' ') i++;
    return i >= low.length || low[i] === ':';
  };
  if (low.startsWith('.' + needle, at)) return onlyDotsAndSpaces(at + needle.length + 1);
  const c7 = low[at + 7];
  if (low.startsWith(needle.slice(0, 6) + '~', at) && c7 !== undefined && c7 >= '1' && c7 <= '4') return onlyDotsAndSpaces(at + 8);
  let sawTilde = false;
  for (let i = 0; i < 8; i++) {
    const c = low[at + i];
    if (c === undefined) return false;
    if (sawTilde) {
      if (c < '0' || c > '9') return false;
    } else if (c === '~') {
      const d = low[at + ++i];
      if (d === undefined || d < '1' || d > '9') return false;
      sawTilde = true;
    } else if (i >= 6 || c !== shortPrefix[i]) return false;
  }
  return onlyDotsAndSpaces(at + 8);
}

/**
 * Whether a name is `.gitmodules` on some file system, as git's fsck judges it
 * (`is_hfs_dotgitmodules`, `is_ntfs_dotgitmodules`, and each part after a backslash):
 * `.gitmodules` in any letter case; on HFS+ with ignorable code points inside; on NTFS with
 * trailing dots or spaces, a `:` stream, or as a short name (`gitmod~1`, `gi7eba~1`).
 */
export function isDotGitmodules(name: string): boolean {
  if (asciiLower(name.replace(HFS_IGNORED, '')) === '.gitmodules') return true;
  // Lowered once; then the whole name, and what follows each backslash (to the end:
  // `.gitmodules\x` is no match), each looked at only as far as the NTFS rules read.
  const low = asciiLower(name);
  for (let i = -1; ; i = low.indexOf('\\', i + 1)) {
    if (isNtfsDot(low, i + 1, 'gitmodules', 'gi7eba')) return true;
    if (low.indexOf('\\', i + 1) < 0) return false;
  }
}

/**
 * Why git would refuse `name` as a tree entry, in `git fsck`'s words, or undefined when it
 * takes it. The one rule for every writer of trees (the contents and trees APIs, pushes): an
 * entry git refuses makes a repository that `git clone` cannot check out or fsck flags. With
 * `mode`, the entry's mode is judged too (`.gitmodules` may not be a symlink).
 */
export function treeEntryProblem(name: string, mode?: string): string | undefined {
  if (name === '') return 'emptyName: contains empty pathname';
  if (name.includes('\0')) return 'badTree: contains a NUL in a name';
  if (name.includes('/')) return 'fullPathname: contains full pathnames';
  if (name === '.') return "hasDot: contains '.'";
  if (name === '..') return "hasDotdot: contains '..'";
  if (isDotGit(name)) return "hasDotgit: contains '.git'";
  // git reads .gitmodules from a checkout; a symlink there could point it anywhere (CVE-2018-11235).
  if (mode === '120000' && isDotGitmodules(name)) return 'gitmodulesSymlink: .gitmodules is a symbolic link';
  return undefined;
}

/**
 * The deepest path git will walk: `core.maxTreeDepth`'s default (a path of 4,096 parts). A
 * deeper one is refused before any tree is built or read for it.
 */
export const MAX_PATH_DEPTH = 4096;

/** Why git would refuse a `/`-separated path (each part a tree entry), or undefined. */
export function pathProblem(path: string): string | undefined {
  const parts = path.split('/');
  if (parts.length > MAX_PATH_DEPTH) return `treeTooDeep: more than ${MAX_PATH_DEPTH} folders deep`;
  for (const part of parts) {
    const problem = treeEntryProblem(part);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/**
 * Why `git fsck` would refuse a tree with these entries (as a pack brings them), or undefined:
 * a name it refuses, or entries out of git's order or named twice (a file and a folder too).
 */
export function treeProblem(entries: TreeEntry[]): string | undefined {
  const names = new Set<string>();
  let last: string | undefined;
  for (const e of entries) {
    const problem = treeEntryProblem(e.name, e.mode);
    if (problem !== undefined) return problem;
    if (names.has(e.name)) return 'duplicateEntries: contains duplicate file entries';
    names.add(e.name);
    const key = treeSortKey(e);
    if (last !== undefined && compareNames(last, key) > 0) return 'treeNotSorted: not properly sorted';
    last = key;
  }
  return undefined;
}

/**
 * The raw form of a stored object, for a pack; a blob stored as plain base64 (as the twin writes
 * it) brings that text too, which the pack's base64 answer copies instead of encoding again.
 */
export function toRaw(o: GitObject): { type: 'blob' | 'tree' | 'commit'; content: Uint8Array; b64?: string } {
  if (o.t === 'blob') {
    const content = base64DecodeCanonical(o.b64);
    if (content !== undefined) return { type: 'blob', content, b64: o.b64 };
  }
  return { type: o.t, content: rawContent(o) };
}

export function objectId(o: GitObject): string {
  return gitObjectId(o.t, rawContent(o));
}

/**
 * Stores an object (once) and answers its id. `knownId` spares hashing it again when the caller
 * has just computed it from the same raw content (a pushed object, a blob from bytes).
 */
export function putObject(ctx: TwinContext, repoId: number, o: GitObject, knownId?: string): string {
  const sha = knownId ?? objectId(o);
  if (o.t === 'commit' && o.gen === undefined) {
    let gen = 0;
    for (const p of o.parents) gen = Math.max(gen, getCommit(ctx.tree, repoId, p)?.gen ?? 0);
    o = { ...o, gen: gen + 1 };
  }
  if (ctx.tree.get('obj', objKey(repoId, sha)) === undefined) ctx.tree.put('obj', objKey(repoId, sha), o);
  return sha;
}

export function putBlob(ctx: TwinContext, repoId: number, bytes: Uint8Array): string {
  return putObject(ctx, repoId, { t: 'blob', b64: base64Encode(bytes), size: bytes.length }, gitObjectId('blob', bytes));
}

export function blobBytes(tree: ReadTree, repoId: number, sha: string): Uint8Array | undefined {
  const o = getObject(tree, repoId, sha);
  return o?.t === 'blob' ? base64Decode(o.b64) : undefined;
}

// ------------------------------------------------------------------ refs

export function getRef(tree: ReadTree, repoId: number, ref: string): string | undefined {
  return tree.get<{ sha: string }>('ref', `${repoId}:${ref}`)?.sha;
}

/**
 * Whether a name is a valid git ref name, by `git check-ref-format`'s rules: no part empty,
 * starting with `.` or ending with `.lock`; no `..`, `@{`, control characters, space, `~^:?*[\\`;
 * not `@`, not ending with `/` or `.`. GitHub also keeps names to 255 characters.
 */
export function validRefName(ref: string): boolean {
  if (ref.length === 0 || ref.length > 255) return false;
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(ref)) return false;
  if (ref.includes('..') || ref.includes('@{') || ref === '@') return false;
  if (ref.endsWith('.')) return false;
  return ref.split('/').every((p) => p !== '' && !p.startsWith('.') && !p.endsWith('.lock'));
}

/**
 * The ref that keeps `ref` from being created, or undefined: one that is a folder of it
 * (`refs/heads/a` for `refs/heads/a/b`) or that it would be a folder of. Git keeps refs as
 * files, so it refuses to have both, and a clone of a repository with both fails.
 */
export function refConflict(tree: ReadTree, repoId: number, ref: string): string | undefined {
  for (let i = ref.indexOf('/'); i >= 0; i = ref.indexOf('/', i + 1)) {
    if (getRef(tree, repoId, ref.slice(0, i)) !== undefined) return ref.slice(0, i);
  }
  // `0` follows `/`: the range holds exactly the refs under `ref/`.
  const under = tree.list<{ sha: string }>('ref', { after: `${repoId}:${ref}/`, before: `${repoId}:${ref}0`, limit: 1 }).items[0];
  return under === undefined ? undefined : under.id.slice(String(repoId).length + 1);
}

/**
 * Points a ref at a commit. Creating one is checked here too, whoever creates it: a name git
 * refuses, or one beside an existing ref of the same path (`refConflict`), is a programmer's
 * error (a TypeError), since every route checks first and answers in its own words.
 */
export function setRef(ctx: TwinContext, repoId: number, ref: string, sha: string): void {
  if (ctx.tree.get('ref', `${repoId}:${ref}`) === undefined) {
    if (!validRefName(ref)) throw new TypeError(`setRef: ${JSON.stringify(ref)} is not a valid ref name`);
    const conflict = refConflict(ctx.tree, repoId, ref);
    if (conflict !== undefined) throw new TypeError(`setRef: ${ref} cannot be created beside ${conflict}`);
  }
  ctx.tree.put('ref', `${repoId}:${ref}`, { sha });
}

export function deleteRef(ctx: TwinContext, repoId: number, ref: string): void {
  ctx.tree.delete('ref', `${repoId}:${ref}`);
}

/** Every ref of a repository, in name order (`prefix` narrows to e.g. `refs/heads/`). */
export function listRefs(tree: ReadTree, repoId: number, prefix = 'refs/'): { ref: string; sha: string }[] {
  const out: { ref: string; sha: string }[] = [];
  let after = `${repoId}:${prefix}`;
  // `after` is exclusive, so a ref named exactly `prefix` is looked up on its own.
  const exact = tree.get<{ sha: string }>('ref', after);
  if (exact !== undefined) out.push({ ref: prefix, sha: exact.sha });
  const before = `${repoId}:${prefix}\uffff`;
  for (;;) {
    const page = tree.list<{ sha: string }>('ref', { after, before, limit: 100 });
    for (const item of page.items) out.push({ ref: item.id.slice(String(repoId).length + 1), sha: item.value.sha });
    const last = page.items[page.items.length - 1];
    if (!page.hasMore || last === undefined) break;
    after = last.id;
  }
  return out;
}

/** A ref name, branch, tag or commit sha → a commit sha (undefined when it names nothing). */
export function resolveCommitish(tree: ReadTree, repoId: number, name: string): string | undefined {
  if (name === '') return undefined;
  const candidates = name.startsWith('refs/') ? [name] : [`refs/heads/${name}`, `refs/tags/${name}`, `refs/${name}`];
  for (const ref of candidates) {
    const sha = getRef(tree, repoId, ref);
    if (sha !== undefined) return sha;
  }
  if (SHA.test(name) && getCommit(tree, repoId, name) !== undefined) return name;
  if (/^[0-9a-f]{7,39}$/.test(name)) {
    const page = tree.list<GitObject>('obj', { after: `${repoId}:${name}`, before: `${repoId}:${name}g`, limit: 2 });
    const only = page.items.length === 1 ? page.items[0] : undefined;
    if (only !== undefined && only.value.t === 'commit') return only.id.slice(String(repoId).length + 1);
  }
  return undefined;
}

// ------------------------------------------------------------------ trees as path maps

export interface FileEntry {
  mode: string;
  type: 'blob' | 'commit';
  sha: string;
}

/** The id of the empty tree, which git writes as no entry at all in a folder it rewrites. */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/**
 * A reader of trees' entries, each tree read once per reader: a tree may name one subtree
 * thousands of times (a pushed "tree bomb" does), and a walk reads it once. Make one per request.
 */
export function treeReader(tree: ReadTree, repoId: number): (sha: string) => TreeEntry[] | undefined {
  const memo = new Map<string, TreeEntry[] | undefined>();
  return (sha) => {
    if (memo.has(sha)) return memo.get(sha);
    const o = getObject(tree, repoId, sha);
    const entries = o?.t === 'tree' ? o.entries : undefined;
    memo.set(sha, entries);
    return entries;
  };
}

/**
 * Thrown by a walk of trees that ran past its budget of entries (`TREE_WORK_LIMIT`): a
 * pushed tree may name one subtree many times over (100 names a level, three levels: a 1 KB
 * push, a million paths), so a walk that must see every path is bounded, and a route answers
 * it as GitHub answers a diff it gives up on.
 */
export class TreeTooLarge extends Error {
  readonly code = 'tree_too_large';
}

/**
 * The entries one request's walk of trees may look at: far above a real repository's work
 * (a diff or merge reads only the folders that changed; linux's whole tree is ~90,000 files),
 * and in V8 under a second of walking (0.7 s to flatten a million paths).
 */
export const TREE_WORK_LIMIT = 1_000_000;

/** Counts entries looked at; throws TreeTooLarge past its limit. */
export class TreeBudget {
  constructor(private left = TREE_WORK_LIMIT) {}
  spend(n: number): void {
    this.left -= n;
    if (this.left < 0) throw new TreeTooLarge('too many tree entries to walk');
  }
}

/**
 * A tree's entries depth first (a folder, then what is in it), each with its path below
 * `prefix`, walked with a stack of its own: a deep tree would overflow the call stack. With
 * `recursive` false, only the tree's own entries. Lazy: a caller that stops early (a capped
 * listing) reads no further.
 */
export function* treeWalk(tree: ReadTree, repoId: number, treeSha: string, prefix = '', recursive = true): Generator<{ path: string; entry: TreeEntry }> {
  const read = treeReader(tree, repoId);
  const root = read(treeSha);
  if (root === undefined) return;
  const stack: { entries: TreeEntry[]; next: number; prefix: string }[] = [{ entries: root, next: 0, prefix }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as { entries: TreeEntry[]; next: number; prefix: string };
    const entry = top.entries[top.next++];
    if (entry === undefined) {
      stack.pop();
      continue;
    }
    const path = top.prefix + entry.name;
    yield { path, entry };
    if (recursive && entry.type === 'tree') {
      const entries = read(entry.sha);
      if (entries !== undefined) stack.push({ entries, next: 0, prefix: path + '/' });
    }
  }
}

interface EditDir {
  /** The stored tree this folder was, while unread (and unedited). */
  sha?: string;
  /** Its entries by name once read; a name may hold a file and a folder until `clash` is asked. */
  slots?: Map<string, { file?: TreeEntry; dir?: EditDir }>;
}

/**
 * Edits a tree without flattening it: each `set` puts an entry at a path, or removes what is
 * there, replacing whatever was at the path (a file, or a whole folder); `write` writes again
 * only the folders on edited paths, and every other subtree keeps its id, unread. So a commit
 * to one file of a huge (or hostile) tree costs that file's folders, not the whole tree. A path
 * through a file (`a/b` where `a` is one) stays until `clash` is asked, as an edit that removes
 * `a` afterwards makes it sound.
 */
export class TreeEditor {
  private readonly read: (sha: string) => TreeEntry[] | undefined;
  private readonly root: EditDir;
  constructor(tree: ReadTree, repoId: number, rootSha: string | null) {
    this.read = treeReader(tree, repoId);
    this.root = rootSha === null ? { slots: new Map() } : { sha: rootSha };
  }

  private open(dir: EditDir): Map<string, { file?: TreeEntry; dir?: EditDir }> {
    if (dir.slots === undefined) {
      dir.slots = new Map();
      for (const e of this.read(dir.sha as string) ?? []) {
        const slot = dir.slots.get(e.name) ?? {};
        if (e.type === 'tree') slot.dir = { sha: e.sha };
        else slot.file = e;
        dir.slots.set(e.name, slot);
      }
    }
    return dir.slots;
  }

  /** Puts an entry (a blob, a submodule or a whole tree) at `path`, or removes what is there (`null`). */
  set(path: string, entry: Omit<TreeEntry, 'name'> | null): void {
    const parts = path.split('/');
    let dir = this.root;
    for (let i = 0; i < parts.length - 1; i++) {
      const slots = this.open(dir);
      let slot = slots.get(parts[i] as string);
      if (slot === undefined) slots.set(parts[i] as string, (slot = {}));
      dir = slot.dir ??= { slots: new Map() };
    }
    const name = parts[parts.length - 1] as string;
    const slots = this.open(dir);
    if (entry === null) slots.delete(name);
    else slots.set(name, entry.type === 'tree' ? { dir: { sha: entry.sha } } : { file: { mode: entry.mode, type: entry.type, sha: entry.sha, name } });
  }

  /** A path that is both a file and a folder with files in it (git would see one name twice), or undefined. */
  clash(): string | undefined {
    const stack: { dir: EditDir; prefix: string }[] = [{ dir: this.root, prefix: '' }];
    for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
      for (const [name, slot] of top.dir.slots ?? []) {
        if (slot.dir === undefined) continue;
        if (slot.file !== undefined && this.hasFiles(slot.dir)) return top.prefix + name;
        if (slot.dir.slots !== undefined) stack.push({ dir: slot.dir, prefix: `${top.prefix}${name}/` });
      }
    }
    return undefined;
  }

  private hasFiles(dir: EditDir): boolean {
    const stack = [dir];
    for (let d = stack.pop(); d !== undefined; d = stack.pop()) {
      if (d.slots === undefined) {
        if (d.sha !== EMPTY_TREE) return true;
        continue;
      }
      for (const slot of d.slots.values()) {
        if (slot.file !== undefined) return true;
        if (slot.dir !== undefined) stack.push(slot.dir);
      }
    }
    return false;
  }

  /**
   * Writes the edited folders with `put`, each after its subfolders (a stack of its own: paths
   * go 4,096 folders deep); a folder left empty is no entry, as in git. Answers the root's id.
   */
  write(put: (o: GitObject) => string): string {
    interface Frame { entries: TreeEntry[]; subs: [string, EditDir][]; next: number }
    const frame = (dir: EditDir): Frame => {
      const entries: TreeEntry[] = [];
      const subs: [string, EditDir][] = [];
      for (const [name, slot] of dir.slots ?? []) {
        if (slot.file !== undefined) entries.push(slot.file);
        if (slot.dir === undefined) continue;
        if (slot.dir.slots !== undefined) subs.push([name, slot.dir]);
        else if (slot.dir.sha !== EMPTY_TREE) entries.push({ mode: '040000', type: 'tree', sha: slot.dir.sha as string, name });
      }
      return { entries, subs, next: 0 };
    };
    if (this.root.slots === undefined) return this.root.sha as string;
    const stack: Frame[] = [frame(this.root)];
    for (;;) {
      const top = stack[stack.length - 1] as Frame;
      const sub = top.subs[top.next];
      if (sub !== undefined) {
        stack.push(frame(sub[1]));
        continue;
      }
      stack.pop();
      const parent = stack[stack.length - 1];
      if (parent === undefined) return put({ t: 'tree', entries: sortEntries(top.entries) });
      const [name] = parent.subs[parent.next++] as [string, EditDir];
      if (top.entries.length > 0) parent.entries.push({ mode: '040000', type: 'tree', sha: put({ t: 'tree', entries: sortEntries(top.entries) }), name });
    }
  }
}

/** The first folder of `path` that is a file in the tree (`a` for `a/b` where `a` is a file), or undefined. */
export function fileAbove(tree: ReadTree, repoId: number, treeSha: string, path: string): string | undefined {
  const parts = path.split('/');
  let sha = treeSha;
  for (let i = 0; i < parts.length - 1; i++) {
    const o = getObject(tree, repoId, sha);
    const e = o?.t === 'tree' ? o.entries.find((x) => x.name === parts[i]) : undefined;
    if (e === undefined) return undefined;
    if (e.type !== 'tree') return parts.slice(0, i + 1).join('/');
    sha = e.sha;
  }
  return undefined;
}

/** The entry at a path inside a tree (the root itself for `''`). */
export function entryAt(tree: ReadTree, repoId: number, treeSha: string, path: string): TreeEntry | undefined {
  return pathInTrees(tree, repoId, path)(treeSha);
}

/**
 * `entryAt` for one path in many trees, as a history walk asks it: each tree read once per
 * lookup, so a commit's tree looked up as a commit and again as its child's parent, and the
 * subtrees commits share, are decoded once. Make one per request.
 */
export function pathInTrees(tree: ReadTree, repoId: number, path: string): (treeSha: string) => TreeEntry | undefined {
  const parts = path === '' ? [] : path.split('/');
  // memos[i]: a tree at depth i, by its id → the entry `parts[i..]` names under it.
  const memos = parts.map(() => new Map<string, TreeEntry | undefined>());
  return (treeSha) => {
    if (parts.length === 0) return { mode: '040000', type: 'tree', sha: treeSha, name: '' };
    // Down the path until a tree already looked up, a missing part or the end; then every tree
    // passed on the way learns the answer. (A loop, not recursion: paths go 4,096 folders deep.)
    const passed: string[] = [];
    let sha = treeSha;
    let found: TreeEntry | undefined;
    for (let depth = 0; ; depth++) {
      const memo = memos[depth] as Map<string, TreeEntry | undefined>;
      if (memo.has(sha)) {
        found = memo.get(sha);
        break;
      }
      passed.push(sha);
      const o = getObject(tree, repoId, sha);
      const entry = o?.t === 'tree' ? o.entries.find((e) => e.name === parts[depth]) : undefined;
      if (entry === undefined || depth === parts.length - 1) {
        found = entry;
        break;
      }
      sha = entry.sha;
    }
    passed.forEach((at, depth) => (memos[depth] as Map<string, TreeEntry | undefined>).set(at, found));
    return found;
  };
}

// ------------------------------------------------------------------ history

/**
 * A binary heap: `pop` answers the item `first` puts before all others. `first` must be a strict
 * total order (the walks below break ties by the order items were pushed in).
 */
class Heap<T> {
  private readonly items: T[] = [];
  constructor(private readonly first: (a: T, b: T) => boolean) {}
  get size(): number {
    return this.items.length;
  }
  push(item: T): void {
    const a = this.items;
    let i = a.push(item) - 1;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (!this.first(a[i] as T, a[up] as T)) break;
      [a[i], a[up]] = [a[up] as T, a[i] as T];
      i = up;
    }
  }
  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1, r = l + 1;
        let best = i;
        if (l < a.length && this.first(a[l] as T, a[best] as T)) best = l;
        if (r < a.length && this.first(a[r] as T, a[best] as T)) best = r;
        if (best === i) break;
        [a[i], a[best]] = [a[best] as T, a[i] as T];
        i = best;
      }
    }
    return top;
  }
}

/** Commits reachable from `start`, newest committer date first (git log's default walk). */
export function walk(tree: ReadTree, repoId: number, start: string[], limit = 10_000, stopAt?: Set<string>): { sha: string; commit: CommitObject }[] {
  const out: { sha: string; commit: CommitObject }[] = [];
  const seen = new Set<string>();
  // Newest first; a tie keeps discovery order (children before parents).
  const queue = new Heap<{ sha: string; commit: CommitObject; seq: number }>((a, b) =>
    a.commit.committer.date !== b.commit.committer.date ? a.commit.committer.date > b.commit.committer.date : a.seq < b.seq);
  let seq = 0;
  const push = (sha: string): void => {
    if (seen.has(sha) || stopAt?.has(sha)) return;
    seen.add(sha);
    const commit = getCommit(tree, repoId, sha);
    if (commit !== undefined) queue.push({ sha, commit, seq: seq++ });
  };
  for (const s of start) push(s);
  while (queue.size > 0 && out.length < limit) {
    const next = queue.pop() as { sha: string; commit: CommitObject; seq: number };
    out.push({ sha: next.sha, commit: next.commit });
    for (const p of next.commit.parents) push(p);
  }
  return out;
}

export interface Painted {
  /** The newest commit reachable from both, if any. */
  mergeBase: string | undefined;
  /** Commits reachable from `head` but not from `base`, oldest first. */
  ahead: { sha: string; commit: CommitObject }[];
  /** How many commits are reachable from `base` but not from `head`. */
  behind: number;
}

/**
 * Paints history from both tips at once, newest committer date first, as git's merge-base
 * does: a commit reached from both sides is common and so are all its ancestors, and the walk
 * stops once only common commits are left. The cost is the commits since the sides diverged,
 * not the whole history.
 *
 * With `newest`, only the newest `newest` commits of `ahead` are wanted (a push event's list):
 * the walk stops once they are known, and `mergeBase` and `behind` are not computed (undefined
 * and 0). Commits are taken in generation order, so a commit's flags are final when taken and
 * the ones ahead come out newest first.
 */
export function paint(tree: ReadTree, repoId: number, base: string, head: string, newest?: number): Painted {
  const BASE = 1, HEAD = 2, BOTH = 3;
  const flags = new Map<string, number>();
  const commits = new Map<string, CommitObject>();
  // Highest generation first: every descendant in reach is painted before its ancestors, so a
  // commit's flags are final when it is taken.
  const later = (a: string, b: string): boolean => {
    const x = commits.get(a) as CommitObject, y = commits.get(b) as CommitObject;
    return (x.gen ?? 0) !== (y.gen ?? 0) ? (x.gen ?? 0) > (y.gen ?? 0) : x.committer.date > y.committer.date;
  };
  // A commit may be queued more than once (once per new flag); ties go in the order queued.
  const queue = new Heap<{ sha: string; seq: number }>((a, b) => (later(a.sha, b.sha) ? true : later(b.sha, a.sha) ? false : a.seq < b.seq));
  let seq = 0;
  /** How many times each commit is queued, and how many queued entries are not yet common. */
  const queued = new Map<string, number>();
  let uncommon = 0;
  const load = (sha: string): CommitObject | undefined => {
    let c = commits.get(sha);
    if (c === undefined) {
      c = getCommit(tree, repoId, sha);
      if (c !== undefined) commits.set(sha, c);
    }
    return c;
  };
  const mark = (sha: string, f: number): void => {
    const old = flags.get(sha) ?? 0;
    if ((old | f) === old || load(sha) === undefined) return;
    const now = old | f;
    flags.set(sha, now);
    const q = queued.get(sha) ?? 0;
    if (now === BOTH) uncommon -= q;
    else uncommon++;
    queued.set(sha, q + 1);
    queue.push({ sha, seq: seq++ });
  };
  mark(base, BASE);
  mark(head, HEAD);
  let mergeBase: string | undefined;
  const taken = new Set<string>();
  const newestAhead: string[] = [];
  while (uncommon > 0) {
    const { sha } = queue.pop() as { sha: string; seq: number };
    const f = flags.get(sha) as number;
    queued.set(sha, (queued.get(sha) as number) - 1);
    if (f !== BOTH) uncommon--;
    if (newest !== undefined) {
      // Past the `newest`th commit ahead (and every commit tied with it): the rest are older.
      const last = newestAhead[newest - 1];
      if (last !== undefined && later(last, sha)) break;
      if (f === HEAD && !taken.has(sha)) { taken.add(sha); newestAhead.push(sha); }
    }
    if (f === BOTH && mergeBase === undefined) mergeBase = sha;
    const c = commits.get(sha) as CommitObject;
    for (const p of c.parents) {
      mark(p, f);
      // Generations that do not fall from child to parent (a commit stored before its parent,
      // or before generations were kept): no order makes flags final early, so paint it all.
      if (newest !== undefined && (c.gen === undefined || (commits.get(p)?.gen ?? 0) >= c.gen)) {
        const ahead = paint(tree, repoId, base, head).ahead;
        return { mergeBase: undefined, ahead: ahead.slice(Math.max(0, ahead.length - newest)), behind: 0 };
      }
    }
  }
  const byAge = (a: { sha: string }, b: { sha: string }): number => (later(a.sha, b.sha) ? 1 : later(b.sha, a.sha) ? -1 : a.sha < b.sha ? -1 : 1);
  if (newest !== undefined) {
    const ahead = newestAhead.map((sha) => ({ sha, commit: commits.get(sha) as CommitObject })).sort(byAge);
    return { mergeBase: undefined, ahead: ahead.slice(Math.max(0, ahead.length - newest)), behind: 0 };
  }
  const ahead: { sha: string; commit: CommitObject }[] = [];
  let behind = 0;
  for (const [sha, f] of flags) {
    if (f === HEAD) ahead.push({ sha, commit: commits.get(sha) as CommitObject });
    else if (f === BASE) behind++;
  }
  if (mergeBase === undefined) {
    // The walk stopped before taking a common commit (one tip is the other's ancestor): the
    // newest common commit still queued is the base.
    for (const [sha, f] of flags) if (f === BOTH && (mergeBase === undefined || later(sha, mergeBase))) mergeBase = sha;
  }
  // Oldest first: by generation, parents always come before their children.
  ahead.sort(byAge);
  return { mergeBase, ahead, behind };
}

/** Whether `ancestor` is reachable from `descendant` (a fast-forward from one to the other). */
export function isAncestor(tree: ReadTree, repoId: number, ancestor: string, descendant: string): boolean {
  return ancestor === descendant || paint(tree, repoId, ancestor, descendant).behind === 0;
}

// ------------------------------------------------------------------ diffs

export interface FileChange {
  filename: string;
  status: 'added' | 'removed' | 'modified' | 'renamed' | 'changed';
  sha: string | null;
  previousSha: string | null;
  mode: string;
}

/**
 * The files that differ between two trees (`null`: no tree), as `diffFlat` (flat.test-helper.ts) of their flattened
 * forms lists them, but walking both trees at once in git's order and skipping every subtree
 * with the same id on both sides: the cost is what changed, not the trees' size (a tree that
 * names one subtree a million times, changed in one file, costs that file's folders). Stops
 * after `limit` changes (`complete` is false when there were more); each entry looked at is
 * spent from `budget`.
 */
export function diffTrees(tree: ReadTree, repoId: number, a: string | null, b: string | null, limit: number, budget = new TreeBudget()): { changes: FileChange[]; complete: boolean } {
  const read = treeReader(tree, repoId);
  const entries = (sha: string | null): TreeEntry[] => (sha === null ? [] : read(sha) ?? []);
  const out: FileChange[] = [];
  interface Frame { a: TreeEntry[]; b: TreeEntry[]; i: number; j: number; prefix: string }
  const stack: Frame[] = [{ a: entries(a), b: entries(b), i: 0, j: 0, prefix: '' }];
  // One change past `limit` tells whether there were more.
  while (stack.length > 0 && out.length <= limit) {
    const f = stack[stack.length - 1] as Frame;
    const x = f.a[f.i], y = f.b[f.j];
    if (x === undefined && y === undefined) {
      stack.pop();
      continue;
    }
    budget.spend(1);
    // Both folders are in git's order: a merge of the two lists pairs entries of one name.
    const order = x === undefined ? 1 : y === undefined ? -1 : compareNames(treeSortKey(x), treeSortKey(y));
    if (order === 0) {
      f.i++;
      f.j++;
      const [old, now] = [x as TreeEntry, y as TreeEntry];
      if (old.sha === now.sha && old.mode === now.mode) continue;
      if (old.type === 'tree') stack.push({ a: entries(old.sha), b: entries(now.sha), i: 0, j: 0, prefix: `${f.prefix}${old.name}/` });
      else out.push({ filename: f.prefix + now.name, status: old.sha !== now.sha ? 'modified' : 'changed', sha: now.sha, previousSha: old.sha, mode: now.mode });
    } else if (order < 0) {
      f.i++;
      const old = x as TreeEntry;
      if (old.type === 'tree') stack.push({ a: entries(old.sha), b: [], i: 0, j: 0, prefix: `${f.prefix}${old.name}/` });
      else out.push({ filename: f.prefix + old.name, status: 'removed', sha: null, previousSha: old.sha, mode: old.mode });
    } else {
      f.j++;
      const now = y as TreeEntry;
      if (now.type === 'tree') stack.push({ a: [], b: entries(now.sha), i: 0, j: 0, prefix: `${f.prefix}${now.name}/` });
      else out.push({ filename: f.prefix + now.name, status: 'added', sha: now.sha, previousSha: null, mode: now.mode });
    }
  }
  const complete = out.length <= limit;
  // git's order differs from diffFlat's (UTF-16) only for names past U+FFFF.
  const changes = out.slice(0, limit).sort((p, q) => (p.filename < q.filename ? -1 : p.filename > q.filename ? 1 : 0));
  return { changes, complete };
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * Bytes as a string of one character per byte: equal bytes give equal strings, so lines compare
 * as they would decoded, and a 4 MB blob is ready in milliseconds where decoding UTF-8 a
 * character at a time takes hundreds. Only the lines a patch shows are decoded (`byteLine`).
 */
function byteString(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 8192) out += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192) as unknown as number[]);
  return out;
}

/** A line of `byteString` as text (its bytes decoded as UTF-8). */
function byteLine(line: string): string {
  if (!/[\x80-\xff]/.test(line)) return line;
  const bytes = new Uint8Array(line.length);
  for (let i = 0; i < line.length; i++) bytes[i] = line.charCodeAt(i);
  return utf8Decode(bytes);
}

function isBinary(bytes: Uint8Array): boolean {
  const n = Math.min(bytes.length, 8000);
  for (let i = 0; i < n; i++) if (bytes[i] === 0) return true;
  return false;
}

/**
 * Line counts and a unified patch between two blobs. The alignment is an LCS over lines,
 * bounded so a huge file cannot stall the sandbox: past the bound, every line counts as
 * removed and added, and no patch is given (GitHub also drops patches of large diffs). With
 * `limits`, a patch longer than `bytes` characters or `lines` lines is left out (the counts
 * stay), and is not built when its size shows it would be.
 */
/**
 * Two blobs' line counts and one-hunk patch (none past `limits`). Aligning them costs the
 * product of their differing middles' lines, at most 250,000 cells, and is spent from `budget`
 * (one answer's): past either, the counts are the middles' lines, unaligned.
 */
export function lineDiff(
  tree: ReadTree, repoId: number, oldSha: string | null, newSha: string | null, limits?: { bytes: number; lines: number }, budget?: { cells: number },
): { additions: number; deletions: number; patch?: string } {
  const ob = oldSha === null ? new Uint8Array(0) : blobBytes(tree, repoId, oldSha) ?? new Uint8Array(0);
  const nb = newSha === null ? new Uint8Array(0) : blobBytes(tree, repoId, newSha) ?? new Uint8Array(0);
  if (isBinary(ob) || isBinary(nb)) return { additions: 0, deletions: 0 };
  const a = splitLines(byteString(ob));
  const b = splitLines(byteString(nb));
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length, endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) { endA--; endB--; }
  const ma = endA - start, mb = endB - start;
  if (ma * mb > 250_000 || (budget !== undefined && ma * mb > budget.cells)) return { additions: mb, deletions: ma };
  if (budget !== undefined) budget.cells -= ma * mb;
  // LCS table over the differing middle.
  const w = mb + 1;
  const t = new Uint32Array((ma + 1) * w);
  for (let i = ma - 1; i >= 0; i--) {
    for (let j = mb - 1; j >= 0; j--) {
      t[i * w + j] = a[start + i] === b[start + j] ? (t[(i + 1) * w + j + 1] as number) + 1 : Math.max(t[(i + 1) * w + j] as number, t[i * w + j + 1] as number);
    }
  }
  if (limits !== undefined) {
    // Every line of either side's changed middle is in the patch: a lower bound of its size (in bytes).
    let bytesA = 0, bytesB = 0;
    for (let k = start; k < endA; k++) bytesA += (a[k] as string).length + 2;
    for (let k = start; k < endB; k++) bytesB += (b[k] as string).length + 2;
    if (Math.max(bytesA, bytesB) > limits.bytes || Math.max(ma, mb) > limits.lines) {
      const common = t[0] as number;
      return { additions: mb - common, deletions: ma - common };
    }
  }
  const ops: string[] = [];
  let i = 0, j = 0, additions = 0, deletions = 0;
  while (i < ma || j < mb) {
    if (i < ma && j < mb && a[start + i] === b[start + j]) { ops.push(' ' + byteLine(a[start + i] as string)); i++; j++; }
    // Removals before additions when both keep the alignment, as git prints them.
    else if (i < ma && (j >= mb || (t[(i + 1) * w + j] as number) >= (t[i * w + j + 1] as number))) { ops.push('-' + byteLine(a[start + i] as string)); i++; deletions++; }
    else { ops.push('+' + byteLine(b[start + j] as string)); j++; additions++; }
  }
  // One hunk with up to three lines of context either side.
  const ctxBefore = Math.min(3, start);
  const ctxAfter = Math.min(3, a.length - endA);
  const lines = [...a.slice(start - ctxBefore, start).map((l) => ' ' + byteLine(l)), ...ops, ...a.slice(endA, endA + ctxAfter).map((l) => ' ' + byteLine(l))];
  const oldCount = ctxBefore + ma + ctxAfter, newCount = ctxBefore + mb + ctxAfter;
  const oldStart = oldCount === 0 ? 0 : start - ctxBefore + 1, newStart = newCount === 0 ? 0 : start - ctxBefore + 1;
  const patch = additions + deletions === 0 ? undefined : `@@ -${oldStart},${oldCount} +${newStart},${newCount} @@\n${lines.join('\n')}`;
  if (patch === undefined || (limits !== undefined && (patch.length > limits.bytes || lines.length + 1 > limits.lines))) return { additions, deletions };
  return { additions, deletions, patch };
}


/**
 * A three-way merge of trees at file level, as `mergeFlat` (flat.test-helper.ts) merges their path maps (a path
 * changed on one side takes that side; changed on both, differently, is a conflict; a file on
 * one side where the other has a folder of files is one too), but walking the three trees
 * together: a folder that is the same on two sides takes the third side's by its id, unread,
 * so the cost is what both sides changed. Answers the merged tree's id, or 'conflict'; new
 * folders are written with `put`, or only hashed without it (a dry run: is it mergeable?).
 * Each entry looked at is spent from `budget`.
 */
export function mergeTrees(
  tree: ReadTree, repoId: number, base: string | null, ours: string | null, theirs: string | null, put?: (o: GitObject) => string, budget = new TreeBudget(),
): string | 'conflict' {
  const read = treeReader(tree, repoId);
  const write = put ?? ((o: GitObject) => objectId(o));
  // No folder and the empty one are the same to a merge of files.
  const folder = (sha: string | null | undefined): string | null => (sha === undefined || sha === null || sha === EMPTY_TREE ? null : sha);
  // Two sides the same: the third side's folder, whole.
  const taken = (b: string | null, o: string | null, t: string | null): string | null | undefined => (o === t ? o : b === o ? t : b === t ? o : undefined);
  const same = (x: TreeEntry | undefined, y: TreeEntry | undefined): boolean => (x === undefined ? y === undefined : y !== undefined && x.sha === y.sha && x.mode === y.mode);
  // A subtree named many times meets the same three folders again: each is merged once.
  const memo = new Map<string, string | null>();
  interface Part { files: (TreeEntry | undefined)[]; dirs: (string | null)[] }
  interface Frame { key: string; parts: [string, Part][]; next: number; entries: TreeEntry[]; waiting?: { name: string; file: TreeEntry | undefined } }
  const frame = (key: string, shas: (string | null)[]): Frame => {
    const parts = new Map<string, Part>();
    shas.forEach((sha, side) => {
      const list = sha === null ? [] : read(sha) ?? [];
      budget.spend(list.length);
      for (const e of list) {
        let part = parts.get(e.name);
        if (part === undefined) parts.set(e.name, (part = { files: [undefined, undefined, undefined], dirs: [null, null, null] }));
        if (e.type === 'tree') part.dirs[side] = folder(e.sha);
        else part.files[side] = e;
      }
    });
    return { key, parts: [...parts], next: 0, entries: [] };
  };
  const rootTaken = taken(folder(base), folder(ours), folder(theirs));
  const stack: Frame[] = [];
  let done: string | null | undefined = rootTaken;
  if (rootTaken === undefined) stack.push(frame('', [folder(base), folder(ours), folder(theirs)]));
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as Frame;
    let name: string, file: TreeEntry | undefined, dir: string | null | undefined;
    if (top.waiting !== undefined) {
      // The folder below has just been merged.
      ({ name, file } = top.waiting);
      dir = done;
      top.waiting = undefined;
    } else {
      const next = top.parts[top.next++];
      if (next === undefined) {
        stack.pop();
        done = top.entries.length === 0 ? null : write({ t: 'tree', entries: sortEntries(top.entries) });
        memo.set(top.key, done);
        continue;
      }
      const [b, o, t] = next[1].files;
      name = next[0];
      if (same(o, t)) file = o;
      else if (same(b, o)) file = t;
      else if (same(b, t)) file = o;
      else return 'conflict';
      const [db, dout, dt] = next[1].dirs as [string | null, string | null, string | null];
      const key = `${db}:${dout}:${dt}`;
      dir = taken(db, dout, dt);
      if (dir === undefined && memo.has(key)) dir = memo.get(key);
      if (dir === undefined) {
        top.waiting = { name, file };
        stack.push(frame(key, [db, dout, dt]));
        continue;
      }
    }
    // One side's file where the other made a folder of files: git calls it a conflict too.
    if (file !== undefined && dir !== null && dir !== undefined) return 'conflict';
    if (file !== undefined) top.entries.push(file);
    if (dir !== null && dir !== undefined) top.entries.push({ mode: '040000', type: 'tree', sha: dir, name });
  }
  return done ?? write({ t: 'tree', entries: [] });
}
