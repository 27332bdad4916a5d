/**
 * Reading and writing code through the REST API: the contents API (files as base64, a commit
 * per write, `sha` required to replace or delete), the commits list, one commit with its
 * files, and compare (`ahead_by`, `behind_by`, `merge_base_commit`, `files`).
 */
import type { ReadTree } from '../../../../sdk/twin/index.js';
import { base64Decode, wrap60 } from '../lib/bytes.js';
import {
  TreeEditor, diffTrees, entryAt, fileAbove, getCommit, getObject, getRef, lineDiff, objectInfo, paint, pathInTrees, pathProblem, putBlob, putObject, resolveCommitish, walk,
  type CommitObject, type FileChange, type GitObject,
} from '../lib/git.js';
import { bodyObject, instantParam, optString, pageLinks, pageOf, paginate, reqString, str, type Call, type Obj } from '../lib/http.js';
import { WEB } from '../lib/addresses.js';
import { GhError, notFound, validation } from '../errors.js';
import { fullName, loadRepo, repoApi, type StoredRepo } from './repos.js';
import { moveRef, personFrom, presentCommit, presentGitCommit, treeWork } from './gitdata.js';

function cleanPath(raw: string): string {
  const path = raw.replace(/^\/+|\/+$/g, '');
  if (path.split('/').some((p) => p === '..' || p === '.')) throw notFound();
  return path;
}

/**
 * The path of a contents write. A path git could not hold in a tree (`.git` in any spelling, a
 * NUL, an empty, `.` or `..` part) is refused as GitHub refuses a bad path, before anything is
 * written: such a tree breaks every clone.
 */
function writablePath(raw: string): string {
  if (raw === '') throw notFound();
  const invalid = (message: string): GhError => validation([{ resource: 'Commit', field: 'path', code: 'invalid' }], message);
  if (raw.startsWith('/')) throw invalid('path cannot start with a slash');
  if (pathProblem(raw) !== undefined) throw invalid('path contains a malformed path component');
  return raw;
}

function emptyRepo(): GhError {
  return new GhError(404, 'This repository is empty.');
}

function fileObject(repo: StoredRepo, path: string, sha: string, type: string, size: number, ref: string): Obj {
  const u = repoApi(repo);
  const name = path.split('/').pop() ?? path;
  const q = `?ref=${encodeURIComponent(ref)}`;
  const gitUrl = type === 'dir' ? `${u}/git/trees/${sha}` : `${u}/git/blobs/${sha}`;
  const html = `${WEB}/${fullName(repo)}/${type === 'dir' ? 'tree' : 'blob'}/${ref}/${path}`;
  return {
    name,
    path,
    sha,
    size,
    url: `${u}/contents/${path}${q}`,
    html_url: html,
    git_url: gitUrl,
    download_url: type === 'file' ? `https://raw.githubusercontent.com/${fullName(repo)}/${ref}/${path}` : null,
    type,
    _links: { self: `${u}/contents/${path}${q}`, git: gitUrl, html },
  };
}

/**
 * The most entries a directory's contents answer lists, as GitHub's: "This API has an upper limit
 * of 1,000 files for a directory" (https://docs.github.com/en/rest/repos/contents#get-repository-content);
 * the trees API lists the rest.
 */
const CONTENTS_DIR_LIMIT = 1000;

export function getContent(call: Call): { body: Obj | Obj[] } {
  const { ctx } = call;
  const repo = loadRepo(call);
  const path = cleanPath(call.req.params['path'] ?? '');
  const ref = str(call.req.query, 'ref') ?? repo.default_branch;
  const head = resolveCommitish(ctx.tree, repo.id, ref);
  if (head === undefined) {
    if (listIsEmpty(ctx.tree, repo)) throw emptyRepo();
    throw new GhError(404, `No commit found for the ref ${ref}`);
  }
  const commit = getCommit(ctx.tree, repo.id, head) as CommitObject;
  const entry = entryAt(ctx.tree, repo.id, commit.tree, path);
  if (entry === undefined) throw notFound();
  if (entry.type === 'tree') {
    const o = getObject(ctx.tree, repo.id, entry.sha);
    if (o?.t !== 'tree') throw notFound();
    const info = objectInfo(ctx.tree, repo.id);
    return {
      body: o.entries.slice(0, CONTENTS_DIR_LIMIT).map((e) => {
        const blob = e.type === 'blob' ? info(e.sha) : undefined;
        return fileObject(repo, path === '' ? e.name : `${path}/${e.name}`, e.sha, e.type === 'tree' ? 'dir' : e.type === 'commit' ? 'submodule' : e.mode === '120000' ? 'symlink' : 'file', blob?.t === 'blob' ? blob.size : 0, ref);
      }),
    };
  }
  const blob = getObject(ctx.tree, repo.id, entry.sha);
  if (blob?.t !== 'blob') throw notFound();
  return { body: { ...fileObject(repo, path, entry.sha, entry.mode === '120000' ? 'symlink' : 'file', blob.size, ref), content: wrap60(blob.b64), encoding: 'base64' } };
}

function listIsEmpty(tree: ReadTree, repo: StoredRepo): boolean {
  return tree.list('ref', { after: `${repo.id}:`, before: `${repo.id};`, limit: 1 }).items.length === 0;
}

/** PUT (create or replace) and DELETE of one file: a commit on the branch, the push event. */
function writeFile(call: Call, remove: boolean): { status: number; body: Obj } {
  const { ctx } = call;
  const repo = loadRepo(call, 'write');
  const path = writablePath(call.req.params['path'] ?? '');
  const b = bodyObject(call.req);
  const message = reqString(b, 'message', 'Commit');
  const branch = optString(b, 'branch', 'Commit') ?? repo.default_branch;
  const given = optString(b, 'sha', 'Commit');
  let bytes: Uint8Array | undefined;
  if (!remove) {
    const content = reqString(b, 'content', 'Commit');
    bytes = base64Decode(content);
    if (bytes === undefined) throw validation([{ resource: 'Commit', field: 'content', code: 'invalid' }], 'content is not valid Base64');
  }
  const ref = `refs/heads/${branch}`;
  const head = getRef(ctx.tree, repo.id, ref);
  if (head === undefined && !(listIsEmpty(ctx.tree, repo) && branch === repo.default_branch && !remove)) {
    throw new GhError(404, `Branch ${branch} not found`);
  }
  const parent = head === undefined ? undefined : getCommit(ctx.tree, repo.id, head);
  // Only the folders on the path are read (and written): the tree may be huge, or a bomb.
  const existing = parent === undefined ? undefined : entryAt(ctx.tree, repo.id, parent.tree, path);
  if (existing?.type === 'tree') throw validation([{ resource: 'Commit', field: 'path', code: 'invalid' }], `${path} is a directory`);
  if (remove) {
    if (existing === undefined) throw notFound();
    if (given === undefined) throw validation([{ resource: 'Commit', field: 'sha', code: 'missing_field' }], '"sha" wasn\'t supplied.');
    if (given !== existing.sha) throw new GhError(409, `${path} does not match ${given}`);
  } else if (existing !== undefined) {
    if (given === undefined) throw validation([{ resource: 'Commit', field: 'sha', code: 'missing_field' }], 'Invalid request.\n\n"sha" wasn\'t supplied.');
    if (given !== existing.sha) throw new GhError(409, `${path} does not match ${given}`);
  } else {
    // A file inside what is now a file ("a/b" when "a" is a file) cannot be made.
    if (parent !== undefined && fileAbove(ctx.tree, repo.id, parent.tree, path) !== undefined) throw validation([{ resource: 'Commit', field: 'path', code: 'invalid' }]);
  }
  const author = personFrom(call, b['author'], 'author', b['committer'] === undefined ? undefined : personFrom(call, b['committer'], 'committer'));
  const committer = personFrom(call, b['committer'], 'committer', b['author'] === undefined ? undefined : author);
  let blobSha: string | undefined;
  const edit = new TreeEditor(ctx.tree, repo.id, parent?.tree ?? null);
  if (remove) edit.set(path, null);
  else {
    blobSha = putBlob(ctx, repo.id, bytes as Uint8Array);
    edit.set(path, { mode: existing?.mode ?? '100644', type: 'blob', sha: blobSha });
  }
  const tree = edit.write((o: GitObject) => putObject(ctx, repo.id, o));
  const commit: CommitObject = { t: 'commit', tree, parents: head === undefined ? [] : [head], author, committer, message };
  const sha = putObject(ctx, repo.id, commit);
  moveRef(call, repo, ref, head ?? null, sha);
  const content = remove ? null : fileObject(repo, path, blobSha as string, 'file', (bytes as Uint8Array).length, branch);
  return { status: remove || existing !== undefined ? 200 : 201, body: { content, commit: presentGitCommit(repo, sha, commit) } };
}

export function putContent(call: Call): { status: number; body: Obj } {
  return writeFile(call, false);
}

export function deleteContent(call: Call): { status: number; body: Obj } {
  return writeFile(call, true);
}

export function getReadme(call: Call): { body: Obj | Obj[] } {
  const repo = loadRepo(call);
  const ref = str(call.req.query, 'ref') ?? repo.default_branch;
  const head = resolveCommitish(call.ctx.tree, repo.id, ref);
  const c = head === undefined ? undefined : getCommit(call.ctx.tree, repo.id, head);
  const root = c === undefined ? undefined : getObject(call.ctx.tree, repo.id, c.tree);
  const readme = root?.t === 'tree' ? root.entries.find((e) => e.type === 'blob' && /^readme(\.|$)/i.test(e.name)) : undefined;
  if (readme === undefined) throw notFound();
  call.req.params['path'] = readme.name;
  return getContent(call);
}

// ------------------------------------------------------------------ commits

/**
 * GitHub's diff limits (https://docs.github.com/en/repositories/creating-and-managing-repositories/repository-limits):
 * at most 300 files in a diff; no file's diff over 20,000 lines or 500 KB, no diff over 1 MB in
 * all. A file over its limit, or past the total, is listed without `patch` (its counts stay):
 * patches of one pair of blobs named by many paths would otherwise multiply an 8 KB push into
 * hundreds of MB.
 */
export const DIFF_LIMITS = {
  files: 300,
  fileBytes: 500 * 1024,
  fileLines: 20_000,
  totalBytes: 1024 * 1024,
  /**
   * Ours: the line alignments one list of files may cost, in cells of their tables: sixteen
   * files of 500 changed lines, or thousands of ordinary edits. A push of 3,000 files of 500
   * changed lines each asks for 750M (~4.6 s in V8, far more in QuickJS); past the budget a
   * file's counts are its changed lines, unaligned.
   */
  cells: 4_000_000,
};

/** How many files a commit's answer lists in all, a page at a time: "up to a limit of 3000 files" (repos.getCommit). */
const COMMIT_FILES_LIMIT = 3000;

/**
 * The `files` of a diff as GitHub lists them (the first 300), with patches within `DIFF_LIMITS`.
 * `counted` (diffTotals' per pair of blobs) gives the counts shown, so they add up to the totals
 * shown beside them even where the two ran out of alignment budget at different files.
 */
export function presentFiles(tree: ReadTree, repo: StoredRepo, ref: string, changes: FileChange[], counted?: Map<string, LineCounts>): Obj[] {
  // Many files may share one pair of blobs: each pair is read and compared once, but its patch
  // counts against the total each time it is shown.
  const diffs = new Map<string, ReturnType<typeof lineDiff>>();
  let left = DIFF_LIMITS.totalBytes;
  const budget = { cells: DIFF_LIMITS.cells };
  return changes.slice(0, DIFF_LIMITS.files).map((f) => {
    const key = `${f.previousSha}:${f.sha}`;
    let d = diffs.get(key);
    // Past the total no patch is shown, so none is built; the counts are still needed.
    if (d === undefined) diffs.set(key, (d = lineDiff(tree, repo.id, f.previousSha, f.sha, { bytes: left === 0 ? 0 : DIFF_LIMITS.fileBytes, lines: DIFF_LIMITS.fileLines }, budget)));
    const n = counted?.get(key) ?? d;
    const out: Obj = {
      sha: f.sha ?? f.previousSha,
      filename: f.filename,
      status: f.status,
      additions: n.additions,
      deletions: n.deletions,
      changes: n.additions + n.deletions,
      blob_url: `${WEB}/${fullName(repo)}/blob/${ref}/${f.filename}`,
      raw_url: `${WEB}/${fullName(repo)}/raw/${ref}/${f.filename}`,
      contents_url: `${repoApi(repo)}/contents/${f.filename}?ref=${ref}`,
    };
    if (d.patch !== undefined && d.patch.length <= left) {
      out['patch'] = d.patch;
      left -= d.patch.length;
    } else if (d.patch !== undefined) left = 0;
    return out;
  });
}

export interface LineCounts { additions: number; deletions: number }

/**
 * Additions and deletions over every file of `changes`, and per pair of blobs (`counted`, for
 * presentFiles): no patch is built, and a pair shared by many paths is compared once.
 */
export function diffTotals(tree: ReadTree, repo: StoredRepo, changes: FileChange[]): LineCounts & { counted: Map<string, LineCounts> } {
  const counted = new Map<string, LineCounts>();
  const budget = { cells: DIFF_LIMITS.cells };
  let additions = 0, deletions = 0;
  for (const f of changes) {
    const key = `${f.previousSha}:${f.sha}`;
    let d = counted.get(key);
    if (d === undefined) counted.set(key, (d = lineDiff(tree, repo.id, f.previousSha, f.sha, { bytes: 0, lines: 0 }, budget)));
    additions += d.additions;
    deletions += d.deletions;
  }
  return { additions, deletions, counted };
}

/**
 * The files that differ between two commits' trees (`undefined`: no commit), the first `limit`
 * in path order; the walk skips what the two trees share (`diffTrees`). A walk past its budget
 * is GitHub's 422 for a diff it gives up on.
 */
export function changedFiles(tree: ReadTree, repo: StoredRepo, from: string | undefined, to: string | undefined, limit: number, resource = 'Commit'): FileChange[] {
  const treeOf = (sha: string | undefined): string | null => (sha === undefined ? undefined : getCommit(tree, repo.id, sha))?.tree ?? null;
  return treeWork(() => diffTrees(tree, repo.id, treeOf(from), treeOf(to), limit).changes, resource);
}

export function listCommits(call: Call): { body: Obj[] } {
  const { ctx } = call;
  const repo = loadRepo(call);
  const from = str(call.req.query, 'sha') ?? repo.default_branch;
  const head = resolveCommitish(ctx.tree, repo.id, from);
  if (head === undefined) {
    if (listIsEmpty(ctx.tree, repo)) throw new GhError(409, 'Git Repository is empty.');
    throw new GhError(404, `No commit found for SHA: ${from}`);
  }
  let commits = walk(ctx.tree, repo.id, [head]);
  const path = str(call.req.query, 'path');
  const author = str(call.req.query, 'author');
  const since = instantParam(call.req.query, 'since');
  const until = instantParam(call.req.query, 'until');
  if (author !== undefined) {
    const a = author.toLowerCase();
    commits = commits.filter((c) => c.commit.author.email.toLowerCase() === a || c.commit.author.name.toLowerCase() === a || (ctx.tree.get<{ login: string }>('user_email', c.commit.author.email.toLowerCase())?.login ?? '') === a);
  }
  if (since !== undefined) commits = commits.filter((c) => Date.parse(c.commit.committer.date) >= since);
  if (until !== undefined) commits = commits.filter((c) => Date.parse(c.commit.committer.date) <= until);
  if (path !== undefined && path !== '') {
    const entryIn = pathInTrees(ctx.tree, repo.id, cleanPath(path));
    const shaAt = (sha: string | undefined): string | undefined => {
      const c = sha === undefined ? undefined : getCommit(ctx.tree, repo.id, sha);
      return c === undefined ? undefined : entryIn(c.tree)?.sha;
    };
    commits = commits.filter((c) => shaAt(c.sha) !== shaAt(c.commit.parents[0]));
  }
  return { body: paginate(call, commits).map((c) => presentCommit(ctx.tree, repo, c.sha, c.commit)) };
}

export function getCommitRoute(call: Call): { body: Obj } {
  const { ctx } = call;
  const repo = loadRepo(call);
  const ref = call.req.params['ref'] ?? '';
  const sha = resolveCommitish(ctx.tree, repo.id, ref);
  if (sha === undefined) throw new GhError(422, `No commit found for SHA: ${ref}`);
  const c = getCommit(ctx.tree, repo.id, sha) as CommitObject;
  // Past 300 files, "the response will include pagination link headers for the remaining files,
  // up to a limit of 3000 files. Each page contains the static commit information": 300 a page
  // unless per_page asks for fewer. The stats are the whole list's.
  const changes = changedFiles(ctx.tree, repo, c.parents[0], sha, COMMIT_FILES_LIMIT);
  const pp = str(call.req.query, 'per_page');
  const asked = pageOf(call.req, DIFF_LIMITS.files);
  const page = asked.page;
  const perPage = pp !== undefined && /^\d+$/.test(pp) && Number(pp) >= 1 ? asked.perPage : DIFF_LIMITS.files;
  pageLinks(call, changes.length, perPage);
  const { additions, deletions, counted } = diffTotals(ctx.tree, repo, changes);
  const files = presentFiles(ctx.tree, repo, sha, changes.slice((page - 1) * perPage, page * perPage), counted);
  return { body: { ...presentCommit(ctx.tree, repo, sha, c), stats: { total: additions + deletions, additions, deletions }, files } };
}

// ------------------------------------------------------------------ compare

export interface Comparison {
  base: string;
  head: string;
  mergeBase: string | undefined;
  ahead: { sha: string; commit: CommitObject }[];
  behind: number;
}

export function compareShas(tree: ReadTree, repo: StoredRepo, base: string, head: string): Comparison {
  const p = paint(tree, repo.id, base, head);
  return { base, head, mergeBase: p.mergeBase, ahead: p.ahead, behind: p.behind };
}

export function compare(call: Call): { body: Obj } {
  const { ctx } = call;
  const repo = loadRepo(call);
  const basehead = call.req.params['basehead'] ?? '';
  const dots = basehead.indexOf('...');
  const two = dots < 0 ? basehead.indexOf('..') : -1;
  if (dots < 0 && two < 0) throw notFound();
  const baseName = basehead.slice(0, dots >= 0 ? dots : two);
  const headName = basehead.slice(dots >= 0 ? dots + 3 : two + 2);
  const resolve = (name: string): string | undefined => {
    // `owner:branch` names a branch of this repository when owner is this repository's owner.
    const colon = name.indexOf(':');
    if (colon > 0 && name.slice(0, colon).toLowerCase() === repo.owner.toLowerCase()) name = name.slice(colon + 1);
    return resolveCommitish(ctx.tree, repo.id, name);
  };
  const base = resolve(baseName), head = resolve(headName);
  if (base === undefined || head === undefined) throw notFound();
  const cmp = compareShas(ctx.tree, repo, base, head);
  if (cmp.mergeBase === undefined) throw new GhError(404, `No common ancestor between ${baseName} and ${headName}.`);
  const status = cmp.ahead.length === 0 && cmp.behind === 0 ? 'identical' : cmp.behind === 0 ? 'ahead' : cmp.ahead.length === 0 ? 'behind' : 'diverged';
  const mbCommit = getCommit(ctx.tree, repo.id, cmp.mergeBase) as CommitObject;
  const baseCommit = getCommit(ctx.tree, repo.id, base) as CommitObject;
  const files = presentFiles(ctx.tree, repo, head, changedFiles(ctx.tree, repo, cmp.mergeBase, head, DIFF_LIMITS.files));
  const u = `${WEB}/${fullName(repo)}/compare/${basehead}`;
  const page = paginate(call, cmp.ahead);
  return {
    body: {
      url: `${repoApi(repo)}/compare/${basehead}`,
      html_url: u,
      permalink_url: `${WEB}/${fullName(repo)}/compare/${repo.owner}:${base.slice(0, 7)}...${repo.owner}:${head.slice(0, 7)}`,
      diff_url: `${u}.diff`,
      patch_url: `${u}.patch`,
      base_commit: presentCommit(ctx.tree, repo, base, baseCommit),
      merge_base_commit: presentCommit(ctx.tree, repo, cmp.mergeBase, mbCommit),
      status,
      ahead_by: cmp.ahead.length,
      behind_by: cmp.behind,
      total_commits: cmp.ahead.length,
      commits: page.map((c) => presentCommit(ctx.tree, repo, c.sha, c.commit)),
      files,
    },
  };
}
