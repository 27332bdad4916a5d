/**
 * Issues, their comments, labels, milestones and assignees. A pull request is an issue too:
 * it shares the repository's number sequence and is listed by the issues API with a
 * `pull_request` field.
 *
 * - `issue/<repo id>:<number, 10 digits>` → StoredIssue;
 * - `label/<repo id>:<name, lower case>` → StoredLabel (issues keep label ids, so a rename holds);
 * - `milestone/<repo id>:<number, 10 digits>` → StoredMilestone;
 * - `comment/<repo id>:<id, 10 digits>` → StoredComment, and
 *   `issue_comment/<repo id>:<number>:<id>` → `{}` so an issue's comments are one range read.
 */
import type { ReadTree, TwinContext } from '../../../../sdk/twin/index.js';
import {
  TEXT_LIMITS, bodyObject, counterNext, invalidField, isoNow, maxLength, nextNumber, optString, optStringArray, pad, pageLinks, pageOf, paginate, instantParam, reqString, sortBy, str, type Call, type Obj,
} from '../lib/http.js';
import { WEB, nodeId } from '../lib/addresses.js';
import { GhError, forbidden, notFound, validation } from '../errors.js';
import { loadUser, simpleUser, simpleUserByLogin, type Caller } from '../lib/users.js';
import { deliver, listens } from './hooks.js';
import { allRepos, canRead, canWrite, fullName, loadRepo, permissionOf, presentRepo, repoApi, saveRepo, type StoredRepo } from './repos.js';
import { listRange } from '../lib/records.js';

export interface StoredIssue {
  id: number;
  repoId: number;
  number: number;
  title: string;
  body: string | null;
  user: string;
  state: 'open' | 'closed';
  state_reason: string | null;
  locked: boolean;
  active_lock_reason: string | null;
  labels: number[];
  assignees: string[];
  milestone: number | null;
  comments: number;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
  closed_by: string | null;
  pull: boolean;
}

export interface StoredLabel { id: number; name: string; color: string; description: string | null; default: boolean }

export interface StoredMilestone {
  id: number;
  number: number;
  title: string;
  description: string | null;
  state: 'open' | 'closed';
  due_on: string | null;
  creator: string;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
}

export interface StoredComment { id: number; repoId: number; issue: number; body: string; user: string; created_at: string; updated_at: string }

const issueKey = (repoId: number, n: number): string => `${repoId}:${pad(n)}`;

// ------------------------------------------------------------------ reading

export function loadIssue(tree: ReadTree, repo: StoredRepo, raw: string | undefined): StoredIssue {
  if (raw === undefined || !/^\d{1,10}$/.test(raw)) throw notFound();
  const issue = tree.get<StoredIssue>('issue', issueKey(repo.id, Number(raw)));
  if (issue === undefined) throw notFound();
  return issue;
}

/** Saves an issue, and moves it between its milestones' open and closed counts when its milestone or state changed. */
export function saveIssue(ctx: TwinContext, issue: StoredIssue): void {
  const key = issueKey(issue.repoId, issue.number);
  const before = ctx.tree.get<StoredIssue>('issue', key);
  if (before?.milestone !== issue.milestone || before.state !== issue.state) {
    if (before !== undefined && before.milestone !== null) countInMilestone(ctx, issue.repoId, before.milestone, before.state, -1);
    if (issue.milestone !== null) countInMilestone(ctx, issue.repoId, issue.milestone, issue.state, 1);
  }
  ctx.tree.put('issue', key, issue);
}

/**
 * A milestone's open and closed issues, kept in `milestone_count/<repo>:<number>` by saveIssue
 * (GitHub's `open_issues`/`closed_issues`), so presenting a milestone (every issue that has one,
 * in its answers and webhooks) reads one record, not every issue. A milestone made before the
 * counts were kept is counted from the issues until its count is first moved.
 */
export function milestoneCountOf(tree: ReadTree, repoId: number, number: number): MilestoneCounts {
  return tree.get<MilestoneCounts>('milestone_count', `${repoId}:${pad(number)}`) ?? milestoneCounts(issuesOf(tree, repoId)).get(number) ?? { open: 0, closed: 0 };
}

function countInMilestone(ctx: TwinContext, repoId: number, number: number, state: StoredIssue['state'], delta: number): void {
  const key = `${repoId}:${pad(number)}`;
  // A deleted milestone's issues are being let go of (deleteMilestone): nothing to count.
  if (ctx.tree.get('milestone', key) === undefined) return;
  const counts = { ...milestoneCountOf(ctx.tree, repoId, number) };
  if (state === 'open') counts.open += delta;
  else counts.closed += delta;
  ctx.tree.put('milestone_count', key, counts);
}

export function issuesOf(tree: ReadTree, repoId: number): StoredIssue[] {
  const out: StoredIssue[] = [];
  let after = `${repoId}:`;
  for (;;) {
    const page = tree.list<StoredIssue>('issue', { after, before: `${repoId};`, limit: 100 });
    for (const i of page.items) out.push(i.value);
    const last = page.items[page.items.length - 1];
    if (!page.hasMore || last === undefined) break;
    after = last.id;
  }
  return out;
}

export function labelsOf(tree: ReadTree, repoId: number): StoredLabel[] {
  return listRange<StoredLabel>(tree, 'label', `${repoId}:`, `${repoId};`).map((i) => i.value);
}

export function milestonesOf(tree: ReadTree, repoId: number): StoredMilestone[] {
  return listRange<StoredMilestone>(tree, 'milestone', `${repoId}:`, `${repoId};`).map((i) => i.value);
}

function labelByName(tree: ReadTree, repoId: number, name: string): StoredLabel | undefined {
  return tree.get<StoredLabel>('label', `${repoId}:${name.toLowerCase()}`);
}

// ------------------------------------------------------------------ presentation

export function association(tree: ReadTree, repo: StoredRepo, login: string): string {
  if (login.toLowerCase() === repo.owner.toLowerCase()) return 'OWNER';
  const owner = loadUser(tree, repo.owner);
  if (owner?.type === 'Organization' && (owner.members ?? []).includes(login.toLowerCase())) return 'MEMBER';
  return loadUser(tree, login)?.site_admin === true ? 'COLLABORATOR' : 'NONE';
}

export function presentLabel(repo: StoredRepo, l: StoredLabel): Obj {
  return {
    id: l.id, node_id: nodeId('Label', l.id), url: `${repoApi(repo)}/labels/${encodeURIComponent(l.name)}`, name: l.name, color: l.color,
    default: l.default, description: l.description,
  };
}

export interface MilestoneCounts { open: number; closed: number }

/** Open and closed issues per milestone number, in one pass over the repository's issues. */
function milestoneCounts(issues: StoredIssue[]): Map<number, MilestoneCounts> {
  const out = new Map<number, MilestoneCounts>();
  for (const i of issues) {
    if (i.milestone === null) continue;
    let c = out.get(i.milestone);
    if (c === undefined) out.set(i.milestone, (c = { open: 0, closed: 0 }));
    if (i.state === 'open') c.open++;
    else c.closed++;
  }
  return out;
}

export function presentMilestone(tree: ReadTree, repo: StoredRepo, m: StoredMilestone): Obj {
  const n = milestoneCountOf(tree, repo.id, m.number);
  const u = `${repoApi(repo)}/milestones/${m.number}`;
  return {
    url: u, html_url: `${WEB}/${fullName(repo)}/milestone/${m.number}`, labels_url: `${u}/labels`, id: m.id, node_id: nodeId('Milestone', m.id),
    number: m.number, state: m.state, title: m.title, description: m.description, creator: simpleUserByLogin(tree, m.creator),
    open_issues: n.open, closed_issues: n.closed,
    created_at: m.created_at, updated_at: m.updated_at, closed_at: m.closed_at, due_on: m.due_on,
  };
}

/**
 * Everything an issue presentation needs from the repository, read once for a whole list (and
 * passed along: a list that makes its own per item reads every label, milestone and, for a
 * milestone's counts, every issue again for each item).
 */
export interface IssueLookups {
  labels: Map<number, StoredLabel>;
  milestones: Map<number, StoredMilestone>;
  /** A milestone as presented, counts included: built once per milestone and answer. */
  milestone(number: number): Obj | null;
  /** A login's short user object, built once per answer. */
  user(login: string): Obj;
  association(login: string): string;
}

export function lookups(tree: ReadTree, repo: StoredRepo): IssueLookups {
  const users = new Map<string, Obj>();
  const associations = new Map<string, string>();
  const presented = new Map<number, Obj | null>();
  const milestones = new Map(milestonesOf(tree, repo.id).map((m) => [m.number, m]));
  const lk: IssueLookups = {
    labels: new Map(labelsOf(tree, repo.id).map((l) => [l.id, l])),
    milestones,
    milestone(number) {
      let out = presented.get(number);
      if (out === undefined) {
        const m = milestones.get(number);
        out = m === undefined ? null : presentMilestone(tree, repo, m);
        presented.set(number, out);
      }
      return out;
    },
    user(login) {
      let u = users.get(login);
      if (u === undefined) users.set(login, (u = simpleUserByLogin(tree, login)));
      return u;
    },
    association(login) {
      let a = associations.get(login);
      if (a === undefined) associations.set(login, (a = association(tree, repo, login)));
      return a;
    },
  };
  return lk;
}

export function presentIssue(tree: ReadTree, repo: StoredRepo, i: StoredIssue, lk: IssueLookups = lookups(tree, repo)): Obj {
  const u = `${repoApi(repo)}/issues/${i.number}`;
  const assignees = i.assignees.map((a) => lk.user(a));
  const out: Obj = {
    url: u, repository_url: repoApi(repo), labels_url: `${u}/labels{/name}`, comments_url: `${u}/comments`, events_url: `${u}/events`,
    html_url: `${WEB}/${fullName(repo)}/${i.pull ? 'pull' : 'issues'}/${i.number}`, id: i.id, node_id: nodeId(i.pull ? 'PullRequest' : 'Issue', i.id),
    number: i.number, title: i.title, user: lk.user(i.user),
    labels: i.labels.map((id) => lk.labels.get(id)).filter((l): l is StoredLabel => l !== undefined).map((l) => presentLabel(repo, l)),
    state: i.state, locked: i.locked, assignee: assignees[0] ?? null, assignees,
    milestone: i.milestone === null ? null : lk.milestone(i.milestone),
    comments: i.comments, created_at: i.created_at, updated_at: i.updated_at, closed_at: i.closed_at,
    author_association: lk.association(i.user), active_lock_reason: i.active_lock_reason, body: i.body,
    closed_by: i.closed_by === null ? null : lk.user(i.closed_by),
    reactions: { url: `${u}/reactions`, total_count: 0, '+1': 0, '-1': 0, laugh: 0, hooray: 0, confused: 0, heart: 0, rocket: 0, eyes: 0 },
    timeline_url: `${u}/timeline`, performed_via_github_app: null, state_reason: i.state_reason,
  };
  if (i.pull) {
    const pr = tree.get<{ merged_at: string | null; draft?: boolean }>('pull', issueKey(repo.id, i.number));
    const p = `${repoApi(repo)}/pulls/${i.number}`;
    out['pull_request'] = { url: p, html_url: `${WEB}/${fullName(repo)}/pull/${i.number}`, diff_url: `${WEB}/${fullName(repo)}/pull/${i.number}.diff`, patch_url: `${WEB}/${fullName(repo)}/pull/${i.number}.patch`, merged_at: pr?.merged_at ?? null };
    out['draft'] = pr?.draft ?? false;
  }
  return out;
}

// ------------------------------------------------------------------ input shared by issues and pulls

export function assignable(tree: ReadTree, repo: StoredRepo, login: string): boolean {
  const u = loadUser(tree, login);
  if (u === undefined || u.type !== 'User') return false;
  return canWrite(tree, { kind: 'token', login: u.login, siteAdmin: u.site_admin, scopes: [] }, repo);
}

export function readAssignees(call: Call, repo: StoredRepo, b: Obj, resource: string): string[] | undefined {
  let list = optStringArray(b, 'assignees', resource);
  const single = b['assignee'];
  if (list === undefined && single !== undefined) list = single === null ? [] : typeof single === 'string' ? [single] : undefined;
  if (list === undefined) return undefined;
  const out: string[] = [];
  for (const a of list) {
    if (!assignable(call.ctx.tree, repo, a)) throw validation([{ resource, field: 'assignees', code: 'invalid', value: a }]);
    const u = loadUser(call.ctx.tree, a);
    if (u !== undefined && !out.includes(u.login.toLowerCase())) out.push(u.login.toLowerCase());
  }
  if (out.length > 10) throw validation([{ resource, field: 'assignees', code: 'invalid' }]);
  return out;
}

/** Label names → ids; names the repository lacks are made (as GitHub does for writers). Call after every check. */
export function ensureLabels(ctx: TwinContext, repo: StoredRepo, names: string[]): number[] {
  const ids: number[] = [];
  for (const raw of names) {
    const name = raw.trim();
    let l = labelByName(ctx.tree, repo.id, name);
    if (l === undefined) {
      l = { id: nextNumber(ctx, 'label'), name, color: 'ededed', description: null, default: false };
      ctx.tree.put('label', `${repo.id}:${name.toLowerCase()}`, l);
    }
    if (!ids.includes(l.id)) ids.push(l.id);
  }
  return ids;
}

/** The most labels one request may name (GitHub keeps an issue to 100; more were taken here before). */
const MAX_LABELS = 1000;

function readLabelNames(b: Obj, resource: string): string[] | undefined {
  const v = b['labels'];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw invalidField(resource, 'labels', v);
  // Each new name is a label written: past this many, refused as too many assignees are.
  if (v.length > MAX_LABELS) throw validation([{ resource, field: 'labels', code: 'invalid' }]);
  const out: string[] = [];
  for (const x of v) {
    const name = typeof x === 'string' ? x : typeof x === 'object' && x !== null && typeof (x as Obj)['name'] === 'string' ? ((x as Obj)['name'] as string) : undefined;
    if (name === undefined || name.trim() === '' || name.length > 50) throw invalidField(resource, 'labels', x);
    out.push(name);
  }
  return out;
}

function readMilestone(call: Call, repo: StoredRepo, b: Obj, resource: string): number | null | undefined {
  const v = b['milestone'];
  if (v === undefined) return undefined;
  if (v === null) return null;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || call.ctx.tree.get('milestone', `${repo.id}:${pad(n)}`) === undefined) throw validation([{ resource, field: 'milestone', code: 'invalid', value: v }]);
  return n;
}

// ------------------------------------------------------------------ events

/** The `issues` (or, for a pull request, `pull_request`) webhook. */
/**
 * Sends an event about an issue (or pull request). `presented` keeps the issue's presentation
 * between events of one change that leave the issue as it is (one `labeled` per label).
 */
export function issueEvent(call: Call, repo: StoredRepo, issue: StoredIssue, action: string, extra: Obj = {}, presented: { issue?: Obj } = {}): void {
  if (issue.pull) {
    // Pull request events carry the pull request object; pulls.ts registers the presenter.
    const present = pullPresenter.fn;
    if (present !== undefined) deliver(call, repo, 'pull_request', { action, number: issue.number, pull_request: (presented.issue ??= present(call, repo, issue)), ...extra });
    return;
  }
  deliver(call, repo, 'issues', { action, issue: (presented.issue ??= presentIssue(call.ctx.tree, repo, issue)), ...extra });
}

/** Set by pulls.ts (which imports this file) so issue edits on a pull request send `pull_request` events. */
export const pullPresenter: { fn?: (call: Call, repo: StoredRepo, issue: StoredIssue) => Obj } = {};

// ------------------------------------------------------------------ issues

export function createIssueRecord(call: Call, repo: StoredRepo, b: Obj, pull: boolean): StoredIssue {
  const { ctx } = call;
  const resource = pull ? 'PullRequest' : 'Issue';
  const titleRaw = b['title'];
  const title = typeof titleRaw === 'number' ? String(titleRaw) : reqString(b, 'title', resource);
  if (title.trim() === '') throw validation([{ resource, field: 'title', code: 'missing_field' }]);
  const body = optString(b, 'body', resource) ?? null;
  checkIssueText(title, body);
  const writer = canWrite(ctx.tree, call.caller, repo);
  // Triage fields from someone without push access are dropped silently, as GitHub does.
  const assignees = writer ? readAssignees(call, repo, b, resource) ?? [] : [];
  const labelNames = writer ? readLabelNames(b, resource) ?? [] : [];
  const milestone = writer ? readMilestone(call, repo, b, resource) ?? null : null;
  const now = isoNow(ctx);
  const number = repoNumber(ctx, repo);
  const issue: StoredIssue = {
    id: nextNumber(ctx, 'issue'), repoId: repo.id, number, title, body, user: (call.caller as Caller).login.toLowerCase(), state: 'open', state_reason: null,
    locked: false, active_lock_reason: null, labels: ensureLabels(ctx, repo, labelNames), assignees, milestone, comments: 0,
    created_at: now, updated_at: now, closed_at: null, closed_by: null, pull,
  };
  saveIssue(ctx, issue);
  repo.open_issues_count++;
  saveRepo(ctx, repo);
  return issue;
}

/**
 * GitHub's caps on an issue's (or pull request's: it is an issue) title and body. The answer
 * names the `Issue` for a pull request too, as GitHub's does.
 */
export function checkIssueText(title: string | undefined, body: string | null | undefined): void {
  maxLength(title, TEXT_LIMITS.title, 'Issue', 'title');
  maxLength(body, TEXT_LIMITS.body, 'Issue', 'body');
}

/** GitHub's cap on a comment, in its words for issue comments (`data`, `Body is too long`). */
function checkCommentBody(body: string): void {
  maxLength(body, TEXT_LIMITS.body, 'IssueComment', 'body', { code: 'unprocessable', field: 'data', message: `Body is too long (maximum is ${TEXT_LIMITS.body} characters)` });
}

function repoNumber(ctx: TwinContext, repo: StoredRepo): number {
  return nextNumber(ctx, `number:${repo.id}`);
}

export function createIssue(call: Call): { status: number; body: Obj } {
  const repo = loadRepo(call);
  if (!repo.has_issues) throw new GhError(410, 'Issues are disabled for this repo');
  if (repo.archived) throw forbidden('Repository was archived so is read-only.');
  const issue = createIssueRecord(call, repo, bodyObject(call.req), false);
  issueEvent(call, repo, issue, 'opened');
  const body = presentIssue(call.ctx.tree, repo, issue);
  call.headers['location'] = body['url'] as string;
  return { status: 201, body };
}

export function getIssue(call: Call): { body: Obj } {
  const repo = loadRepo(call);
  const issue = loadIssue(call.ctx.tree, repo, call.req.params['issue_number']);
  return { body: presentIssue(call.ctx.tree, repo, issue) };
}

/** Applies an issue update (title, body, state, labels, assignees, milestone) and sends its events. */
export function applyIssueUpdate(call: Call, repo: StoredRepo, issue: StoredIssue, b: Obj): StoredIssue {
  const { ctx } = call;
  const resource = issue.pull ? 'PullRequest' : 'Issue';
  const writer = canWrite(ctx.tree, call.caller, repo);
  const author = call.caller !== null && call.caller.login.toLowerCase() === issue.user;
  if (!writer && !author) throw forbidden('Must have push access to update this issue.');
  const title = optString(b, 'title', resource);
  if (title !== undefined && title.trim() === '') throw invalidField(resource, 'title', title);
  const body = b['body'] === null ? null : optString(b, 'body', resource);
  checkIssueText(title, body);
  const state = optString(b, 'state', resource);
  if (state !== undefined && state !== 'open' && state !== 'closed') throw invalidField(resource, 'state', state);
  const reason = b['state_reason'] === null ? null : optString(b, 'state_reason', resource);
  if (reason !== undefined && reason !== null && !['completed', 'not_planned', 'reopened', 'duplicate'].includes(reason)) throw invalidField(resource, 'state_reason', reason);
  const assignees = writer ? readAssignees(call, repo, b, resource) : undefined;
  const labelNames = writer ? readLabelNames(b, resource) : undefined;
  const milestone = writer ? readMilestone(call, repo, b, resource) : undefined;
  const before = { ...issue };
  const now = isoNow(ctx);
  if (title !== undefined) issue.title = title;
  if (body !== undefined) issue.body = body;
  if (assignees !== undefined) issue.assignees = assignees;
  if (labelNames !== undefined) issue.labels = ensureLabels(ctx, repo, labelNames);
  if (milestone !== undefined) issue.milestone = milestone;
  if (state !== undefined && state !== issue.state) {
    issue.state = state;
    if (state === 'closed') {
      issue.closed_at = now;
      issue.closed_by = (call.caller as Caller).login.toLowerCase();
      issue.state_reason = reason ?? 'completed';
      repo.open_issues_count = Math.max(0, repo.open_issues_count - 1);
    } else {
      issue.closed_at = null;
      issue.closed_by = null;
      issue.state_reason = 'reopened';
      repo.open_issues_count++;
    }
    saveRepo(ctx, repo);
  } else if (reason !== undefined && issue.state === 'closed') issue.state_reason = reason;
  issue.updated_at = now;
  saveIssue(ctx, issue);
  // Events in the order GitHub sends them: edits, then triage, then the state change.
  const changes: Obj = {};
  if (issue.title !== before.title) changes['title'] = { from: before.title };
  if (issue.body !== before.body) changes['body'] = { from: before.body };
  if (Object.keys(changes).length > 0) issueEvent(call, repo, issue, 'edited', { changes });
  // One lookup of the labels and one presentation of the issue for all the label events, when any hook listens.
  const had = new Set(before.labels), has = new Set(issue.labels);
  const added = issue.labels.filter((id) => !had.has(id));
  const removed = before.labels.filter((id) => !has.has(id));
  if ((added.length > 0 || removed.length > 0) && listens(call, repo, issue.pull ? 'pull_request' : 'issues')) {
    const labels = new Map(labelsOf(ctx.tree, repo.id).map((l) => [l.id, l]));
    const labelPayload = (id: number): Obj | null => {
      const l = labels.get(id);
      return l === undefined ? null : presentLabel(repo, l);
    };
    const presented: { issue?: Obj } = {};
    for (const id of added) issueEvent(call, repo, issue, 'labeled', { label: labelPayload(id) }, presented);
    for (const id of removed) issueEvent(call, repo, issue, 'unlabeled', { label: labelPayload(id) }, presented);
  }
  for (const a of issue.assignees) if (!before.assignees.includes(a)) issueEvent(call, repo, issue, 'assigned', { assignee: simpleUserByLogin(ctx.tree, a) });
  for (const a of before.assignees) if (!issue.assignees.includes(a)) issueEvent(call, repo, issue, 'unassigned', { assignee: simpleUserByLogin(ctx.tree, a) });
  if (issue.milestone !== before.milestone) issueEvent(call, repo, issue, issue.milestone === null ? 'demilestoned' : 'milestoned');
  if (issue.state !== before.state) issueEvent(call, repo, issue, issue.state === 'closed' ? 'closed' : 'reopened');
  return issue;
}

export function updateIssue(call: Call): { body: Obj } {
  const repo = loadRepo(call);
  const issue = loadIssue(call.ctx.tree, repo, call.req.params['issue_number']);
  applyIssueUpdate(call, repo, issue, bodyObject(call.req));
  return { body: presentIssue(call.ctx.tree, repo, issue) };
}

/**
 * How many issues a filtered list reads past its page to count the rest: up to this, its `Link`
 * has GitHub's `last`; past it, the answer leaves `last` out rather than read every issue.
 */
const FILTERED_COUNT_READS = 10_000;

/**
 * A page of a repository's issues in number order (creation order: numbers and the clock only
 * grow), read from the store's range as far as the page. Without a filter (`match`), the total
 * comes from the counts the repository keeps: what such a list costs, whatever the repository
 * holds (107k issues: 0.19 s a page when every issue was read). With one, the matches after the
 * page are counted, `countReads` issues at most.
 */
export function issuePage(
  call: Call, repo: StoredRepo, state: string, direction: 'asc' | 'desc', match?: (i: StoredIssue) => boolean, countReads = FILTERED_COUNT_READS,
): StoredIssue[] {
  const { tree } = call.ctx;
  const { page, perPage } = pageOf(call.req);
  const want = page * perPage;
  const wanted = (i: StoredIssue): boolean => (state === 'all' || i.state === state) && (match === undefined || match(i));
  // Filtered, the page's matches are followed by a count of the rest (for `Link`'s last page).
  const { out, matched, ended } = takePage(issuesInOrder(tree, repo.id, direction), wanted, want, match === undefined ? 0 : countReads);
  // Walked to the end, the count is what was seen; else the repository's counts tell, or for a
  // filtered list, nobody does.
  if (ended) pageLinks(call, matched);
  else if (match !== undefined) pageLinks(call, matched, perPage, false);
  else pageLinks(call, issueCount(tree, repo, state));
  return out.slice((page - 1) * perPage, want);
}

/** How many issues (pull requests too) a repository has in a state, from the counts it keeps: its numbers and `open_issues_count`. */
function issueCount(tree: ReadTree, repo: StoredRepo, state: string): number {
  const made = counterNext(tree, `number:${repo.id}`) - 1;
  const open = repo.open_issues_count;
  return state === 'all' ? made : state === 'open' ? open : made - open;
}

/**
 * A repository's issues in number order (creation order), read 100 at a time as they are asked
 * for; the first read takes `first` (a merge of many repositories first needs one of each).
 */
function* issuesInOrder(tree: ReadTree, repoId: number, direction: 'asc' | 'desc', first = 100): Generator<StoredIssue> {
  const range = { after: `${repoId}:`, before: `${repoId};` };
  let cursor: string | undefined;
  for (;;) {
    const limit = cursor === undefined ? first : 100;
    const got = tree.list<StoredIssue>('issue', direction === 'desc'
      ? { ...range, ...(cursor === undefined ? {} : { before: cursor }), reverse: true, limit }
      : { ...range, ...(cursor === undefined ? {} : { after: cursor }), limit });
    for (const item of got.items) yield item.value;
    const last = got.items[got.items.length - 1];
    if (!got.hasMore || last === undefined) return;
    cursor = last.id;
  }
}

/**
 * The first `want` items of `items` that pass `wanted`, then a count of those after them among
 * at most `countReads` more; `ended` when the items ran out (then `matched` is all of them).
 */
function takePage<T>(items: Iterator<T>, wanted: (x: T) => boolean, want: number, countReads: number): { out: T[]; matched: number; ended: boolean } {
  const out: T[] = [];
  let matched = 0;
  let counting = countReads;
  while (out.length < want || counting > 0) {
    const next = items.next();
    if (next.done === true) return { out, matched, ended: true };
    if (out.length >= want) counting--;
    if (!wanted(next.value)) continue;
    matched++;
    if (out.length < want) out.push(next.value);
  }
  return { out, matched, ended: false };
}

export function listIssues(call: Call): { body: Obj[] } {
  const { ctx } = call;
  const repo = loadRepo(call);
  const q = call.req.query;
  const state = str(q, 'state') ?? 'open';
  if (!['open', 'closed', 'all'].includes(state)) throw invalidField('Issue', 'state', state);
  const sort = str(q, 'sort') ?? 'created';
  const direction = (str(q, 'direction') ?? 'desc') === 'asc' ? 'asc' : 'desc';
  const lk = lookups(ctx.tree, repo);
  const match = issueFilter(q, lk);
  // Sorted by creation (the default), the store's order: read as far as the page.
  if (sort === 'created') return { body: issuePage(call, repo, state, direction, match).map((i) => presentIssue(ctx.tree, repo, i, lk)) };
  const items = issuesOf(ctx.tree, repo.id).filter((i) => (state === 'all' || i.state === state) && (match === undefined || match(i)));
  return { body: paginate(call, sortIssues(items, sort, direction)).map((i) => presentIssue(ctx.tree, repo, i, lk)) };
}

/** The list's filters (labels, assignee, creator, mentioned, milestone, since) as one test; undefined without any. */
function issueFilter(q: Call['req']['query'], lk: IssueLookups): ((i: StoredIssue) => boolean) | undefined {
  const tests: ((i: StoredIssue) => boolean)[] = [];
  const labels = str(q, 'labels');
  if (labels !== undefined && labels !== '') {
    const wanted = labels.split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '');
    tests.push((i) => {
      const names = i.labels.map((id) => lk.labels.get(id)?.name.toLowerCase());
      return wanted.every((w) => names.includes(w));
    });
  }
  const assignee = str(q, 'assignee');
  if (assignee !== undefined) {
    const a = assignee.toLowerCase();
    tests.push((i) => (a === 'none' ? i.assignees.length === 0 : a === '*' ? i.assignees.length > 0 : i.assignees.includes(a)));
  }
  const creator = str(q, 'creator');
  if (creator !== undefined) tests.push((i) => i.user === creator.toLowerCase());
  const mentioned = str(q, 'mentioned');
  if (mentioned !== undefined) {
    const re = new RegExp(`(^|[^A-Za-z0-9-])@${mentioned.replace(/[^A-Za-z0-9-]/g, '')}(?![A-Za-z0-9-])`, 'i');
    tests.push((i) => re.test(i.body ?? ''));
  }
  const milestone = str(q, 'milestone');
  if (milestone !== undefined) {
    tests.push((i) => (milestone === 'none' ? i.milestone === null : milestone === '*' ? i.milestone !== null : String(i.milestone) === milestone));
  }
  const since = instantParam(q, 'since');
  if (since !== undefined) tests.push((i) => Date.parse(i.updated_at) >= since);
  return tests.length === 0 ? undefined : (i) => tests.every((t) => t(i));
}

export function sortIssues(items: StoredIssue[], sort: string, direction: 'asc' | 'desc'): StoredIssue[] {
  // Ties break on the number so equal clocks still give a stable order.
  const key = (i: StoredIssue): string => (sort === 'updated' ? i.updated_at : sort === 'comments' ? pad(i.comments) : i.created_at) + pad(i.number);
  return sortBy(items, key, direction);
}

export function lockIssue(call: Call): { status: number } {
  const repo = loadRepo(call, 'write');
  const issue = loadIssue(call.ctx.tree, repo, call.req.params['issue_number']);
  const b = bodyObject(call.req);
  const reason = optString(b, 'lock_reason', 'Issue');
  if (reason !== undefined && !['off-topic', 'too heated', 'resolved', 'spam'].includes(reason)) throw invalidField('Issue', 'lock_reason', reason);
  const lock = call.req.method === 'PUT';
  if (issue.locked === lock) return { status: 204 };
  issue.locked = lock;
  issue.active_lock_reason = lock ? reason ?? null : null;
  issue.updated_at = isoNow(call.ctx);
  saveIssue(call.ctx, issue);
  issueEvent(call, repo, issue, lock ? 'locked' : 'unlocked');
  return { status: 204 };
}

// ------------------------------------------------------------------ comments

function presentComment(tree: ReadTree, repo: StoredRepo, c: StoredComment): Obj {
  return {
    id: c.id, node_id: nodeId('IssueComment', c.id), url: `${repoApi(repo)}/issues/comments/${c.id}`,
    html_url: `${WEB}/${fullName(repo)}/issues/${c.issue}#issuecomment-${c.id}`, body: c.body, user: simpleUserByLogin(tree, c.user),
    created_at: c.created_at, updated_at: c.updated_at, issue_url: `${repoApi(repo)}/issues/${c.issue}`,
    author_association: association(tree, repo, c.user), performed_via_github_app: null,
    reactions: { url: `${repoApi(repo)}/issues/comments/${c.id}/reactions`, total_count: 0, '+1': 0, '-1': 0, laugh: 0, hooray: 0, confused: 0, heart: 0, rocket: 0, eyes: 0 },
  };
}

function commentEvent(call: Call, repo: StoredRepo, issue: StoredIssue, c: StoredComment, action: string, extra: Obj = {}): void {
  deliver(call, repo, 'issue_comment', { action, issue: presentIssue(call.ctx.tree, repo, issue), comment: presentComment(call.ctx.tree, repo, c), ...extra });
}

export function createComment(call: Call): { status: number; body: Obj } {
  const { ctx } = call;
  const repo = loadRepo(call);
  const issue = loadIssue(ctx.tree, repo, call.req.params['issue_number']);
  const body = reqString(bodyObject(call.req), 'body', 'IssueComment');
  if (body.trim() === '') throw validation([{ resource: 'IssueComment', field: 'body', code: 'missing_field' }]);
  checkCommentBody(body);
  if (issue.locked && !canWrite(ctx.tree, call.caller, repo)) throw forbidden('Unable to create comment because issue is locked.');
  const now = isoNow(ctx);
  const c: StoredComment = { id: nextNumber(ctx, 'comment'), repoId: repo.id, issue: issue.number, body, user: (call.caller as Caller).login.toLowerCase(), created_at: now, updated_at: now };
  ctx.tree.put('comment', `${repo.id}:${pad(c.id)}`, c);
  ctx.tree.put('issue_comment', `${repo.id}:${pad(issue.number)}:${pad(c.id)}`, {});
  issue.comments++;
  issue.updated_at = now;
  saveIssue(ctx, issue);
  commentEvent(call, repo, issue, c, 'created');
  const out = presentComment(ctx.tree, repo, c);
  call.headers['location'] = out['url'] as string;
  return { status: 201, body: out };
}

export function listComments(call: Call): { body: Obj[] } {
  const { ctx } = call;
  const repo = loadRepo(call);
  const issue = loadIssue(ctx.tree, repo, call.req.params['issue_number']);
  const prefix = `${repo.id}:${pad(issue.number)}:`;
  const ids = listRange(ctx.tree, 'issue_comment', prefix, `${repo.id}:${pad(issue.number)};`).map((i) => i.id.slice(prefix.length));
  let comments = ids.map((id) => ctx.tree.get<StoredComment>('comment', `${repo.id}:${id}`)).filter((c): c is StoredComment => c !== undefined);
  const since = instantParam(call.req.query, 'since');
  if (since !== undefined) comments = comments.filter((c) => Date.parse(c.updated_at) >= since);
  return { body: paginate(call, comments).map((c) => presentComment(ctx.tree, repo, c)) };
}

export function listRepoComments(call: Call): { body: Obj[] } {
  const { ctx } = call;
  const repo = loadRepo(call);
  const all = listRange<StoredComment>(ctx.tree, 'comment', `${repo.id}:`, `${repo.id};`).map((i) => i.value);
  const direction = (str(call.req.query, 'direction') ?? 'asc') === 'desc' ? 'desc' : 'asc';
  const sort = str(call.req.query, 'sort') ?? 'created';
  const sorted = sortBy(all, (c) => (sort === 'updated' ? c.updated_at : c.created_at) + pad(c.id), direction);
  return { body: paginate(call, sorted).map((c) => presentComment(ctx.tree, repo, c)) };
}

function loadComment(call: Call, repo: StoredRepo): StoredComment {
  const id = call.req.params['comment_id'] ?? '';
  if (!/^\d{1,10}$/.test(id)) throw notFound();
  const c = call.ctx.tree.get<StoredComment>('comment', `${repo.id}:${pad(Number(id))}`);
  if (c === undefined) throw notFound();
  return c;
}

export function getComment(call: Call): { body: Obj } {
  const repo = loadRepo(call);
  return { body: presentComment(call.ctx.tree, repo, loadComment(call, repo)) };
}

export function updateComment(call: Call): { body: Obj } {
  const { ctx } = call;
  const repo = loadRepo(call);
  const c = loadComment(call, repo);
  if (!canWrite(ctx.tree, call.caller, repo) && (call.caller as Caller).login.toLowerCase() !== c.user) throw forbidden('You cannot edit this comment.');
  const body = reqString(bodyObject(call.req), 'body', 'IssueComment');
  if (body.trim() === '') throw validation([{ resource: 'IssueComment', field: 'body', code: 'missing_field' }]);
  checkCommentBody(body);
  const from = c.body;
  const updated = { ...c, body, updated_at: isoNow(ctx) };
  ctx.tree.put('comment', `${repo.id}:${pad(c.id)}`, updated);
  const issue = loadIssue(ctx.tree, repo, String(c.issue));
  commentEvent(call, repo, issue, updated, 'edited', { changes: { body: { from } } });
  return { body: presentComment(ctx.tree, repo, updated) };
}

export function deleteComment(call: Call): { status: number } {
  const { ctx } = call;
  const repo = loadRepo(call);
  const c = loadComment(call, repo);
  if (!canWrite(ctx.tree, call.caller, repo) && (call.caller as Caller).login.toLowerCase() !== c.user) throw forbidden('You cannot delete this comment.');
  ctx.tree.delete('comment', `${repo.id}:${pad(c.id)}`);
  ctx.tree.delete('issue_comment', `${repo.id}:${pad(c.issue)}:${pad(c.id)}`);
  const issue = loadIssue(ctx.tree, repo, String(c.issue));
  issue.comments = Math.max(0, issue.comments - 1);
  saveIssue(ctx, issue);
  commentEvent(call, repo, issue, c, 'deleted');
  return { status: 204 };
}

// ------------------------------------------------------------------ labels

const COLOR = /^[0-9a-fA-F]{6}$/;

export function listLabels(call: Call): { body: Obj[] } {
  const repo = loadRepo(call);
  return { body: paginate(call, labelsOf(call.ctx.tree, repo.id)).map((l) => presentLabel(repo, l)) };
}

export function createLabel(call: Call): { status: number; body: Obj } {
  const { ctx } = call;
  const repo = loadRepo(call, 'write');
  const b = bodyObject(call.req);
  const name = reqString(b, 'name', 'Label').trim();
  if (name === '' || name.length > 50) throw invalidField('Label', 'name', name);
  const color = (optString(b, 'color', 'Label') ?? 'ededed').replace(/^#/, '');
  if (!COLOR.test(color)) throw invalidField('Label', 'color', color);
  const description = optString(b, 'description', 'Label') ?? null;
  // Shown with the label on every issue that has it.
  maxLength(description, TEXT_LIMITS.labelDescription, 'Label', 'description');
  if (labelByName(ctx.tree, repo.id, name) !== undefined) throw validation([{ resource: 'Label', code: 'already_exists', field: 'name' }]);
  const l: StoredLabel = { id: nextNumber(ctx, 'label'), name, color: color.toLowerCase(), description, default: false };
  ctx.tree.put('label', `${repo.id}:${name.toLowerCase()}`, l);
  deliver(call, repo, 'label', { action: 'created', label: presentLabel(repo, l) });
  return { status: 201, body: presentLabel(repo, l) };
}

function loadLabel(call: Call, repo: StoredRepo): StoredLabel {
  const l = labelByName(call.ctx.tree, repo.id, call.req.params['name'] ?? '');
  if (l === undefined) throw notFound();
  return l;
}

export function getLabel(call: Call): { body: Obj } {
  const repo = loadRepo(call);
  return { body: presentLabel(repo, loadLabel(call, repo)) };
}

export function updateLabel(call: Call): { body: Obj } {
  const { ctx } = call;
  const repo = loadRepo(call, 'write');
  const l = loadLabel(call, repo);
  const b = bodyObject(call.req);
  const name = optString(b, 'new_name', 'Label')?.trim() ?? optString(b, 'name', 'Label')?.trim();
  const color = optString(b, 'color', 'Label')?.replace(/^#/, '');
  if (color !== undefined && !COLOR.test(color)) throw invalidField('Label', 'color', color);
  if (name !== undefined && (name === '' || name.length > 50)) throw invalidField('Label', 'name', name);
  if (name !== undefined && name.toLowerCase() !== l.name.toLowerCase() && labelByName(ctx.tree, repo.id, name) !== undefined) {
    throw validation([{ resource: 'Label', code: 'already_exists', field: 'name' }]);
  }
  const description = b['description'] === null ? null : optString(b, 'description', 'Label');
  maxLength(description, TEXT_LIMITS.labelDescription, 'Label', 'description');
  const updated: StoredLabel = { ...l, name: name ?? l.name, color: (color ?? l.color).toLowerCase(), description: description === undefined ? l.description : description };
  ctx.tree.delete('label', `${repo.id}:${l.name.toLowerCase()}`);
  ctx.tree.put('label', `${repo.id}:${updated.name.toLowerCase()}`, updated);
  deliver(call, repo, 'label', { action: 'edited', label: presentLabel(repo, updated) });
  return { body: presentLabel(repo, updated) };
}

export function deleteLabel(call: Call): { status: number } {
  const { ctx } = call;
  const repo = loadRepo(call, 'write');
  const l = loadLabel(call, repo);
  ctx.tree.delete('label', `${repo.id}:${l.name.toLowerCase()}`);
  for (const i of issuesOf(ctx.tree, repo.id)) {
    if (i.labels.includes(l.id)) saveIssue(ctx, { ...i, labels: i.labels.filter((x) => x !== l.id) });
  }
  deliver(call, repo, 'label', { action: 'deleted', label: presentLabel(repo, l) });
  return { status: 204 };
}

export function listIssueLabels(call: Call): { body: Obj[] } {
  const repo = loadRepo(call);
  const issue = loadIssue(call.ctx.tree, repo, call.req.params['issue_number']);
  const all = new Map(labelsOf(call.ctx.tree, repo.id).map((l) => [l.id, l]));
  return { body: paginate(call, issue.labels.map((id) => all.get(id)).filter((l): l is StoredLabel => l !== undefined)).map((l) => presentLabel(repo, l)) };
}

/** POST adds, PUT replaces, DELETE (no name) removes all. */
export function changeIssueLabels(call: Call): { body: Obj[] } {
  const { ctx } = call;
  const repo = loadRepo(call, 'write');
  const issue = loadIssue(ctx.tree, repo, call.req.params['issue_number']);
  let names: string[] = [];
  if (call.req.method !== 'DELETE') {
    const raw = call.req.body;
    // The body is `{ labels: [...] }` or, as GitHub also accepts, a bare array.
    const b: Obj = Array.isArray(raw) ? { labels: raw } : bodyObject(call.req);
    names = readLabelNames(b, 'Label') ?? [];
  }
  const current = labelsOf(ctx.tree, repo.id).filter((l) => issue.labels.includes(l.id)).map((l) => l.name);
  const next = call.req.method === 'POST' ? [...current, ...names] : names;
  applyIssueUpdate(call, repo, issue, { labels: next });
  return listIssueLabels(call);
}

export function removeIssueLabel(call: Call): { body: Obj[] } {
  const { ctx } = call;
  const repo = loadRepo(call, 'write');
  const issue = loadIssue(ctx.tree, repo, call.req.params['issue_number']);
  const l = labelByName(ctx.tree, repo.id, call.req.params['name'] ?? '');
  if (l === undefined || !issue.labels.includes(l.id)) throw new GhError(404, 'Label does not exist');
  const names = labelsOf(ctx.tree, repo.id).filter((x) => issue.labels.includes(x.id) && x.id !== l.id).map((x) => x.name);
  applyIssueUpdate(call, repo, issue, { labels: names });
  return listIssueLabels(call);
}

// ------------------------------------------------------------------ milestones

export function listMilestones(call: Call): { body: Obj[] } {
  const { ctx } = call;
  const repo = loadRepo(call);
  const state = str(call.req.query, 'state') ?? 'open';
  const sort = str(call.req.query, 'sort') ?? 'due_on';
  const direction = (str(call.req.query, 'direction') ?? 'asc') === 'desc' ? 'desc' : 'asc';
  const items = milestonesOf(ctx.tree, repo.id).filter((m) => state === 'all' || m.state === state);
  const sorted = sortBy(items, (m) => (sort === 'completeness' ? '' : (m.due_on ?? '9999')) + pad(m.number), direction);
  return { body: paginate(call, sorted).map((m) => presentMilestone(ctx.tree, repo, m)) };
}

function readDue(b: Obj): string | null | undefined {
  const v = b['due_on'];
  if (v === undefined) return undefined;
  if (v === null) return null;
  if (typeof v !== 'string' || !Number.isFinite(Date.parse(v))) throw invalidField('Milestone', 'due_on', v);
  return new Date(Date.parse(v)).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function createMilestone(call: Call): { status: number; body: Obj } {
  const { ctx } = call;
  const repo = loadRepo(call, 'write');
  const b = bodyObject(call.req);
  const title = reqString(b, 'title', 'Milestone');
  if (title.trim() === '') throw validation([{ resource: 'Milestone', field: 'title', code: 'missing_field' }]);
  if (milestonesOf(ctx.tree, repo.id).some((m) => m.title === title)) throw validation([{ resource: 'Milestone', code: 'already_exists', field: 'title' }]);
  const state = optString(b, 'state', 'Milestone') ?? 'open';
  if (state !== 'open' && state !== 'closed') throw invalidField('Milestone', 'state', state);
  const due = readDue(b) ?? null;
  const now = isoNow(ctx);
  const m: StoredMilestone = {
    id: nextNumber(ctx, 'milestone'), number: nextNumber(ctx, `milestone:${repo.id}`), title, description: optString(b, 'description', 'Milestone') ?? null,
    state, due_on: due, creator: (call.caller as Caller).login.toLowerCase(), created_at: now, updated_at: now, closed_at: state === 'closed' ? now : null,
  };
  ctx.tree.put('milestone', `${repo.id}:${pad(m.number)}`, m);
  ctx.tree.put('milestone_count', `${repo.id}:${pad(m.number)}`, { open: 0, closed: 0 });
  return { status: 201, body: presentMilestone(ctx.tree, repo, m) };
}

function loadMilestone(call: Call, repo: StoredRepo): StoredMilestone {
  const n = call.req.params['milestone_number'] ?? '';
  if (!/^\d{1,10}$/.test(n)) throw notFound();
  const m = call.ctx.tree.get<StoredMilestone>('milestone', `${repo.id}:${pad(Number(n))}`);
  if (m === undefined) throw notFound();
  return m;
}

export function getMilestone(call: Call): { body: Obj } {
  const repo = loadRepo(call);
  return { body: presentMilestone(call.ctx.tree, repo, loadMilestone(call, repo)) };
}

export function updateMilestone(call: Call): { body: Obj } {
  const { ctx } = call;
  const repo = loadRepo(call, 'write');
  const m = loadMilestone(call, repo);
  const b = bodyObject(call.req);
  const title = optString(b, 'title', 'Milestone');
  const state = optString(b, 'state', 'Milestone');
  if (state !== undefined && state !== 'open' && state !== 'closed') throw invalidField('Milestone', 'state', state);
  const due = readDue(b);
  const description = b['description'] === null ? null : optString(b, 'description', 'Milestone');
  const now = isoNow(ctx);
  const updated: StoredMilestone = {
    ...m, title: title ?? m.title, description: description === undefined ? m.description : description, due_on: due === undefined ? m.due_on : due,
    state: (state as StoredMilestone['state'] | undefined) ?? m.state, updated_at: now,
  };
  if (updated.state !== m.state) updated.closed_at = updated.state === 'closed' ? now : null;
  ctx.tree.put('milestone', `${repo.id}:${pad(m.number)}`, updated);
  return { body: presentMilestone(ctx.tree, repo, updated) };
}

export function deleteMilestone(call: Call): { status: number } {
  const { ctx } = call;
  const repo = loadRepo(call, 'write');
  const m = loadMilestone(call, repo);
  ctx.tree.delete('milestone', `${repo.id}:${pad(m.number)}`);
  ctx.tree.delete('milestone_count', `${repo.id}:${pad(m.number)}`);
  for (const i of issuesOf(ctx.tree, repo.id)) if (i.milestone === m.number) saveIssue(ctx, { ...i, milestone: null });
  return { status: 204 };
}

// ------------------------------------------------------------------ assignees

export function listAssignees(call: Call): { body: Obj[] } {
  const { ctx } = call;
  const repo = loadRepo(call);
  const owner = loadUser(ctx.tree, repo.owner);
  const logins = [...(owner?.type === 'Organization' ? owner.members ?? [] : [repo.owner.toLowerCase()])];
  for (const [l, p] of Object.entries(repo.collaborators ?? {})) if (p !== 'pull' && p !== 'triage' && !logins.includes(l)) logins.push(l);
  const users = logins.map((l) => loadUser(ctx.tree, l)).filter((u) => u !== undefined).map((u) => simpleUser(u));
  return { body: paginate(call, users) };
}

export function checkAssignee(call: Call): { status: number } {
  const repo = loadRepo(call);
  if (!assignable(call.ctx.tree, repo, call.req.params['assignee'] ?? '')) throw notFound();
  return { status: 204 };
}

export function changeAssignees(call: Call): { status: number; body: Obj } {
  const { ctx } = call;
  const repo = loadRepo(call, 'write');
  const issue = loadIssue(ctx.tree, repo, call.req.params['issue_number']);
  const names = optStringArray(bodyObject(call.req), 'assignees', 'Issue') ?? [];
  const lower = names.map((n) => n.toLowerCase());
  let next: string[];
  if (call.req.method === 'POST') {
    // Adding someone who may not be assigned is ignored silently, as on GitHub.
    next = [...issue.assignees, ...lower.filter((n) => assignable(ctx.tree, repo, n) && !issue.assignees.includes(n))];
  } else next = issue.assignees.filter((a) => !lower.includes(a));
  applyIssueUpdate(call, repo, issue, { assignees: next.slice(0, 10) });
  return { status: call.req.method === 'POST' ? 201 : 200, body: presentIssue(ctx.tree, repo, issue) };
}

// ------------------------------------------------------------------ issues across repositories

/**
 * `GET /issues`, `GET /user/issues`, `GET /orgs/{org}/issues`: issues (and pull requests) in
 * repositories the caller can read, by `filter` — `assigned` (default), `created`, `mentioned`,
 * `subscribed` (taken as involved: author, assignee or mentioned), `repos`/`all` — then
 * `state`, `labels`, `sort`, `direction`, `since` as for a repository's list.
 */
export function listAcross(call: Call, repos: StoredRepo[]): { body: Obj[] } {
  const { ctx } = call;
  const me = (call.caller as Caller).login.toLowerCase();
  const q = call.req.query;
  const filter = str(q, 'filter') ?? 'assigned';
  if (!['assigned', 'created', 'mentioned', 'subscribed', 'repos', 'all'].includes(filter)) throw invalidField('Issue', 'filter', filter);
  const state = str(q, 'state') ?? 'open';
  if (!['open', 'closed', 'all'].includes(state)) throw invalidField('Issue', 'state', state);
  const labels = (str(q, 'labels') ?? '').split(',').map((x) => x.trim().toLowerCase()).filter((x) => x !== '');
  const since = instantParam(q, 'since');
  const mention = new RegExp(`(^|[^A-Za-z0-9-])@${me.replace(/[^a-z0-9-]/g, '')}(?![A-Za-z0-9-])`, 'i');
  const looked = new Map<number, IssueLookups>();
  const lookupsOf = (repo: StoredRepo): IssueLookups => {
    let lk = looked.get(repo.id);
    if (lk === undefined) looked.set(repo.id, (lk = lookups(ctx.tree, repo)));
    return lk;
  };
  const wanted = ({ repo, issue: i }: Hit): boolean => {
    if (state !== 'all' && i.state !== state) return false;
    if (since !== undefined && Date.parse(i.updated_at) < since) return false;
    const mentioned = filter === 'mentioned' || filter === 'subscribed' ? mention.test(`${i.title}\n${i.body ?? ''}`) : false;
    const ok = filter === 'assigned' ? i.assignees.includes(me) : filter === 'created' ? i.user === me : filter === 'mentioned' ? mentioned
      : filter === 'subscribed' ? i.user === me || i.assignees.includes(me) || mentioned : true;
    if (!ok) return false;
    if (labels.length > 0) {
      const lk = lookupsOf(repo);
      const names = i.labels.map((id) => lk.labels.get(id)?.name.toLowerCase());
      if (!labels.every((l) => names.includes(l))) return false;
    }
    return true;
  };
  const sort = str(q, 'sort') ?? 'created';
  const direction = (str(q, 'direction') ?? 'desc') === 'asc' ? 'asc' : 'desc';
  let shownPage: Hit[];
  if (sort === 'created') {
    // Each repository's issues are already in creation order: merged, a page reads as far as
    // it shows (then counts the rest, as a filtered repository list does).
    const { page, perPage } = pageOf(call.req);
    // Every issue of the repositories in a state: their own counts tell how many.
    const counted = (filter === 'all' || filter === 'repos') && labels.length === 0 && since === undefined;
    const taken = takePage(mergedByCreation(ctx.tree, repos, direction), wanted, page * perPage, counted ? 0 : FILTERED_COUNT_READS);
    if (taken.ended || !counted) pageLinks(call, taken.matched, perPage, taken.ended);
    else pageLinks(call, repos.reduce((n, r) => n + issueCount(ctx.tree, r, state), 0), perPage);
    shownPage = taken.out.slice((page - 1) * perPage);
  } else {
    const hits: Hit[] = [];
    for (const repo of repos) for (const issue of issuesOf(ctx.tree, repo.id)) if (wanted({ repo, issue, index: 0 })) hits.push({ repo, issue, index: 0 });
    const byIssue = new Map(hits.map((h) => [h.issue, h]));
    shownPage = paginate(call, sortIssues(hits.map((h) => h.issue), sort, direction).map((i) => byIssue.get(i) as Hit));
  }
  // One repository object per repository, not per item.
  const shown = new Map<number, Obj>();
  const repository = (r: StoredRepo): Obj => {
    let o = shown.get(r.id);
    if (o === undefined) shown.set(r.id, (o = presentRepo(ctx.tree, r, call.caller, false)));
    return o;
  };
  return { body: shownPage.map((h) => ({ ...presentIssue(ctx.tree, h.repo, h.issue, lookupsOf(h.repo)), repository: repository(h.repo) })) };
}

/** An issue of a list across repositories, with its repository's place in the list of them. */
interface Hit { repo: StoredRepo; issue: StoredIssue; index: number }

/**
 * Every issue of `repos`, in the order sortIssues gives by creation (created_at, then number;
 * equal ones in the order of `repos`, as a stable sort of them all), merged from each
 * repository's own creation order with a heap: the cost is what is read, not the world.
 */
export function* mergedByCreation(tree: ReadTree, repos: StoredRepo[], direction: 'asc' | 'desc'): Generator<Hit> {
  const key = (i: StoredIssue): string => i.created_at + pad(i.number);
  // Whether `a` comes before `b`.
  const before = (a: Hit, b: Hit): boolean => {
    const x = key(a.issue), y = key(b.issue);
    if (x !== y) return direction === 'asc' ? x < y : x > y;
    return a.index < b.index;
  };
  const walks = repos.map((repo) => issuesInOrder(tree, repo.id, direction, 1));
  const heap: Hit[] = [];
  const push = (h: Hit): void => {
    heap.push(h);
    for (let i = heap.length - 1; i > 0; ) {
      const up = (i - 1) >> 1;
      if (!before(heap[i] as Hit, heap[up] as Hit)) break;
      [heap[i], heap[up]] = [heap[up] as Hit, heap[i] as Hit];
      i = up;
    }
  };
  const pop = (): Hit => {
    const top = heap[0] as Hit;
    const last = heap.pop() as Hit;
    if (heap.length > 0) {
      heap[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1, r = l + 1;
        let best = i;
        if (l < heap.length && before(heap[l] as Hit, heap[best] as Hit)) best = l;
        if (r < heap.length && before(heap[r] as Hit, heap[best] as Hit)) best = r;
        if (best === i) break;
        [heap[i], heap[best]] = [heap[best] as Hit, heap[i] as Hit];
        i = best;
      }
    }
    return top;
  };
  const advance = (index: number): void => {
    const next = (walks[index] as Generator<StoredIssue>).next();
    if (next.done !== true) push({ repo: repos[index] as StoredRepo, issue: next.value, index });
  };
  repos.forEach((_, index) => advance(index));
  while (heap.length > 0) {
    const top = pop();
    yield top;
    advance(top.index);
  }
}

export function listForUser(call: Call): { body: Obj[] } {
  const me = call.caller as Caller;
  const repos = allRepos(call.ctx.tree).filter((r) => permissionOf(call.ctx.tree, { ...me, siteAdmin: false }, r) !== null);
  return listAcross(call, repos);
}

export function listEverywhere(call: Call): { body: Obj[] } {
  // GET /issues: also public repositories the caller does not belong to (what it can read).
  const repos = allRepos(call.ctx.tree).filter((r) => canRead(call.ctx.tree, call.caller, r));
  return listAcross(call, repos);
}

export function listForOrg(call: Call): { body: Obj[] } {
  const org = loadUser(call.ctx.tree, call.req.params['org'] ?? '');
  if (org === undefined || org.type !== 'Organization') throw notFound();
  return listAcross(call, allRepos(call.ctx.tree).filter((r) => r.owner.toLowerCase() === org.login.toLowerCase() && canRead(call.ctx.tree, call.caller, r)));
}
