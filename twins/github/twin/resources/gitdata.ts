/**
 * Git data (blobs, trees, commits, refs) with real object ids, branches, and the push event
 * every ref change sends.
 */
import type { ReadTree } from '../../../../sdk/twin/index.js';
import { base64Decode, base64Encode, utf8Encode, wrap60 } from '../lib/bytes.js';
import { gitObjectId } from '../lib/hash.js';
import {
  SHA, TreeEditor, TreeTooLarge, deleteRef, getCommit, getObject, getRef, isAncestor, isDotGitmodules, listRefs, objectInfo, paint, pathProblem, putBlob, putObject,
  refConflict, treeWalk, setRef, validRefName, walk, type CommitObject, type GitObject, type Person, type TreeEntry,
} from '../lib/git.js';
import {
  bodyObject, invalidField, isoNow, optBool, optString, paginate, reqString, str, type Call, type Obj,
} from '../lib/http.js';
import { WEB, nodeId } from '../lib/addresses.js';
import { GhError, notFound, unprocessable, validation } from '../errors.js';
import { loadUser, simpleUser, userByEmail, type Caller } from '../lib/users.js';
import { deliver, listens } from './hooks.js';
import { fullName, loadRepo, repoApi, touchRepo, type StoredRepo } from './repos.js';

// ------------------------------------------------------------------ presentation

function shaNode(kind: string, sha: string): string {
  return nodeId(kind, parseInt(sha.slice(0, 8), 16));
}

const VERIFICATION = { verified: false, reason: 'unsigned', signature: null, payload: null, verified_at: null };

export function presentGitCommit(repo: StoredRepo, sha: string, c: CommitObject): Obj {
  const u = repoApi(repo);
  return {
    sha,
    node_id: shaNode('Commit', sha),
    url: `${u}/git/commits/${sha}`,
    html_url: `${WEB}/${fullName(repo)}/commit/${sha}`,
    author: c.author,
    committer: c.committer,
    tree: { sha: c.tree, url: `${u}/git/trees/${c.tree}` },
    message: c.message,
    parents: c.parents.map((p) => ({ sha: p, url: `${u}/git/commits/${p}`, html_url: `${WEB}/${fullName(repo)}/commit/${p}` })),
    verification: VERIFICATION,
  };
}

/** The commit object of the commits API (`repos.getCommit`, `listCommits`, pulls' commits). */
export function presentCommit(tree: ReadTree, repo: StoredRepo, sha: string, c: CommitObject): Obj {
  const u = repoApi(repo);
  const author = userByEmail(tree, c.author.email);
  const committer = userByEmail(tree, c.committer.email);
  return {
    sha,
    node_id: shaNode('Commit', sha),
    commit: {
      author: c.author,
      committer: c.committer,
      message: c.message,
      tree: { sha: c.tree, url: `${u}/git/trees/${c.tree}` },
      url: `${u}/git/commits/${sha}`,
      comment_count: 0,
      verification: VERIFICATION,
    },
    url: `${u}/commits/${sha}`,
    html_url: `${WEB}/${fullName(repo)}/commit/${sha}`,
    comments_url: `${u}/commits/${sha}/comments`,
    author: author === undefined ? null : simpleUser(author),
    committer: committer === undefined ? null : simpleUser(committer),
    parents: c.parents.map((p) => ({ sha: p, url: `${u}/commits/${p}`, html_url: `${WEB}/${fullName(repo)}/commit/${p}` })),
  };
}

function presentRef(repo: StoredRepo, ref: string, sha: string): Obj {
  return {
    ref,
    node_id: nodeId('Ref', ref.length),
    url: `${repoApi(repo)}/git/${ref}`,
    object: { sha, type: 'commit', url: `${repoApi(repo)}/git/commits/${sha}` },
  };
}

/**
 * `fn`, with a walk of trees past its budget (`TreeTooLarge`: a tree naming one subtree
 * thousands of times over) answered as GitHub answers a diff it gives up on: 422 `Server Error:
 * Sorry, this diff is taking too long to generate.` with `errors: [{ resource, field: 'diff',
 * code: 'not_available' }]`.
 */
export function treeWork<T>(fn: () => T, resource: string): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof TreeTooLarge) throw new GhError(422, 'Server Error: Sorry, this diff is taking too long to generate.', { errors: [{ resource, field: 'diff', code: 'not_available' }] });
    throw e;
  }
}

// ------------------------------------------------------------------ people and refs

/** A person from a request (`author`/`committer`), defaulting to the caller. */
export function personFrom(call: Call, raw: unknown, field: string, fallback?: Person): Person {
  const now = isoNow(call.ctx);
  if (raw === undefined || raw === null) {
    if (fallback !== undefined) return fallback;
    const me = loadUser(call.ctx.tree, (call.caller as Caller).login);
    return { name: me?.name ?? me?.login ?? 'unknown', email: me?.email ?? `${me?.id ?? 0}+${me?.login ?? 'unknown'}@users.noreply.github.com`, date: now };
  }
  if (typeof raw !== 'object' || Array.isArray(raw)) throw invalidField('Commit', field, raw);
  const p = raw as Obj;
  if (typeof p['name'] !== 'string' || typeof p['email'] !== 'string' || p['name'] === '' || /[<>\n]/.test(p['name'] + p['email'])) {
    throw validation([{ resource: 'Commit', field, code: 'invalid' }]);
  }
  let date = now;
  if (p['date'] !== undefined) {
    const ms = typeof p['date'] === 'string' ? Date.parse(p['date']) : NaN;
    if (!Number.isFinite(ms)) throw validation([{ resource: 'Commit', field: `${field}.date`, code: 'invalid' }]);
    date = new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  return { name: p['name'], email: p['email'], date };
}

/**
 * Moves a ref (creating or deleting it) and sends the push event, as a `git push` would.
 * `before`/`after` of `null` mean the ref did not exist / is deleted.
 */
export function moveRef(call: Call, repo: StoredRepo, ref: string, before: string | null, after: string | null, forced = false): void {
  if (after === null) deleteRef(call.ctx, repo.id, ref);
  else setRef(call.ctx, repo.id, ref, after);
  touchRepo(call.ctx, repo, true);
  // Nothing listens: the payload (a walk of history) would be built for nothing.
  if (!listens(call, repo, 'push')) return;
  const zero = '0000000000000000000000000000000000000000';
  // The commits the push brings (GitHub lists at most 20 in the payload): the walk stops there.
  const commits = after === null ? [] : before === null ? walk(call.ctx.tree, repo.id, [after], 20).reverse() : paint(call.ctx.tree, repo.id, before, after, 20).ahead;
  const me = call.caller === null ? undefined : loadUser(call.ctx.tree, call.caller.login);
  const pushCommit = (x: { sha: string; commit: CommitObject }): Obj => ({
    id: x.sha,
    tree_id: x.commit.tree,
    distinct: true,
    message: x.commit.message,
    timestamp: x.commit.committer.date,
    url: `${WEB}/${fullName(repo)}/commit/${x.sha}`,
    author: { name: x.commit.author.name, email: x.commit.author.email },
    committer: { name: x.commit.committer.name, email: x.commit.committer.email },
    added: [],
    removed: [],
    modified: [],
  });
  const head = after === null ? undefined : getCommit(call.ctx.tree, repo.id, after);
  deliver(call, repo, 'push', {
    ref,
    before: before ?? zero,
    after: after ?? zero,
    created: before === null,
    deleted: after === null,
    forced,
    base_ref: null,
    compare: `${WEB}/${fullName(repo)}/compare/${(before ?? zero).slice(0, 12)}...${(after ?? zero).slice(0, 12)}`,
    commits: commits.map(pushCommit),
    head_commit: after === null || head === undefined ? null : pushCommit({ sha: after, commit: head }),
    pusher: { name: me?.login ?? 'ghost', email: me?.email ?? null },
  });
}

// ------------------------------------------------------------------ blobs

export function createBlob(call: Call): { status: number; body: Obj } {
  const repo = loadRepo(call, 'write');
  const b = bodyObject(call.req);
  const content = reqString(b, 'content', 'Blob');
  const encoding = optString(b, 'encoding', 'Blob') ?? 'utf-8';
  let bytes: Uint8Array | undefined;
  if (encoding === 'base64') bytes = base64Decode(content);
  else if (encoding === 'utf-8' || encoding === 'utf8') bytes = utf8Encode(content);
  else throw validation([{ resource: 'Blob', field: 'encoding', code: 'invalid', value: encoding }]);
  if (bytes === undefined) throw validation([{ resource: 'Blob', field: 'content', code: 'invalid' }]);
  const sha = putBlob(call.ctx, repo.id, bytes);
  touchRepo(call.ctx, repo);
  call.headers['location'] = `${repoApi(repo)}/git/blobs/${sha}`;
  return { status: 201, body: { sha, url: `${repoApi(repo)}/git/blobs/${sha}` } };
}

export function getBlob(call: Call): { body: Obj } {
  const repo = loadRepo(call);
  const sha = call.req.params['file_sha'] ?? '';
  const o = getObject(call.ctx.tree, repo.id, sha);
  if (o?.t !== 'blob') throw notFound();
  return { body: { sha, node_id: shaNode('Blob', sha), size: o.size, url: `${repoApi(repo)}/git/blobs/${sha}`, content: wrap60(o.b64), encoding: 'base64' } };
}

// ------------------------------------------------------------------ trees

const MODES: Record<string, TreeEntry['type']> = { '100644': 'blob', '100755': 'blob', '120000': 'blob', '040000': 'tree', '160000': 'commit' };

export function createTree(call: Call): { status: number; body: Obj } {
  const { ctx } = call;
  const repo = loadRepo(call, 'write');
  const b = bodyObject(call.req);
  const items = b['tree'];
  if (!Array.isArray(items)) throw validation([{ resource: 'Tree', field: 'tree', code: 'missing_field' }]);
  const baseTree = optString(b, 'base_tree', 'Tree');
  if (baseTree !== undefined && getObject(ctx.tree, repo.id, baseTree)?.t !== 'tree') throw unprocessable('base_tree is not a valid tree oid');
  // Check every item before writing anything (each object's type read once).
  const info = objectInfo(ctx.tree, repo.id);
  const plan: { path: string; mode: string; type: TreeEntry['type']; sha?: string | null; content?: string }[] = [];
  for (const raw of items) {
    if (typeof raw !== 'object' || raw === null) throw validation([{ resource: 'Tree', field: 'tree', code: 'invalid' }]);
    const it = raw as Obj;
    const path = it['path'], mode = String(it['mode'] ?? ''), type = it['type'];
    if (typeof path !== 'string') throw unprocessable('tree.path contains a malformed path component');
    if (path.startsWith('/')) throw unprocessable('tree.path cannot start with a slash');
    if (pathProblem(path) !== undefined) throw unprocessable('tree.path contains a malformed path component');
    const normMode = mode === '40000' ? '040000' : mode;
    const expected = MODES[normMode];
    if (expected === undefined) throw unprocessable(`tree.mode must be one of 100644, 100755, 040000, 160000, 120000`);
    if (type !== undefined && type !== expected) throw unprocessable(`tree.type does not match tree.mode`);
    const entry: (typeof plan)[number] = { path, mode: normMode, type: expected };
    if (it['content'] !== undefined) {
      if (typeof it['content'] !== 'string' || expected !== 'blob') throw unprocessable('tree.content must be a string for a blob');
      entry.content = it['content'];
    } else if (it['sha'] === null) entry.sha = null;
    else if (typeof it['sha'] === 'string') {
      const sha = it['sha'];
      const o = expected === 'commit' ? undefined : info(sha);
      if (expected !== 'commit' && (o === undefined || o.t !== expected)) throw unprocessable(`tree.sha ${sha} is not a valid ${expected}`);
      if (expected === 'commit' && !SHA.test(sha)) throw unprocessable(`tree.sha ${sha} is not a valid commit`);
      entry.sha = sha;
    } else throw unprocessable('Must supply either tree.sha or tree.content');
    // git's fsck (which GitHub runs on what it creates) refuses a symlink named .gitmodules: gitmodulesSymlink.
    if (entry.sha !== null && normMode === '120000' && isDotGitmodules(path.slice(path.lastIndexOf('/') + 1))) {
      throw unprocessable(`tree.path ${path} is a symbolic link named .gitmodules`);
    }
    plan.push(entry);
  }
  // The items edit the base tree where they point; the rest of it is kept by id, unread (a
  // base tree may be huge, or name one subtree a million times over).
  const edit = new TreeEditor(ctx.tree, repo.id, baseTree ?? null);
  /** Items given as text, by their blobs' ids: written once the tree is known to be sound. */
  const contents = new Map<string, Uint8Array>();
  for (const p of plan) {
    // An item replaces whatever is at its path, a file or a whole folder; `sha: null` only removes.
    if (p.content !== undefined) {
      const bytes = utf8Encode(p.content);
      const blob = gitObjectId('blob', bytes);
      contents.set(blob, bytes);
      edit.set(p.path, { mode: p.mode, type: 'blob', sha: blob });
    } else edit.set(p.path, p.sha === null || p.sha === undefined ? null : { mode: p.mode, type: p.type, sha: p.sha });
  }
  // A path inside what is a file (`a/b` where `a` is one): git would see the name twice.
  const clash = edit.clash();
  if (clash !== undefined) throw unprocessable(`tree.path ${clash} is both a file and a directory`);
  for (const [blob, bytes] of contents) putObject(ctx, repo.id, { t: 'blob', b64: base64Encode(bytes), size: bytes.length }, blob);
  const sha = edit.write((o: GitObject) => putObject(ctx, repo.id, o));
  return { status: 201, body: presentTree(call, repo, sha, false) };
}

/**
 * GitHub's limits of one trees answer: "The limit for the tree array is 100,000 entries with a
 * maximum size of 7 MB when using the recursive parameter" (https://docs.github.com/en/rest/git/trees#get-a-tree);
 * past either, the answer stops with `truncated: true`. Applied to a plain listing too (one
 * pushed tree may hold ~140,000 entries). The size is of the entries' JSON.
 */
export const TREE_LIMITS = { entries: 100_000, bytes: 7 * 1024 * 1024 };

function presentTree(call: Call, repo: StoredRepo, sha: string, recursive: boolean): Obj {
  const u = repoApi(repo);
  const entries: Obj[] = [];
  const info = objectInfo(call.ctx.tree, repo.id);
  let bytes = 0, truncated = false;
  // The walk is lazy: a tree that names one subtree a million times is read no further than the limit.
  for (const { path, entry: e } of treeWalk(call.ctx.tree, repo.id, sha, '', recursive)) {
    const item: Obj = { path, mode: e.mode, type: e.type, sha: e.sha };
    if (e.type === 'blob') {
      const blob = info(e.sha);
      item['size'] = blob?.t === 'blob' ? blob.size : 0;
      item['url'] = `${u}/git/blobs/${e.sha}`;
    } else if (e.type === 'tree') item['url'] = `${u}/git/trees/${e.sha}`;
    bytes += JSON.stringify(item).length + 1;
    if (entries.length === TREE_LIMITS.entries || bytes > TREE_LIMITS.bytes) {
      truncated = true;
      break;
    }
    entries.push(item);
  }
  return { sha, url: `${u}/git/trees/${sha}`, tree: entries, truncated };
}

export function getTree(call: Call): { body: Obj } {
  const repo = loadRepo(call);
  let sha = call.req.params['tree_sha'] ?? '';
  const o = getObject(call.ctx.tree, repo.id, sha);
  if (o?.t === 'commit') sha = o.tree;
  else if (o?.t !== 'tree') {
    // A branch or tag name is accepted too, as on GitHub.
    const commit = getRef(call.ctx.tree, repo.id, `refs/heads/${sha}`) ?? getRef(call.ctx.tree, repo.id, `refs/tags/${sha}`);
    const c = commit === undefined ? undefined : getCommit(call.ctx.tree, repo.id, commit);
    if (c === undefined) throw notFound();
    sha = c.tree;
  }
  const recursive = str(call.req.query, 'recursive');
  return { body: presentTree(call, repo, sha, recursive !== undefined && recursive !== '0' && recursive !== 'false') };
}

// ------------------------------------------------------------------ commits

export function createCommit(call: Call): { status: number; body: Obj } {
  const repo = loadRepo(call, 'write');
  const b = bodyObject(call.req);
  const message = reqString(b, 'message', 'Commit');
  const tree = reqString(b, 'tree', 'Commit');
  if (getObject(call.ctx.tree, repo.id, tree)?.t !== 'tree') throw unprocessable('Tree SHA does not exist');
  const parents = b['parents'] ?? [];
  if (!Array.isArray(parents) || parents.some((p) => typeof p !== 'string')) throw invalidField('Commit', 'parents', parents);
  for (const p of parents as string[]) if (getCommit(call.ctx.tree, repo.id, p) === undefined) throw unprocessable('Parent SHA does not exist or is not a commit object');
  const author = personFrom(call, b['author'], 'author');
  const committer = personFrom(call, b['committer'], 'committer', b['author'] === undefined ? undefined : author);
  const commit: CommitObject = { t: 'commit', tree, parents: parents as string[], author, committer, message };
  const sha = putObject(call.ctx, repo.id, commit);
  call.headers['location'] = `${repoApi(repo)}/git/commits/${sha}`;
  return { status: 201, body: presentGitCommit(repo, sha, commit) };
}

export function getGitCommit(call: Call): { body: Obj } {
  const repo = loadRepo(call);
  const sha = call.req.params['commit_sha'] ?? '';
  const c = getCommit(call.ctx.tree, repo.id, sha);
  if (c === undefined) throw notFound();
  return { body: presentGitCommit(repo, sha, c) };
}

// ------------------------------------------------------------------ refs

/** `refs/heads/x` from the `*ref` tail of a path (`heads/x`), refusing odd names. */
function refParam(call: Call): string {
  const raw = call.req.params['ref'] ?? '';
  const ref = raw.startsWith('refs/') ? raw : `refs/${raw}`;
  if (!validRefName(ref)) throw notFound();
  return ref;
}

export function getRefRoute(call: Call): { body: Obj } {
  const repo = loadRepo(call);
  const ref = refParam(call);
  const sha = getRef(call.ctx.tree, repo.id, ref);
  if (sha === undefined) throw notFound();
  return { body: presentRef(repo, ref, sha) };
}

export function matchingRefs(call: Call): { body: Obj[] } {
  const repo = loadRepo(call);
  const raw = call.req.params['ref'] ?? '';
  const prefix = raw.startsWith('refs/') ? raw : `refs/${raw}`;
  return { body: listRefs(call.ctx.tree, repo.id, prefix).map((r) => presentRef(repo, r.ref, r.sha)) };
}

export function listAllRefs(call: Call): { body: Obj[] } {
  const repo = loadRepo(call);
  const raw = call.req.params['ref'];
  const prefix = raw === undefined ? 'refs/' : `refs/${raw.replace(/^refs\//, '')}${raw.endsWith('/') ? '' : '/'}`;
  return { body: paginate(call, listRefs(call.ctx.tree, repo.id, prefix)).map((r) => presentRef(repo, r.ref, r.sha)) };
}

export function createRef(call: Call): { status: number; body: Obj } {
  const repo = loadRepo(call, 'write');
  const b = bodyObject(call.req);
  const ref = reqString(b, 'ref', 'Reference');
  const sha = reqString(b, 'sha', 'Reference');
  if (!ref.startsWith('refs/') || ref.split('/').length < 3 || !validRefName(ref)) throw unprocessable(`${ref} is not a valid ref name.`);
  if (getCommit(call.ctx.tree, repo.id, sha) === undefined) throw unprocessable('Object does not exist');
  if (getRef(call.ctx.tree, repo.id, ref) !== undefined) throw unprocessable('Reference already exists');
  // `refs/heads/a` beside `refs/heads/a/b`: GitHub's answer names no reason.
  if (refConflict(call.ctx.tree, repo.id, ref) !== undefined) throw unprocessable('Reference update failed');
  moveRef(call, repo, ref, null, sha);
  call.headers['location'] = `${repoApi(repo)}/git/${ref}`;
  return { status: 201, body: presentRef(repo, ref, sha) };
}

export function updateRef(call: Call): { body: Obj } {
  const repo = loadRepo(call, 'write');
  const ref = refParam(call);
  const b = bodyObject(call.req);
  const sha = reqString(b, 'sha', 'Reference');
  const force = optBool(b, 'force', 'Reference') ?? false;
  const current = getRef(call.ctx.tree, repo.id, ref);
  if (current === undefined) throw unprocessable('Reference does not exist');
  if (getCommit(call.ctx.tree, repo.id, sha) === undefined) throw unprocessable('Object does not exist');
  const fastForward = isAncestor(call.ctx.tree, repo.id, current, sha);
  if (!fastForward && !force) throw unprocessable('Update is not a fast forward');
  if (sha !== current) moveRef(call, repo, ref, current, sha, !fastForward);
  return { body: presentRef(repo, ref, sha) };
}

export function deleteRefRoute(call: Call): { status: number } {
  const repo = loadRepo(call, 'write');
  const ref = refParam(call);
  const current = getRef(call.ctx.tree, repo.id, ref);
  if (current === undefined) throw unprocessable('Reference does not exist');
  moveRef(call, repo, ref, current, null);
  return { status: 204 };
}

// ------------------------------------------------------------------ branches

function presentBranch(call: Call, repo: StoredRepo, name: string, sha: string, full: boolean): Obj {
  const u = repoApi(repo);
  const out: Obj = { name, commit: { sha, url: `${u}/commits/${sha}` }, protected: false };
  if (full) {
    const c = getCommit(call.ctx.tree, repo.id, sha);
    if (c !== undefined) out['commit'] = presentCommit(call.ctx.tree, repo, sha, c);
    out['_links'] = { self: `${u}/branches/${name}`, html: `${WEB}/${fullName(repo)}/tree/${name}` };
    out['protection'] = { enabled: false, required_status_checks: { enforcement_level: 'off', contexts: [], checks: [] } };
    out['protection_url'] = `${u}/branches/${name}/protection`;
  }
  return out;
}

export function listBranches(call: Call): { body: Obj[] } {
  const repo = loadRepo(call);
  const refs = listRefs(call.ctx.tree, repo.id, 'refs/heads/');
  return { body: paginate(call, refs).map((r) => presentBranch(call, repo, r.ref.slice('refs/heads/'.length), r.sha, false)) };
}

/** Tags are refs under `refs/tags/` (lightweight tags; annotated tag objects are not modelled). */
export function listTags(call: Call): { body: Obj[] } {
  const repo = loadRepo(call);
  const u = repoApi(repo);
  const tags = listRefs(call.ctx.tree, repo.id, 'refs/tags/').reverse();
  return {
    body: paginate(call, tags).map((t) => {
      const name = t.ref.slice('refs/tags/'.length);
      return {
        name, commit: { sha: t.sha, url: `${u}/commits/${t.sha}` }, zipball_url: `${u}/zipball/refs/tags/${name}`,
        tarball_url: `${u}/tarball/refs/tags/${name}`, node_id: nodeId('Ref', name.length),
      };
    }),
  };
}

export function getBranch(call: Call): { body: Obj } {
  const repo = loadRepo(call);
  const name = call.req.params['branch'] ?? '';
  const sha = getRef(call.ctx.tree, repo.id, `refs/heads/${name}`);
  if (sha === undefined) throw new GhError(404, 'Branch not found');
  return { body: presentBranch(call, repo, name, sha, true) };
}
