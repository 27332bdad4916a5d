/**
 * The repository's git data in the copy: its branches and tags (`ref`), the commit each points
 * at, and the default branch's files (its whole tree and, within the caps below, every blob), as
 * git objects under their real ids (`obj`), so the contents, trees, blobs, refs and branches APIs
 * answer on the copy what they answer on GitHub.
 *
 * Git objects never change, so a refresh reads only the objects the copy lacks: those it holds
 * are written again as they are (`keep`), which the runner drops as unchanged, so that they stay
 * in the copy (a refresh's records that no read writes again are swept). A blob's record holds
 * its whole content, so blobs are kept at most `KEEP_BYTES` to a call, the rest riding on the
 * reads that follow.
 *
 * What is and is not exact:
 * - a blob is stored only when its bytes hash to its id (checked);
 * - a tree is rebuilt from the recursive listing, which holds all git stores of it (mode, name,
 *   id per entry), so it is git's tree byte for byte;
 * - a commit is stored as `GET /git/commits/<sha>` shows it. That answer leaves out what git
 *   hashes besides (the author's and committer's time zones, a signature, extra headers), so
 *   its stored form need not hash to its id; the API shows every field the same either way.
 *   History is not copied (each older commit would cost a read, and its tree a listing), so a
 *   `git clone` of the copy, which needs every object the refs reach, is not offered.
 */
import type { RootAnswer, RootRead, TwinContext } from '../../../../sdk/twin/types.js';
import { base64DecodeCanonical } from '../lib/bytes.js';
import { getObject, sortEntries, treeEntryProblem, treeProblem, validRefName, type CommitObject, type GitObject, type Person, type TreeEntry } from '../lib/git.js';
import { gitObjectId } from '../lib/hash.js';
import { answerFailed, instant, jsonOf, list, nextPage, num, obj, rootError, sha, succeeded, text, type Obj, type RepoRoot } from './answers.js';

/** Refs of each kind copied (branches, tags); the default branch always is. */
export const MAX_REFS = 100;
/** Pages of refs looked at (GitHub answers matching refs whole; a page cap keeps a hostile `Link` from looping). */
const MAX_REF_PAGES = 10;
/**
 * The largest file whose content is copied. Hashing it to check its id is the cost of a blob's
 * read: in QuickJS (a world that does not trust its twins) about 1.3–2 ms per KiB on a loaded
 * 2-core machine, and a call has 2.5 s.
 */
export const MAX_BLOB_BYTES = 512 * 1024;
/** Files copied, in path order, at most, and their bytes in all. */
export const MAX_BLOBS = 1000;
export const MAX_FILE_BYTES = 16 * 1024 * 1024;
/**
 * A default branch whose tree lists more entries than this (or that GitHub truncates) has no
 * files copied. Each folder is a write of the listing's call and each file kept then another,
 * and an entry holds at most 10,000 writes; rebuilding 10,000 entries' folders took 0.9 s of a
 * QuickJS call under load.
 */
export const MAX_TREE_ENTRIES = 9_000;
/** Bytes of stored blobs written again in one call (about 60 ms per MiB in QuickJS: no hashing). */
export const KEEP_BYTES = 2 * 1024 * 1024;

interface RefsData { step: 'refs'; repoId: number; kind: 'heads' | 'tags'; defaultBranch: string; taken: number; page: number }
interface CommitData { step: 'commit'; repoId: number; sha: string; head: boolean }
interface TreeData { step: 'tree'; repoId: number; sha: string }
interface BlobData { step: 'blob'; repoId: number; sha: string; size: number; keep: string[] }
interface KeepData { step: 'keep'; repoId: number; keep: string[] }
export type FilesData = RefsData | CommitData | TreeData | BlobData | KeepData;

const objKey = (repoId: number, id: string): string => `${repoId}:${id}`;

/** The first reads of the git data: the branches, then the tags. */
export function refReads(repoId: number, defaultBranch: string): RootRead[] {
  return (['heads', 'tags'] as const).map((kind) => ({
    path: `/git/matching-refs/${kind}`,
    data: { step: 'refs', repoId, kind, defaultBranch, taken: 0, page: 1 } satisfies RefsData,
  }));
}

/** Writes a stored object again (so the refresh keeps it); answers it, or undefined when the copy lacks it. */
function keep(ctx: TwinContext, repoId: number, id: string): GitObject | undefined {
  const o = getObject(ctx.tree, repoId, id);
  if (o !== undefined) ctx.tree.put('obj', objKey(repoId, id), o);
  return o;
}

/** A complete stored commit (not one a push webhook left `partial`), written again; undefined otherwise. */
function keepCommit(ctx: TwinContext, repoId: number, id: string): CommitObject | undefined {
  const o = getObject(ctx.tree, repoId, id);
  if (o?.t !== 'commit' || o.partial === true) return undefined;
  ctx.tree.put('obj', objKey(repoId, id), o);
  return o;
}

/** Stores a commit under its id (over a partial one), with the generation number history walks order by. */
export function storeCommit(ctx: TwinContext, repoId: number, id: string, commit: CommitObject): void {
  let gen = 0;
  for (const p of commit.parents) {
    const parent = getObject(ctx.tree, repoId, p);
    if (parent?.t === 'commit') gen = Math.max(gen, parent.gen ?? 0);
  }
  ctx.tree.put('obj', objKey(repoId, id), { ...commit, gen: gen + 1 });
}

function treeRead(repoId: number, id: string): RootRead {
  return { path: `/git/trees/${id}`, query: { recursive: '1' }, data: { step: 'tree', repoId, sha: id } satisfies TreeData };
}

/** `GET /git/matching-refs/heads|tags`: each ref, and a read of each commit the copy lacks. */
export function readRefs(data: RefsData, answer: RootAnswer, ctx: TwinContext, root: RepoRoot): RootRead[] {
  const what = `the ${data.kind === 'heads' ? 'branches' : 'tags'}`;
  // 409: an empty repository has no refs ("Git Repository is empty."); 404: the credential cannot read them.
  if (answer.status === 404 || answer.status === 409) return [];
  if (!succeeded(answer)) throw answerFailed(answer, what);
  const body = jsonOf(answer, what);
  // GitHub answers a single object where exactly one ref matches a `/git/refs/<name>` read; matching refs are a list.
  const items = Array.isArray(body) ? body : [body];
  let taken = data.taken;
  const commits = new Map<string, boolean>();
  for (const [n, raw] of items.entries()) {
    const item = obj(raw, `${what}[${n}]`);
    const ref = text(item, 'ref', `${what}[${n}]`);
    const target = obj(item['object'], `${what}[${n}].object`);
    if (!ref.startsWith(`refs/${data.kind}/`) || !validRefName(ref)) throw rootError(`${what}[${n}].ref ${JSON.stringify(ref.slice(0, 300))} is not a ${data.kind === 'heads' ? 'branch' : 'tag'}`);
    // An annotated tag points at a tag object, which the twin does not model.
    if (target['type'] !== 'commit') continue;
    const id = sha(target, 'sha', `${what}[${n}].object`);
    const head = data.kind === 'heads' && ref === `refs/heads/${data.defaultBranch}`;
    if (!head && taken >= MAX_REFS) continue;
    if (!head) taken++;
    ctx.tree.put('ref', `${data.repoId}:${ref}`, { sha: id });
    commits.set(id, head || commits.get(id) === true);
  }
  const reads: RootRead[] = [];
  for (const [id, head] of commits) {
    const stored = keepCommit(ctx, data.repoId, id);
    if (stored === undefined) reads.push({ path: `/git/commits/${id}`, data: { step: 'commit', repoId: data.repoId, sha: id, head } satisfies CommitData });
    else if (head) reads.push(treeRead(data.repoId, stored.tree));
  }
  const next = nextPage(answer, root, what);
  if (next !== undefined && data.page < MAX_REF_PAGES) reads.push({ path: next, data: { ...data, taken, page: data.page + 1 } satisfies RefsData });
  return reads;
}

function person(raw: unknown, what: string): Person {
  const p = obj(raw, what);
  return { name: text(p, 'name', what), email: text(p, 'email', what), date: instant(p, 'date', what) };
}

/** `GET /git/commits/<sha>`: the commit as the API shows it; the default branch's goes on to its tree. */
export function readCommit(data: CommitData, answer: RootAnswer, ctx: TwinContext): RootRead[] {
  const what = `the commit ${data.sha}`;
  if (!succeeded(answer)) throw answerFailed(answer, what);
  const c = obj(jsonOf(answer, what), what);
  if (c['sha'] !== undefined && c['sha'] !== data.sha) throw rootError(`${what} answered the commit ${JSON.stringify(String(c['sha']).slice(0, 60))}`);
  const commit: CommitObject = {
    t: 'commit',
    tree: sha(obj(c['tree'], `${what}.tree`), 'sha', `${what}.tree`),
    parents: list(c['parents'], `${what}.parents`).map((p, n) => sha(obj(p, `${what}.parents[${n}]`), 'sha', `${what}.parents[${n}]`)),
    author: person(c['author'], `${what}.author`),
    committer: person(c['committer'], `${what}.committer`),
    message: text(c, 'message', what),
  };
  storeCommit(ctx, data.repoId, data.sha, commit);
  return data.head ? [treeRead(data.repoId, commit.tree)] : [];
}

const MODE_TYPES: Record<string, TreeEntry['type']> = { '100644': 'blob', '100755': 'blob', '120000': 'blob', '040000': 'tree', '160000': 'commit' };

/**
 * `GET /git/trees/<sha>?recursive=1`: every folder of the default branch rebuilt as git's tree
 * object, then a read of each file the copy lacks (within the caps).
 */
export function readTree(data: TreeData, answer: RootAnswer, ctx: TwinContext): RootRead[] {
  const what = `the tree ${data.sha}`;
  if (!succeeded(answer)) throw answerFailed(answer, what);
  const t = obj(jsonOf(answer, what), what);
  if (t['sha'] !== data.sha) throw rootError(`${what} answered the tree ${JSON.stringify(String(t['sha']).slice(0, 60))}`);
  const items = list(t['tree'], `${what}.tree`);
  // Past these, a listing is not the whole tree (or costs more than a copy should): no files.
  if (t['truncated'] === true || items.length > MAX_TREE_ENTRIES) return [];
  const folders = new Map<string, TreeEntry[]>([['', []]]);
  const folderIds = new Map<string, string>([['', data.sha]]);
  const files: { sha: string; size: number }[] = [];
  for (const [n, raw] of items.entries()) {
    const at = `${what}.tree[${n}]`;
    const e = obj(raw, at);
    const path = text(e, 'path', at);
    const mode = text(e, 'mode', at);
    const type = MODE_TYPES[mode];
    if (type === undefined || e['type'] !== type) throw rootError(`${at} has mode ${JSON.stringify(mode.slice(0, 10))} and type ${JSON.stringify(String(e['type']).slice(0, 10))}`);
    const id = sha(e, 'sha', at);
    const slash = path.lastIndexOf('/');
    const folder = slash < 0 ? '' : path.slice(0, slash);
    const name = path.slice(slash + 1);
    // The one rule of every tree the twin holds: no name git refuses (`..`, `.git`, …).
    const problem = treeEntryProblem(name, mode);
    if (problem !== undefined) throw rootError(`${at}.path ${JSON.stringify(path.slice(0, 300))}: ${problem}`);
    let entries = folders.get(folder);
    if (entries === undefined) folders.set(folder, (entries = []));
    entries.push({ mode, type, sha: id, name });
    if (type === 'tree') {
      folderIds.set(path, id);
      if (!folders.has(path)) folders.set(path, []);
    } else if (type === 'blob') files.push({ sha: id, size: num(e, 'size', at) });
  }
  for (const [folder, entries] of folders) {
    const id = folderIds.get(folder);
    if (id === undefined) throw rootError(`${what} lists ${JSON.stringify(folder.slice(0, 300))} without the folder itself`);
    const sorted = sortEntries(entries);
    const problem = treeProblem(sorted);
    if (problem !== undefined) throw rootError(`${what}: the folder ${JSON.stringify(folder.slice(0, 300))}: ${problem}`);
    ctx.tree.put('obj', objKey(data.repoId, id), { t: 'tree', entries: sorted } satisfies GitObject);
  }
  return blobReads(ctx, data.repoId, data.sha, files);
}

/**
 * The files to copy (path order; each at most `MAX_BLOB_BYTES`; until `MAX_BLOBS` or
 * `MAX_FILE_BYTES`): those the copy holds are kept, the first `KEEP_BYTES` of them now and the
 * rest on later reads; each of the others is read.
 */
function blobReads(ctx: TwinContext, repoId: number, treeId: string, files: { sha: string; size: number }[]): RootRead[] {
  const chosen: { sha: string; size: number }[] = [];
  const seen = new Set<string>();
  let bytes = 0;
  for (const f of files) {
    if (seen.has(f.sha) || f.size > MAX_BLOB_BYTES) continue;
    if (chosen.length === MAX_BLOBS || bytes + f.size > MAX_FILE_BYTES) break;
    seen.add(f.sha);
    chosen.push(f);
    bytes += f.size;
  }
  const held: { sha: string; size: number }[] = [];
  const missing: { sha: string; size: number }[] = [];
  for (const f of chosen) (getObject(ctx.tree, repoId, f.sha)?.t === 'blob' ? held : missing).push(f);
  // The kept blobs in batches of KEEP_BYTES: the first now, one on each read after.
  const batches: string[][] = [];
  let batch: string[] = [], batchBytes = 0;
  for (const f of held) {
    if (batch.length > 0 && batchBytes + f.size > KEEP_BYTES) {
      batches.push(batch);
      batch = [];
      batchBytes = 0;
    }
    batch.push(f.sha);
    batchBytes += f.size;
  }
  if (batch.length > 0) batches.push(batch);
  for (const id of batches.shift() ?? []) keep(ctx, repoId, id);
  const reads: RootRead[] = missing.map((f, i) => ({ path: `/git/blobs/${f.sha}`, data: { step: 'blob', repoId, sha: f.sha, size: f.size, keep: batches[i] ?? [] } satisfies BlobData }));
  // More batches than reads: each rides on a small read of the root folder (its answer is not needed).
  for (const rest of batches.slice(missing.length)) reads.push({ path: `/git/trees/${treeId}`, data: { step: 'keep', repoId, keep: rest } satisfies KeepData });
  return reads;
}

/** `GET /git/blobs/<sha>`: the file's bytes, stored only when they hash to its id. */
export function readBlob(data: BlobData, answer: RootAnswer, ctx: TwinContext): RootRead[] {
  const what = `the blob ${data.sha}`;
  if (!succeeded(answer)) throw answerFailed(answer, what);
  const b = obj(jsonOf(answer, what), what);
  if (b['encoding'] !== 'base64') throw rootError(`${what} is not base64 (encoding ${JSON.stringify(String(b['encoding']).slice(0, 20))})`);
  // GitHub wraps the base64 at 60 characters; without the line breaks it is the canonical form
  // the twin stores, so it is decoded once (to hash it) and kept as it is.
  const b64 = text(b, 'content', what).replace(/\s+/g, '');
  const bytes = base64DecodeCanonical(b64);
  if (bytes === undefined) throw rootError(`${what}.content is not base64`);
  if (bytes.length > MAX_BLOB_BYTES) throw rootError(`${what} holds ${bytes.length} bytes, more than the ${MAX_BLOB_BYTES} a copied file may (its listing said ${data.size})`);
  const id = gitObjectId('blob', bytes);
  if (id !== data.sha) throw rootError(`${what} answered content whose id is ${id}`);
  ctx.tree.put('obj', objKey(data.repoId, id), { t: 'blob', b64, size: bytes.length } satisfies GitObject);
  for (const k of data.keep) keep(ctx, data.repoId, k);
  return [];
}

/** A read that only carries kept blobs (its answer is not used). */
export function readKeep(data: KeepData, ctx: TwinContext): RootRead[] {
  for (const k of data.keep) keep(ctx, data.repoId, k);
  return [];
}

/** The data of a files read, checked (it comes back from the host that performed the read). */
export function filesData(d: Obj): FilesData | undefined {
  const repoId = d['repoId'];
  if (typeof repoId !== 'number' || !Number.isSafeInteger(repoId)) return undefined;
  const shaList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string' && /^[0-9a-f]{40}$/.test(x));
  const id = typeof d['sha'] === 'string' && /^[0-9a-f]{40}$/.test(d['sha']);
  switch (d['step']) {
    case 'refs':
      return (d['kind'] === 'heads' || d['kind'] === 'tags') && typeof d['defaultBranch'] === 'string' && typeof d['taken'] === 'number' && typeof d['page'] === 'number' ? (d as unknown as RefsData) : undefined;
    case 'commit':
      return id && typeof d['head'] === 'boolean' ? (d as unknown as CommitData) : undefined;
    case 'tree':
      return id ? (d as unknown as TreeData) : undefined;
    case 'blob':
      return id && typeof d['size'] === 'number' && shaList(d['keep']) ? (d as unknown as BlobData) : undefined;
    case 'keep':
      return shaList(d['keep']) ? (d as unknown as KeepData) : undefined;
    default:
      return undefined;
  }
}
