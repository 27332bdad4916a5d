/**
 * Pull requests: an issue (same number sequence, title, body, state, labels) plus
 * `pull/<repo id>:<number, 10 digits>` → StoredPull (branches, merge state). Merging is a
 * file-level three-way merge (merge commit, squash, or rebase); `mergeable` is false when
 * both sides changed the same file differently.
 *
 * Reviews: `review/<repo id>:<number>:<id>` → StoredReview.
 */
import type { ReadTree } from '../../../../sdk/twin/index.js';
import {
  getCommit, getRef, mergeTrees, putObject, resolveCommitish, type CommitObject, type GitObject,
} from '../lib/git.js';
import {
  TEXT_LIMITS, bodyObject, invalidField, isoNow, maxLength, nextNumber, optBool, optString, pad, paginate, reqString, sortBy, str, type Call, type Obj,
} from '../lib/http.js';
import { WEB, nodeId } from '../lib/addresses.js';
import { GhError, forbidden, notFound, validation } from '../errors.js';
import { loadUser, simpleUser, simpleUserByLogin, type Caller } from '../lib/users.js';
import { changedFiles, compareShas, diffTotals, presentFiles } from './code.js';
import { moveRef, personFrom, presentCommit, treeWork } from './gitdata.js';
import { deliver } from './hooks.js';
import { newReviewComment, saveReviewComment } from './review_comments.js';
import {
  applyIssueUpdate, association, createIssueRecord, issueEvent, issuesOf, loadIssue, lookups, presentIssue, pullPresenter, saveIssue, sortIssues,
  type IssueLookups, type StoredIssue,
} from './issues.js';
import { canRead, fullName, loadRepo, presentRepo, repoApi, type StoredRepo } from './repos.js';
import { listRange } from '../lib/records.js';

export interface StoredPull {
  number: number;
  head_ref: string;
  head_sha: string;
  base_ref: string;
  base_sha: string;
  draft: boolean;
  maintainer_can_modify: boolean;
  merged: boolean;
  merged_at: string | null;
  merged_by: string | null;
  merge_commit_sha: string | null;
  /** Logins (lower case) asked to review; a submitted review takes its author off. */
  requested_reviewers?: string[];
}

export interface StoredReview { id: number; number: number; user: string; body: string; state: string; submitted_at: string | null; commit_id: string }

const pullKey = (repoId: number, n: number): string => `${repoId}:${pad(n)}`;

function loadPull(call: Call, repo: StoredRepo): { issue: StoredIssue; pull: StoredPull } {
  const issue = loadIssue(call.ctx.tree, repo, call.req.params['pull_number']);
  const pull = call.ctx.tree.get<StoredPull>('pull', pullKey(repo.id, issue.number));
  if (!issue.pull || pull === undefined) throw notFound();
  return { issue, pull };
}

/** The live tips: an open pull request follows its branches; a closed one keeps what it had. */
function tips(tree: ReadTree, repo: StoredRepo, issue: StoredIssue, pull: StoredPull): { head: string; base: string } {
  if (issue.state === 'closed') return { head: pull.head_sha, base: pull.base_sha };
  return {
    head: getRef(tree, repo.id, `refs/heads/${pull.head_ref}`) ?? pull.head_sha,
    base: getRef(tree, repo.id, `refs/heads/${pull.base_ref}`) ?? pull.base_sha,
  };
}

/** A commit's tree id (null for none). */
function treeOf(tree: ReadTree, repo: StoredRepo, sha: string | undefined): string | null {
  return (sha === undefined ? undefined : getCommit(tree, repo.id, sha))?.tree ?? null;
}

/**
 * The merged tree's id, or 'conflict': a file-level three-way merge of the trees (`mergeTrees`),
 * whose cost is what the two sides changed. With `put`, new folders are written; without, only
 * hashed (is it mergeable?).
 */
function mergedFiles(tree: ReadTree, repo: StoredRepo, base: string, head: string, put?: (o: GitObject) => string): string | 'conflict' {
  const cmp = compareShas(tree, repo, base, head);
  return treeWork(() => mergeTrees(tree, repo.id, treeOf(tree, repo, cmp.mergeBase), treeOf(tree, repo, base), treeOf(tree, repo, head), put), 'PullRequest');
}

/** GitHub's limit of a pull request's files list: "Responses include a maximum of 3000 files" (pulls.listFiles). */
const PULL_FILES_LIMIT = 3000;

/** What every pull request of one repository shows alike (its owner, the repository object), made once per answer. */
interface PullShared { lk: IssueLookups; owner?: Obj; repo?: Obj }

function branchEnd(call: Call, repo: StoredRepo, ref: string, sha: string, shared: PullShared): Obj {
  if (shared.owner === undefined) {
    const owner = loadUser(call.ctx.tree, repo.owner);
    shared.owner = owner === undefined ? simpleUserByLogin(call.ctx.tree, repo.owner) : simpleUser(owner);
  }
  shared.repo ??= presentRepo(call.ctx.tree, repo, null, false);
  return { label: `${repo.owner}:${ref}`, ref, sha, user: shared.owner, repo: shared.repo };
}

/** A pull request. A list passes one `shared` for all its items, so the repository's labels, milestones and issues are read once. */
export function presentPull(call: Call, repo: StoredRepo, issue: StoredIssue, pull: StoredPull, full: boolean, shared: PullShared = { lk: lookups(call.ctx.tree, repo) }): Obj {
  const { tree } = call.ctx;
  const { lk } = shared;
  const t = tips(tree, repo, issue, pull);
  const asIssue = presentIssue(tree, repo, issue, lk);
  const u = `${repoApi(repo)}/pulls/${issue.number}`;
  const html = `${WEB}/${fullName(repo)}/pull/${issue.number}`;
  const out: Obj = {
    url: u, id: issue.id, node_id: nodeId('PullRequest', issue.id), html_url: html, diff_url: `${html}.diff`, patch_url: `${html}.patch`,
    issue_url: `${repoApi(repo)}/issues/${issue.number}`, number: issue.number, state: issue.state, locked: issue.locked, title: issue.title,
    user: asIssue['user'], body: issue.body, labels: asIssue['labels'], milestone: asIssue['milestone'], active_lock_reason: issue.active_lock_reason,
    created_at: issue.created_at, updated_at: issue.updated_at, closed_at: issue.closed_at, merged_at: pull.merged_at,
    merge_commit_sha: pull.merge_commit_sha, assignee: asIssue['assignee'], assignees: asIssue['assignees'],
    requested_reviewers: (pull.requested_reviewers ?? []).map((l) => lk.user(l)), requested_teams: [],
    head: branchEnd(call, repo, pull.head_ref, t.head, shared), base: branchEnd(call, repo, pull.base_ref, t.base, shared),
    _links: {
      self: { href: u }, html: { href: html }, issue: { href: `${repoApi(repo)}/issues/${issue.number}` }, comments: { href: `${repoApi(repo)}/issues/${issue.number}/comments` },
      review_comments: { href: `${u}/comments` }, review_comment: { href: `${repoApi(repo)}/pulls/comments{/number}` }, commits: { href: `${u}/commits` },
      statuses: { href: `${repoApi(repo)}/statuses/${t.head}` },
    },
    author_association: lk.association(issue.user), auto_merge: null, draft: pull.draft,
    commits_url: `${u}/commits`, review_comments_url: `${u}/comments`, review_comment_url: `${repoApi(repo)}/pulls/comments{/number}`,
    comments_url: `${repoApi(repo)}/issues/${issue.number}/comments`, statuses_url: `${repoApi(repo)}/statuses/${t.head}`,
  };
  if (full) {
    const cmp = compareShas(tree, repo, t.base, t.head);
    const files = changedFiles(tree, repo, cmp.mergeBase, t.head, PULL_FILES_LIMIT, 'PullRequest');
    const totals = diffTotals(tree, repo, files);
    let mergeable: boolean | null = null;
    if (issue.state === 'open') mergeable = mergedFiles(tree, repo, t.base, t.head) !== 'conflict';
    out['merged'] = pull.merged;
    out['mergeable'] = mergeable;
    out['rebaseable'] = mergeable;
    out['mergeable_state'] = issue.state !== 'open' ? 'unknown' : mergeable ? (pull.draft ? 'draft' : 'clean') : 'dirty';
    out['merged_by'] = pull.merged_by === null ? null : simpleUserByLogin(tree, pull.merged_by);
    out['comments'] = issue.comments;
    out['review_comments'] = 0;
    out['maintainer_can_modify'] = pull.maintainer_can_modify;
    out['commits'] = pull.merged ? Math.max(1, cmp.ahead.length) : cmp.ahead.length;
    out['additions'] = totals.additions;
    out['deletions'] = totals.deletions;
    out['changed_files'] = files.length;
  }
  return out;
}

pullPresenter.fn = (call, repo, issue) => {
  const pull = call.ctx.tree.get<StoredPull>('pull', pullKey(repo.id, issue.number));
  return pull === undefined ? presentIssue(call.ctx.tree, repo, issue) : presentPull(call, repo, issue, pull, true);
};

function headRefOf(repo: StoredRepo, raw: string): string | undefined {
  const colon = raw.indexOf(':');
  if (colon < 0) return raw;
  // Pull requests from forks are not modelled: the head must be a branch of this repository.
  return raw.slice(0, colon).toLowerCase() === repo.owner.toLowerCase() ? raw.slice(colon + 1) : undefined;
}

export function createPull(call: Call): { status: number; body: Obj } {
  const { ctx } = call;
  const repo = loadRepo(call);
  if (repo.archived) throw forbidden('Repository was archived so is read-only.');
  const b = bodyObject(call.req);
  const headRaw = reqString(b, 'head', 'PullRequest');
  const baseRef = reqString(b, 'base', 'PullRequest');
  const headRef = headRefOf(repo, headRaw);
  const baseSha = getRef(ctx.tree, repo.id, `refs/heads/${baseRef}`);
  if (baseSha === undefined) throw validation([{ resource: 'PullRequest', field: 'base', code: 'invalid' }]);
  const headSha = headRef === undefined ? undefined : getRef(ctx.tree, repo.id, `refs/heads/${headRef}`);
  if (headRef === undefined || headSha === undefined) throw validation([{ resource: 'PullRequest', field: 'head', code: 'invalid' }]);
  const draft = optBool(b, 'draft', 'PullRequest') ?? false;
  const mcm = optBool(b, 'maintainer_can_modify', 'PullRequest') ?? true;
  const cmp = compareShas(ctx.tree, repo, baseSha, headSha);
  if (cmp.ahead.length === 0) throw validation([{ resource: 'PullRequest', code: 'custom', message: `No commits between ${baseRef} and ${headRef}` }]);
  for (const i of issuesOf(ctx.tree, repo.id)) {
    if (!i.pull || i.state !== 'open') continue;
    const p = ctx.tree.get<StoredPull>('pull', pullKey(repo.id, i.number));
    if (p !== undefined && p.head_ref === headRef && p.base_ref === baseRef) {
      throw validation([{ resource: 'PullRequest', code: 'custom', message: `A pull request already exists for ${repo.owner}:${headRef}.` }]);
    }
  }
  let issue: StoredIssue;
  if (b['issue'] !== undefined) {
    // Turning an existing issue into a pull request.
    issue = loadIssue(ctx.tree, repo, String(b['issue']));
    if (issue.pull) throw validation([{ resource: 'PullRequest', field: 'issue', code: 'invalid' }]);
    issue = { ...issue, pull: true, updated_at: isoNow(ctx) };
    saveIssue(ctx, issue);
  } else issue = createIssueRecord(call, repo, b, true);
  const pull: StoredPull = {
    number: issue.number, head_ref: headRef, head_sha: headSha, base_ref: baseRef, base_sha: baseSha, draft, maintainer_can_modify: mcm,
    merged: false, merged_at: null, merged_by: null, merge_commit_sha: null,
  };
  ctx.tree.put('pull', pullKey(repo.id, issue.number), pull);
  const body = presentPull(call, repo, issue, pull, true);
  deliver(call, repo, 'pull_request', { action: 'opened', number: issue.number, pull_request: body });
  call.headers['location'] = body['url'] as string;
  return { status: 201, body };
}

export function getPull(call: Call): { body: Obj } {
  const repo = loadRepo(call);
  const { issue, pull } = loadPull(call, repo);
  return { body: presentPull(call, repo, issue, pull, true) };
}

export function listPulls(call: Call): { body: Obj[] } {
  const { ctx } = call;
  const repo = loadRepo(call);
  const q = call.req.query;
  const state = str(q, 'state') ?? 'open';
  if (!['open', 'closed', 'all'].includes(state)) throw invalidField('PullRequest', 'state', state);
  const head = str(q, 'head');
  const base = str(q, 'base');
  const all = issuesOf(ctx.tree, repo.id);
  // Read once for every item: labels, milestones with their counts, users, the repository object.
  const shared: PullShared = { lk: lookups(ctx.tree, repo) };
  let items = all.filter((i) => i.pull && (state === 'all' || i.state === state));
  const pulls = new Map(items.map((i) => [i.number, ctx.tree.get<StoredPull>('pull', pullKey(repo.id, i.number)) as StoredPull]));
  if (head !== undefined) {
    const ref = headRefOf(repo, head);
    items = items.filter((i) => ref !== undefined && pulls.get(i.number)?.head_ref === ref);
  }
  if (base !== undefined) items = items.filter((i) => pulls.get(i.number)?.base_ref === base);
  const sort = str(q, 'sort') ?? 'created';
  const direction = (str(q, 'direction') ?? (sort === 'long-running' ? 'asc' : 'desc')) === 'asc' ? 'asc' : 'desc';
  items = sort === 'popularity' ? sortIssues(items, 'comments', direction) : sort === 'updated' ? sortIssues(items, 'updated', direction) : sortIssues(items, 'created', direction);
  return { body: paginate(call, items).map((i) => presentPull(call, repo, i, pulls.get(i.number) as StoredPull, false, shared)) };
}

export function updatePull(call: Call): { body: Obj } {
  const { ctx } = call;
  const repo = loadRepo(call);
  const { issue, pull } = loadPull(call, repo);
  const b = bodyObject(call.req);
  const base = optString(b, 'base', 'PullRequest');
  if (base !== undefined && getRef(ctx.tree, repo.id, `refs/heads/${base}`) === undefined) throw validation([{ resource: 'PullRequest', field: 'base', code: 'invalid' }]);
  const state = optString(b, 'state', 'PullRequest');
  if (state === 'open' && pull.merged) throw validation([{ resource: 'PullRequest', code: 'custom', message: 'state cannot be changed. The pull request cannot be reopened.' }]);
  const mcm = optBool(b, 'maintainer_can_modify', 'PullRequest');
  const t = tips(ctx.tree, repo, issue, pull);
  const fields: Obj = {};
  for (const k of ['title', 'body', 'state']) if (b[k] !== undefined) fields[k] = b[k];
  // Closing freezes the tips the closed pull request shows.
  const next: StoredPull = { ...pull, head_sha: t.head, base_sha: t.base };
  if (base !== undefined) next.base_ref = base;
  if (mcm !== undefined) next.maintainer_can_modify = mcm;
  ctx.tree.put('pull', pullKey(repo.id, issue.number), next);
  applyIssueUpdate(call, repo, issue, fields);
  return { body: presentPull(call, repo, issue, next, true) };
}

export function listPullCommits(call: Call): { body: Obj[] } {
  const repo = loadRepo(call);
  const { issue, pull } = loadPull(call, repo);
  const t = tips(call.ctx.tree, repo, issue, pull);
  const cmp = compareShas(call.ctx.tree, repo, t.base, t.head);
  return { body: paginate(call, cmp.ahead.slice(0, 250)).map((c) => presentCommit(call.ctx.tree, repo, c.sha, c.commit)) };
}

export function listPullFiles(call: Call): { body: Obj[] } {
  const { tree } = call.ctx;
  const repo = loadRepo(call);
  const { issue, pull } = loadPull(call, repo);
  const t = tips(tree, repo, issue, pull);
  const cmp = compareShas(tree, repo, t.base, t.head);
  // Only the page shown is diffed line by line.
  const files = changedFiles(tree, repo, cmp.mergeBase, t.head, PULL_FILES_LIMIT, 'PullRequest');
  return { body: presentFiles(tree, repo, t.head, paginate(call, files)) };
}

export function checkMerged(call: Call): { status: number } {
  const repo = loadRepo(call);
  const { pull } = loadPull(call, repo);
  if (!pull.merged) throw notFound();
  return { status: 204 };
}

export function mergePull(call: Call): { body: Obj } {
  const { ctx } = call;
  const repo = loadRepo(call, 'write');
  const { issue, pull } = loadPull(call, repo);
  const b = bodyObject(call.req);
  const method = optString(b, 'merge_method', 'PullRequest') ?? 'merge';
  if (!['merge', 'squash', 'rebase'].includes(method)) throw invalidField('PullRequest', 'merge_method', method);
  const allowed = method === 'merge' ? repo.allow_merge_commit : method === 'squash' ? repo.allow_squash_merge : repo.allow_rebase_merge;
  if (!allowed) throw new GhError(405, `${method === 'merge' ? 'Merge commits' : method === 'squash' ? 'Squash merges' : 'Rebase merges'} are not allowed on this repository.`);
  const title = optString(b, 'commit_title', 'PullRequest');
  const message = optString(b, 'commit_message', 'PullRequest');
  const expected = optString(b, 'sha', 'PullRequest');
  if (issue.state !== 'open' || pull.merged) throw new GhError(405, 'Pull Request is not mergeable');
  if (pull.draft) throw new GhError(405, 'Pull Request is still a draft');
  const t = tips(ctx.tree, repo, issue, pull);
  if (expected !== undefined && expected !== t.head) throw new GhError(409, 'Head branch was modified. Review and try the merge again.');
  const cmp = compareShas(ctx.tree, repo, t.base, t.head);
  const put = (o: GitObject): string => putObject(ctx, repo.id, o);
  // The rebase writes its own trees; a merge or squash writes the merged one.
  const merged = mergedFiles(ctx.tree, repo, t.base, t.head, method === 'rebase' ? undefined : put);
  if (merged === 'conflict') throw new GhError(405, 'Pull Request is not mergeable');
  const me = personFrom(call, undefined, 'committer');
  let result: string;
  if (method === 'rebase') {
    let current = t.base;
    for (const c of cmp.ahead) {
      const tree = treeWork(() => mergeTrees(ctx.tree, repo.id, treeOf(ctx.tree, repo, c.commit.parents[0]), treeOf(ctx.tree, repo, current), c.commit.tree, put), 'PullRequest');
      if (tree === 'conflict') throw new GhError(405, 'This branch can\'t be rebased');
      current = putObject(ctx, repo.id, { t: 'commit', tree, parents: [current], author: c.commit.author, committer: me, message: c.commit.message });
    }
    result = current;
  } else {
    const tree = merged;
    let text: string;
    if (method === 'merge') {
      text = `${title ?? `Merge pull request #${issue.number} from ${repo.owner}/${pull.head_ref}`}\n\n${message ?? issue.title}`;
    } else {
      const body = message ?? cmp.ahead.map((c) => `* ${c.commit.message}`).join('\n\n');
      text = `${title ?? `${issue.title} (#${issue.number})`}${body === '' ? '' : `\n\n${body}`}`;
    }
    const first = cmp.ahead[0]?.commit.author;
    const commit: CommitObject = {
      t: 'commit', tree, parents: method === 'merge' ? [t.base, t.head] : [t.base],
      author: method === 'squash' && first !== undefined ? { ...first, date: me.date } : me, committer: me, message: text,
    };
    result = putObject(ctx, repo.id, commit);
  }
  const now = isoNow(ctx);
  const next: StoredPull = { ...pull, head_sha: t.head, base_sha: t.base, merged: true, merged_at: now, merged_by: (call.caller as Caller).login.toLowerCase(), merge_commit_sha: result };
  ctx.tree.put('pull', pullKey(repo.id, issue.number), next);
  moveRef(call, repo, `refs/heads/${pull.base_ref}`, t.base, result);
  const closed: StoredIssue = { ...issue, state: 'closed', state_reason: null, closed_at: now, closed_by: (call.caller as Caller).login.toLowerCase(), updated_at: now };
  saveIssue(ctx, closed);
  repo.open_issues_count = Math.max(0, repo.open_issues_count - 1);
  ctx.tree.put('repo', String(repo.id), repo);
  if (repo.delete_branch_on_merge && pull.head_ref !== repo.default_branch) moveRef(call, repo, `refs/heads/${pull.head_ref}`, t.head, null);
  issueEvent(call, repo, closed, 'closed');
  return { body: { sha: result, merged: true, message: 'Pull Request successfully merged' } };
}

// ------------------------------------------------------------------ reviews

const reviewPrefix = (repoId: number, n: number): string => `${repoId}:${pad(n)}:`;

function presentReview(call: Call, repo: StoredRepo, r: StoredReview): Obj {
  const html = `${WEB}/${fullName(repo)}/pull/${r.number}#pullrequestreview-${r.id}`;
  const out: Obj = {
    id: r.id, node_id: nodeId('PullRequestReview', r.id), user: simpleUserByLogin(call.ctx.tree, r.user), body: r.body, state: r.state,
    html_url: html, pull_request_url: `${repoApi(repo)}/pulls/${r.number}`, author_association: association(call.ctx.tree, repo, r.user),
    _links: { html: { href: html }, pull_request: { href: `${repoApi(repo)}/pulls/${r.number}` } }, commit_id: r.commit_id,
  };
  if (r.submitted_at !== null) out['submitted_at'] = r.submitted_at;
  return out;
}

const EVENTS: Record<string, string> = { APPROVE: 'APPROVED', REQUEST_CHANGES: 'CHANGES_REQUESTED', COMMENT: 'COMMENTED' };

/** A review's body: at most 65,536 characters, GitHub's cap on every comment. */
function reviewBody(body: string): string {
  maxLength(body, TEXT_LIMITS.body, 'PullRequestReview', 'body');
  return body;
}

function checkReviewEvent(call: Call, issue: StoredIssue, event: string, body: string): string {
  const state = EVENTS[event];
  if (state === undefined) throw invalidField('PullRequestReview', 'event', event);
  const own = (call.caller as Caller).login.toLowerCase() === issue.user;
  if (own && event === 'APPROVE') throw validation([{ resource: 'PullRequestReview', code: 'custom', message: 'Can not approve your own pull request' }], 'Unprocessable Entity');
  if (own && event === 'REQUEST_CHANGES') throw validation([{ resource: 'PullRequestReview', code: 'custom', message: 'Can not request changes on your own pull request' }], 'Unprocessable Entity');
  if (event !== 'APPROVE' && body.trim() === '') throw validation([{ resource: 'PullRequestReview', field: 'body', code: 'missing_field' }], 'Unprocessable Entity');
  return state;
}

export function createReview(call: Call): { body: Obj } {
  const { ctx } = call;
  const repo = loadRepo(call);
  const { issue, pull } = loadPull(call, repo);
  const b = bodyObject(call.req);
  const body = reviewBody(optString(b, 'body', 'PullRequestReview') ?? '');
  const event = optString(b, 'event', 'PullRequestReview');
  const state = event === undefined || event === 'PENDING' ? 'PENDING' : checkReviewEvent(call, issue, event, body);
  const commit = optString(b, 'commit_id', 'PullRequestReview') ?? tips(ctx.tree, repo, issue, pull).head;
  if (resolveCommitish(ctx.tree, repo.id, commit) === undefined) throw validation([{ resource: 'PullRequestReview', field: 'commit_id', code: 'invalid' }]);
  const rawComments = b['comments'] ?? [];
  if (!Array.isArray(rawComments) || rawComments.some((x) => typeof x !== 'object' || x === null)) throw invalidField('PullRequestReview', 'comments', rawComments);
  const head = tips(ctx.tree, repo, issue, pull).head;
  // Checked before anything is written; stored with the review's id below.
  const drafts = (rawComments as Obj[]).map((c) => newReviewComment(call, repo, issue.number, head, c, null));
  const r: StoredReview = { id: nextNumber(ctx, 'review'), number: issue.number, user: (call.caller as Caller).login.toLowerCase(), body, state, submitted_at: state === 'PENDING' ? null : isoNow(ctx), commit_id: commit };
  for (const d of drafts) saveReviewComment(call, repo, { ...d, review_id: r.id });
  ctx.tree.put('review', reviewPrefix(repo.id, issue.number) + pad(r.id), r);
  if (state !== 'PENDING') unrequest(call, repo, pull, r.user);
  const out = presentReview(call, repo, r);
  if (state !== 'PENDING') deliver(call, repo, 'pull_request_review', { action: 'submitted', review: out, pull_request: presentPull(call, repo, issue, pull, false) });
  return { body: out };
}

function reviewsOf(call: Call, repo: StoredRepo, n: number): StoredReview[] {
  const p = reviewPrefix(repo.id, n);
  return listRange<StoredReview>(call.ctx.tree, 'review', p, `${repo.id}:${pad(n)};`).map((i) => i.value);
}

function loadReview(call: Call, repo: StoredRepo, n: number): StoredReview {
  const id = call.req.params['review_id'] ?? '';
  if (!/^\d{1,10}$/.test(id)) throw notFound();
  const r = call.ctx.tree.get<StoredReview>('review', reviewPrefix(repo.id, n) + pad(Number(id)));
  if (r === undefined) throw notFound();
  return r;
}

export function listReviews(call: Call): { body: Obj[] } {
  const repo = loadRepo(call);
  const { issue } = loadPull(call, repo);
  const me = call.caller?.login.toLowerCase();
  // A pending review is visible to its author only.
  const items = reviewsOf(call, repo, issue.number).filter((r) => r.state !== 'PENDING' || r.user === me);
  return { body: paginate(call, sortBy(items, (r) => pad(r.id), 'asc')).map((r) => presentReview(call, repo, r)) };
}

export function getReview(call: Call): { body: Obj } {
  const repo = loadRepo(call);
  const { issue } = loadPull(call, repo);
  return { body: presentReview(call, repo, loadReview(call, repo, issue.number)) };
}

export function submitReview(call: Call): { body: Obj } {
  const { ctx } = call;
  const repo = loadRepo(call);
  const { issue, pull } = loadPull(call, repo);
  const r = loadReview(call, repo, issue.number);
  if (r.user !== (call.caller as Caller).login.toLowerCase()) throw notFound();
  if (r.state !== 'PENDING') throw validation([{ resource: 'PullRequestReview', code: 'custom', message: 'Can not submit a review that is not pending' }], 'Unprocessable Entity');
  const b = bodyObject(call.req);
  const body = reviewBody(optString(b, 'body', 'PullRequestReview') ?? r.body);
  const state = checkReviewEvent(call, issue, reqString(b, 'event', 'PullRequestReview'), body);
  const next: StoredReview = { ...r, body, state, submitted_at: isoNow(ctx) };
  ctx.tree.put('review', reviewPrefix(repo.id, issue.number) + pad(r.id), next);
  unrequest(call, repo, pull, next.user);
  const out = presentReview(call, repo, next);
  deliver(call, repo, 'pull_request_review', { action: 'submitted', review: out, pull_request: presentPull(call, repo, issue, pull, false) });
  return { body: out };
}

export function updateReview(call: Call): { body: Obj } {
  const repo = loadRepo(call);
  const { issue } = loadPull(call, repo);
  const r = loadReview(call, repo, issue.number);
  if (r.user !== (call.caller as Caller).login.toLowerCase()) throw forbidden('You can only edit your own review.');
  const body = reviewBody(reqString(bodyObject(call.req), 'body', 'PullRequestReview'));
  const next = { ...r, body };
  call.ctx.tree.put('review', reviewPrefix(repo.id, issue.number) + pad(r.id), next);
  return { body: presentReview(call, repo, next) };
}

export function deletePendingReview(call: Call): { body: Obj } {
  const repo = loadRepo(call);
  const { issue } = loadPull(call, repo);
  const r = loadReview(call, repo, issue.number);
  if (r.user !== (call.caller as Caller).login.toLowerCase()) throw notFound();
  if (r.state !== 'PENDING') throw validation([{ resource: 'PullRequestReview', code: 'custom', message: 'Can not delete a non-pending review' }], 'Unprocessable Entity');
  call.ctx.tree.delete('review', reviewPrefix(repo.id, issue.number) + pad(r.id));
  return { body: presentReview(call, repo, r) };
}

// ------------------------------------------------------------------ requested reviewers

function unrequest(call: Call, repo: StoredRepo, pull: StoredPull, login: string): void {
  const current = call.ctx.tree.get<StoredPull>('pull', pullKey(repo.id, pull.number)) ?? pull;
  if (!(current.requested_reviewers ?? []).includes(login)) return;
  call.ctx.tree.put('pull', pullKey(repo.id, pull.number), { ...current, requested_reviewers: (current.requested_reviewers ?? []).filter((l) => l !== login) });
}

export function listRequestedReviewers(call: Call): { body: Obj } {
  const repo = loadRepo(call);
  const { pull } = loadPull(call, repo);
  return { body: { users: (pull.requested_reviewers ?? []).map((l) => simpleUserByLogin(call.ctx.tree, l)), teams: [] } };
}

/** POST adds reviewers (each must be able to read the repository, and not be the author); DELETE removes them. */
export function changeRequestedReviewers(call: Call): { status: number; body: Obj } {
  const { ctx } = call;
  const repo = loadRepo(call, 'write');
  const { issue, pull } = loadPull(call, repo);
  const b = bodyObject(call.req);
  const raw = b['reviewers'] ?? [];
  if (!Array.isArray(raw) || raw.some((x) => typeof x !== 'string')) throw invalidField('PullRequest', 'reviewers', raw);
  const logins: string[] = [];
  for (const name of raw as string[]) {
    const u = loadUser(ctx.tree, name);
    if (u === undefined || u.type !== 'User' || (repo.private && !canRead(ctx.tree, { kind: 'token', login: u.login, siteAdmin: u.site_admin, scopes: [] }, repo))) {
      throw validation([{ resource: 'PullRequest', code: 'custom', message: 'Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the ' + `${repo.owner}/${repo.name} repository.` }], 'Reviews may only be requested from collaborators.');
    }
    if (call.req.method === 'POST' && u.login.toLowerCase() === issue.user) throw validation([{ resource: 'PullRequest', code: 'custom', message: 'Review cannot be requested from pull request author.' }], 'Review cannot be requested from pull request author.');
    logins.push(u.login.toLowerCase());
  }
  const current = pull.requested_reviewers ?? [];
  const next = call.req.method === 'POST' ? [...current, ...logins.filter((l) => !current.includes(l))] : current.filter((l) => !logins.includes(l));
  const updated: StoredPull = { ...pull, requested_reviewers: next };
  ctx.tree.put('pull', pullKey(repo.id, issue.number), updated);
  const body = presentPull(call, repo, issue, updated, false);
  const added = next.filter((l) => !current.includes(l)), removed = current.filter((l) => !next.includes(l));
  for (const l of added) deliver(call, repo, 'pull_request', { action: 'review_requested', number: issue.number, pull_request: body, requested_reviewer: simpleUserByLogin(ctx.tree, l) });
  for (const l of removed) deliver(call, repo, 'pull_request', { action: 'review_request_removed', number: issue.number, pull_request: body, requested_reviewer: simpleUserByLogin(ctx.tree, l) });
  return { status: call.req.method === 'POST' ? 201 : 200, body };
}
