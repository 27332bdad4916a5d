/**
 * Pull request review comments (comments on a line of the diff):
 * `review_comment/<repo id>:<id, 10 digits>` → StoredReviewComment. The path must be a file
 * the pull request changes; `line` must be a line of it (the twin does not check that the line
 * is inside a diff hunk, which GitHub does).
 */
import { entryAt, getCommit, getObject, resolveCommitish } from '../lib/git.js';
import {
  TEXT_LIMITS, bodyObject, invalidField, isoNow, maxLength, nextNumber, optString, pad, paginate, reqString, sortBy, str, type Call, type Obj,
} from '../lib/http.js';
import { nodeId } from '../lib/addresses.js';
import { forbidden, notFound, validation } from '../errors.js';
import { listRange } from '../lib/records.js';
import { simpleUserByLogin, type Caller } from '../lib/users.js';
import { deliver } from './hooks.js';
import { association, loadIssue } from './issues.js';
import { canWrite, fullName, loadRepo, repoApi, type StoredRepo } from './repos.js';
import { base64Decode, utf8Decode } from '../lib/bytes.js';

export interface StoredReviewComment {
  id: number; number: number; review_id: number | null; path: string; line: number; side: 'LEFT' | 'RIGHT'; commit_id: string; body: string;
  user: string; in_reply_to_id: number | null; created_at: string; updated_at: string;
}

const key = (repoId: number, id: number): string => `${repoId}:${pad(id)}`;

export function presentReviewComment(call: Call, repo: StoredRepo, c: StoredReviewComment): Obj {
  const u = `${repoApi(repo)}/pulls/comments/${c.id}`;
  const html = `https://github.com/${fullName(repo)}/pull/${c.number}#discussion_r${c.id}`;
  const out: Obj = {
    url: u, pull_request_review_id: c.review_id, id: c.id, node_id: nodeId('PullRequestReviewComment', c.id), diff_hunk: `@@ -${c.line},1 +${c.line},1 @@`,
    path: c.path, position: c.line, original_position: c.line, commit_id: c.commit_id, original_commit_id: c.commit_id, user: simpleUserByLogin(call.ctx.tree, c.user),
    body: c.body, created_at: c.created_at, updated_at: c.updated_at, html_url: html, pull_request_url: `${repoApi(repo)}/pulls/${c.number}`,
    author_association: association(call.ctx.tree, repo, c.user), _links: { self: { href: u }, html: { href: html }, pull_request: { href: `${repoApi(repo)}/pulls/${c.number}` } },
    start_line: null, original_start_line: null, start_side: null, line: c.line, original_line: c.line, side: c.side, subject_type: 'line',
  };
  if (c.in_reply_to_id !== null) out['in_reply_to_id'] = c.in_reply_to_id;
  return out;
}

function lineCount(call: Call, repo: StoredRepo, commit: string, path: string): number | undefined {
  const c = getCommit(call.ctx.tree, repo.id, commit);
  const e = c === undefined ? undefined : entryAt(call.ctx.tree, repo.id, c.tree, path);
  const o = e === undefined ? undefined : getObject(call.ctx.tree, repo.id, e.sha);
  if (o?.t !== 'blob') return undefined;
  const text = utf8Decode(base64Decode(o.b64) ?? new Uint8Array(0));
  return text === '' ? 0 : text.replace(/\n$/, '').split('\n').length;
}

/** A review comment's body: required (not blank, except in a reply or an edit, as before), at most 65,536 characters, GitHub's cap on every comment. */
function commentBody(b: Obj, blankOk = false): string {
  const body = reqString(b, 'body', 'PullRequestReviewComment');
  if (!blankOk && body.trim() === '') throw validation([{ resource: 'PullRequestReviewComment', field: 'body', code: 'missing_field' }]);
  maxLength(body, TEXT_LIMITS.body, 'PullRequestReviewComment', 'body');
  return body;
}

/** Checks and builds a review comment (writes nothing). `head` is the pull request's head commit. */
export function newReviewComment(call: Call, repo: StoredRepo, number: number, head: string, b: Obj, reviewId: number | null): StoredReviewComment {
  const body = commentBody(b);
  const path = reqString(b, 'path', 'PullRequestReviewComment');
  const commit = optString(b, 'commit_id', 'PullRequestReviewComment') ?? head;
  const sha = resolveCommitish(call.ctx.tree, repo.id, commit);
  if (sha === undefined) throw validation([{ resource: 'PullRequestReviewComment', field: 'commit_id', code: 'invalid' }]);
  const rawLine = b['line'] ?? b['position'];
  const line = typeof rawLine === 'number' ? rawLine : NaN;
  const side = (optString(b, 'side', 'PullRequestReviewComment') ?? 'RIGHT') as StoredReviewComment['side'];
  if (side !== 'LEFT' && side !== 'RIGHT') throw invalidField('PullRequestReviewComment', 'side', side);
  const lines = lineCount(call, repo, sha, path);
  if (lines === undefined) throw validation([{ resource: 'PullRequestReviewComment', code: 'custom', field: 'path', message: 'path could not be resolved' }], 'Unprocessable Entity');
  if (!Number.isInteger(line) || line < 1 || (side === 'RIGHT' && line > Math.max(lines, 1))) {
    throw validation([{ resource: 'PullRequestReviewComment', code: 'custom', field: 'line', message: 'line must be part of the diff' }], 'Unprocessable Entity');
  }
  const now = isoNow(call.ctx);
  return { id: 0, number, review_id: reviewId, path, line, side, commit_id: sha, body, user: (call.caller as Caller).login.toLowerCase(), in_reply_to_id: null, created_at: now, updated_at: now };
}

export function saveReviewComment(call: Call, repo: StoredRepo, c: StoredReviewComment): StoredReviewComment {
  const stored = { ...c, id: nextNumber(call.ctx, 'review_comment') };
  call.ctx.tree.put('review_comment', key(repo.id, stored.id), stored);
  return stored;
}

function pullHead(call: Call, repo: StoredRepo): { number: number; head: string } {
  const issue = loadIssue(call.ctx.tree, repo, call.req.params['pull_number']);
  const pull = call.ctx.tree.get<{ head_ref: string; head_sha: string }>('pull', `${repo.id}:${pad(issue.number)}`);
  if (!issue.pull || pull === undefined) throw notFound();
  const live = issue.state === 'open' ? resolveCommitish(call.ctx.tree, repo.id, `refs/heads/${pull.head_ref}`) : undefined;
  return { number: issue.number, head: live ?? pull.head_sha };
}

export function createReviewComment(call: Call): { status: number; body: Obj } {
  const repo = loadRepo(call);
  const { number, head } = pullHead(call, repo);
  const b = bodyObject(call.req);
  let c: StoredReviewComment;
  if (b['in_reply_to'] !== undefined) {
    const parent = load(call, repo, String(b['in_reply_to']));
    const body = commentBody(b, true);
    const now = isoNow(call.ctx);
    c = { ...parent, id: 0, review_id: null, body, user: (call.caller as Caller).login.toLowerCase(), in_reply_to_id: parent.id, created_at: now, updated_at: now };
  } else c = newReviewComment(call, repo, number, head, b, null);
  const stored = saveReviewComment(call, repo, c);
  const out = presentReviewComment(call, repo, stored);
  deliver(call, repo, 'pull_request_review_comment', { action: 'created', comment: out });
  return { status: 201, body: out };
}

export function createReply(call: Call): { status: number; body: Obj } {
  const repo = loadRepo(call);
  pullHead(call, repo);
  const parent = load(call, repo, call.req.params['comment_id'] ?? '');
  const body = commentBody(bodyObject(call.req), true);
  const now = isoNow(call.ctx);
  const stored = saveReviewComment(call, repo, { ...parent, id: 0, review_id: null, body, user: (call.caller as Caller).login.toLowerCase(), in_reply_to_id: parent.id, created_at: now, updated_at: now });
  const out = presentReviewComment(call, repo, stored);
  deliver(call, repo, 'pull_request_review_comment', { action: 'created', comment: out });
  return { status: 201, body: out };
}

function allOf(call: Call, repo: StoredRepo): StoredReviewComment[] {
  return listRange<StoredReviewComment>(call.ctx.tree, 'review_comment', `${repo.id}:`, `${repo.id};`).map((i) => i.value);
}

export function listReviewComments(call: Call): { body: Obj[] } {
  const repo = loadRepo(call);
  const { number } = pullHead(call, repo);
  const direction = (str(call.req.query, 'direction') ?? 'asc') === 'desc' ? 'desc' : 'asc';
  const items = sortBy(allOf(call, repo).filter((c) => c.number === number), (c) => pad(c.id), direction);
  return { body: paginate(call, items).map((c) => presentReviewComment(call, repo, c)) };
}

export function listReviewCommentsForRepo(call: Call): { body: Obj[] } {
  const repo = loadRepo(call);
  const direction = (str(call.req.query, 'direction') ?? 'asc') === 'desc' ? 'desc' : 'asc';
  return { body: paginate(call, sortBy(allOf(call, repo), (c) => pad(c.id), direction)).map((c) => presentReviewComment(call, repo, c)) };
}

function load(call: Call, repo: StoredRepo, raw: string): StoredReviewComment {
  if (!/^\d{1,10}$/.test(raw)) throw notFound();
  const c = call.ctx.tree.get<StoredReviewComment>('review_comment', key(repo.id, Number(raw)));
  if (c === undefined) throw notFound();
  return c;
}

export function getReviewComment(call: Call): { body: Obj } {
  const repo = loadRepo(call);
  return { body: presentReviewComment(call, repo, load(call, repo, call.req.params['comment_id'] ?? '')) };
}

export function updateReviewComment(call: Call): { body: Obj } {
  const repo = loadRepo(call);
  const c = load(call, repo, call.req.params['comment_id'] ?? '');
  if (c.user !== (call.caller as Caller).login.toLowerCase() && !canWrite(call.ctx.tree, call.caller, repo)) throw forbidden('You cannot edit this comment.');
  const body = commentBody(bodyObject(call.req), true);
  const next = { ...c, body, updated_at: isoNow(call.ctx) };
  call.ctx.tree.put('review_comment', key(repo.id, c.id), next);
  const out = presentReviewComment(call, repo, next);
  deliver(call, repo, 'pull_request_review_comment', { action: 'edited', comment: out, changes: { body: { from: c.body } } });
  return { body: out };
}

export function deleteReviewComment(call: Call): { status: number } {
  const repo = loadRepo(call);
  const c = load(call, repo, call.req.params['comment_id'] ?? '');
  if (c.user !== (call.caller as Caller).login.toLowerCase() && !canWrite(call.ctx.tree, call.caller, repo)) throw forbidden('You cannot delete this comment.');
  call.ctx.tree.delete('review_comment', key(repo.id, c.id));
  deliver(call, repo, 'pull_request_review_comment', { action: 'deleted', comment: presentReviewComment(call, repo, c) });
  return { status: 204 };
}
