/**
 * GitHub's objects (as the REST API and webhook payloads show them) written into the twin's own
 * records, with their real ids and numbers. A refresh and an ingest both write through here, so
 * a record looks the same whichever brought it.
 *
 * Every write is a plain `ctx.tree.put`: the twin's own save paths send webhooks (`deliver`),
 * and a root call may emit nothing.
 */
import type { TwinContext } from '../../../../sdk/twin/index.js';
import { counterNext, pad } from '../lib/http.js';
import { ADMIN_LOGIN, type StoredUser } from '../lib/users.js';
import type { StoredHook } from '../resources/hooks.js';
import type { StoredIssue, StoredLabel, StoredMilestone } from '../resources/issues.js';
import type { StoredRepo } from '../resources/repos.js';
import { flag, instant, instantOrNull, isObj, list, num, obj, rootError, text, textOrNull, type Obj } from './answers.js';

/** What a user's record holds that the objects embedding it do not say: GitHub shows these only on `GET /users/<login>`, which a refresh does not read. */
const UNKNOWN_SINCE = '1970-01-01T00:00:00Z';

/**
 * Raises a counter (the next number of a sequence) to at least `next`, never lowering it: ids
 * the world makes itself then come after the real ones. Written every time, even unchanged, so
 * a refresh that writes it keeps it (the runner sweeps what a refresh stops writing).
 */
export function raiseCounter(ctx: TwinContext, name: string, next: number): void {
  ctx.tree.put('counter', name, { next: Math.max(counterNext(ctx.tree, name), next) });
}

/**
 * A user or organization as an object embeds it (`{ login, id, type, site_admin }`): its record,
 * keeping what the world's own record of that login says beside (an organization's members, a
 * name or email the world gave it). Answers the login as records name users (lower case).
 * `admin` is the twin's own site admin (the world token acts as it): a real account of that
 * name is not written over it.
 */
export function copyUser(ctx: TwinContext, raw: unknown, what: string): string {
  const u = obj(raw, what);
  const login = text(u, 'login', what);
  if (!/^[A-Za-z0-9-]{1,39}(?:\[bot\])?$/.test(login)) throw rootError(`${what}.login ${JSON.stringify(login.slice(0, 60))} is not a GitHub login`);
  const key = login.toLowerCase();
  if (key === ADMIN_LOGIN) return key;
  const id = num(u, 'id', what);
  const type = u['type'] === 'Organization' ? 'Organization' : 'User';
  const existing = ctx.tree.get<StoredUser>('user', key);
  const user: StoredUser = {
    name: null, email: null, company: null, blog: '', location: null, bio: null, created_at: UNKNOWN_SINCE, updated_at: UNKNOWN_SINCE,
    ...existing,
    id, login, type, site_admin: u['site_admin'] === true,
  };
  if (type === 'Organization') user.members = existing?.members ?? [];
  else delete user.members;
  ctx.tree.put('user', key, user);
  // New users of the world (GitHub Enterprise's admin API) are numbered after this one.
  raiseCounter(ctx, 'user', id);
  return key;
}

/** The login of an optional embedded user (null when absent). */
function userOrNull(ctx: TwinContext, raw: unknown, what: string): string | null {
  return raw === undefined || raw === null ? null : copyUser(ctx, raw, what);
}

/**
 * The repository (`GET /repos/o/r`, or a webhook's `repository`). Fields an answer leaves out
 * (a webhook's repository has no merge settings; a credential without admin sees none either)
 * keep what the copy held, else GitHub's defaults. Collaborators are the world's own: not read.
 */
export function copyRepo(ctx: TwinContext, raw: unknown, what: string): StoredRepo {
  const r = obj(raw, what);
  const id = num(r, 'id', what);
  const name = text(r, 'name', what);
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(name)) throw rootError(`${what}.name ${JSON.stringify(name.slice(0, 120))} is not a repository name`);
  const owner = copyUser(ctx, r['owner'], `${what}.owner`);
  const before = ctx.tree.get<StoredRepo>('repo', String(id));
  const was = <K extends keyof StoredRepo>(key: K, fallback: StoredRepo[K]): StoredRepo[K] => (before === undefined ? fallback : before[key]);
  const topics = Array.isArray(r['topics']) ? r['topics'].filter((t): t is string => typeof t === 'string') : was('topics', []);
  const repo: StoredRepo = {
    id,
    name,
    // The login as GitHub spells it (records of users are keyed lower case).
    owner: text(obj(r['owner'], `${what}.owner`), 'login', `${what}.owner`),
    private: flag(r, 'private', was('private', false)),
    description: textOrNull(r, 'description', what, was('description', null)),
    homepage: textOrNull(r, 'homepage', what, was('homepage', null)),
    default_branch: typeof r['default_branch'] === 'string' ? r['default_branch'] : was('default_branch', 'main'),
    created_at: instant(r, 'created_at', what),
    updated_at: instant(r, 'updated_at', what),
    // An empty repository has never been pushed to.
    pushed_at: r['pushed_at'] === null || r['pushed_at'] === undefined ? instant(r, 'created_at', what) : instant(r, 'pushed_at', what),
    has_issues: flag(r, 'has_issues', was('has_issues', true)),
    has_projects: flag(r, 'has_projects', was('has_projects', true)),
    has_wiki: flag(r, 'has_wiki', was('has_wiki', true)),
    archived: flag(r, 'archived', was('archived', false)),
    allow_merge_commit: flag(r, 'allow_merge_commit', was('allow_merge_commit', true)),
    allow_squash_merge: flag(r, 'allow_squash_merge', was('allow_squash_merge', true)),
    allow_rebase_merge: flag(r, 'allow_rebase_merge', was('allow_rebase_merge', true)),
    delete_branch_on_merge: flag(r, 'delete_branch_on_merge', was('delete_branch_on_merge', false)),
    is_template: flag(r, 'is_template', was('is_template', false)),
    topics,
    open_issues_count: typeof r['open_issues_count'] === 'number' ? num(r, 'open_issues_count', what) : was('open_issues_count', 0),
  };
  if (before?.collaborators !== undefined) repo.collaborators = before.collaborators;
  ctx.tree.put('repo', String(id), repo);
  ctx.tree.put('repo_name', `${owner}/${name.toLowerCase()}`, { id });
  // Repositories the world makes are numbered after it (`id = counter + 1000`).
  raiseCounter(ctx, 'repo', id - 999);
  return repo;
}

export function copyLabel(ctx: TwinContext, repoId: number, raw: unknown, what: string): StoredLabel {
  const l = obj(raw, what);
  const label: StoredLabel = {
    id: num(l, 'id', what),
    name: text(l, 'name', what),
    color: typeof l['color'] === 'string' ? l['color'].toLowerCase() : 'ededed',
    description: textOrNull(l, 'description', what),
    default: flag(l, 'default', false),
  };
  if (label.name.trim() === '' || label.name.length > 100) throw rootError(`${what}.name is not a label name`);
  ctx.tree.put('label', `${repoId}:${label.name.toLowerCase()}`, label);
  return label;
}

/** A milestone and its issue counts (GitHub's `open_issues`/`closed_issues`, which the twin keeps beside it). */
export function copyMilestone(ctx: TwinContext, repoId: number, raw: unknown, what: string): StoredMilestone {
  const m = obj(raw, what);
  const milestone: StoredMilestone = {
    id: num(m, 'id', what),
    number: num(m, 'number', what),
    title: text(m, 'title', what),
    description: textOrNull(m, 'description', what),
    state: m['state'] === 'closed' ? 'closed' : 'open',
    due_on: instantOrNull(m, 'due_on', what),
    creator: userOrNull(ctx, m['creator'], `${what}.creator`) ?? 'ghost',
    created_at: instant(m, 'created_at', what),
    updated_at: instant(m, 'updated_at', what),
    closed_at: instantOrNull(m, 'closed_at', what),
  };
  if (milestone.number < 1 || milestone.number > 9_999_999_999) throw rootError(`${what}.number is out of range`);
  const key = `${repoId}:${pad(milestone.number)}`;
  ctx.tree.put('milestone', key, milestone);
  const counts = { open: typeof m['open_issues'] === 'number' ? num(m, 'open_issues', what) : 0, closed: typeof m['closed_issues'] === 'number' ? num(m, 'closed_issues', what) : 0 };
  ctx.tree.put('milestone_count', key, counts);
  return milestone;
}

/**
 * An issue, with the users, labels and milestone it shows. A pull request (an item with
 * `pull_request`) is not written: the twin keeps a pull request as an issue and a `pull`
 * record of branches and merge state that a copy does not read (`undefined`).
 */
export function copyIssue(ctx: TwinContext, repoId: number, raw: unknown, what: string): StoredIssue | undefined {
  const i = obj(raw, what);
  const number = num(i, 'number', what);
  if (number < 1 || number > 9_999_999_999) throw rootError(`${what}.number is out of range`);
  if (i['pull_request'] !== undefined && i['pull_request'] !== null) return undefined;
  const labels: number[] = [];
  for (const [n, l] of (i['labels'] === undefined ? [] : list(i['labels'], `${what}.labels`)).entries()) {
    // GitHub's schema allows a bare name here; only objects name a label by id.
    if (!isObj(l)) continue;
    const label = copyLabel(ctx, repoId, l, `${what}.labels[${n}]`);
    if (!labels.includes(label.id)) labels.push(label.id);
  }
  const rawAssignees = Array.isArray(i['assignees']) ? i['assignees'] : i['assignee'] === undefined || i['assignee'] === null ? [] : [i['assignee']];
  const assignees: string[] = [];
  for (const [n, a] of rawAssignees.entries()) {
    const login = copyUser(ctx, a, `${what}.assignees[${n}]`);
    if (!assignees.includes(login)) assignees.push(login);
  }
  const milestone = i['milestone'] === undefined || i['milestone'] === null ? null : copyMilestone(ctx, repoId, i['milestone'], `${what}.milestone`).number;
  const state = i['state'] === 'closed' ? 'closed' : 'open';
  const issue: StoredIssue = {
    id: num(i, 'id', what),
    repoId,
    number,
    title: text(i, 'title', what),
    body: textOrNull(i, 'body', what),
    user: userOrNull(ctx, i['user'], `${what}.user`) ?? 'ghost',
    state,
    state_reason: textOrNull(i, 'state_reason', what),
    locked: flag(i, 'locked', false),
    active_lock_reason: textOrNull(i, 'active_lock_reason', what),
    labels,
    assignees,
    milestone,
    comments: typeof i['comments'] === 'number' ? num(i, 'comments', what) : 0,
    created_at: instant(i, 'created_at', what),
    updated_at: instant(i, 'updated_at', what),
    closed_at: instantOrNull(i, 'closed_at', what),
    // Lists leave `closed_by` out; a single issue and webhooks show it.
    closed_by: userOrNull(ctx, i['closed_by'], `${what}.closed_by`),
    pull: false,
  };
  ctx.tree.put('issue', `${repoId}:${pad(number)}`, issue);
  return issue;
}

/**
 * A repository webhook. GitHub never shows a hook's secret (`********`), so the copy keeps that
 * mask, and the hook is marked `copied`: the copy never delivers to it. Its receiver belongs
 * to the real repository, and would be sent events of changes that exist only in the world,
 * signed with a secret nobody here knows.
 */
export function copyHook(ctx: TwinContext, repoId: number, raw: unknown, what: string): StoredHook | undefined {
  const h = obj(raw, what);
  const config = isObj(h['config']) ? h['config'] : {};
  // Only `web` hooks have a URL; GitHub made the other kinds (services) read-only long ago.
  if (typeof config['url'] !== 'string') return undefined;
  const id = num(h, 'id', what);
  const hook: StoredHook = {
    id,
    repoId,
    name: 'web',
    active: flag(h, 'active', true),
    events: list(h['events'] ?? [], `${what}.events`).filter((e): e is string => typeof e === 'string'),
    config: {
      url: config['url'],
      content_type: config['content_type'] === 'json' ? 'json' : 'form',
      insecure_ssl: String(config['insecure_ssl']) === '1' ? '1' : '0',
      ...(typeof config['secret'] === 'string' && config['secret'] !== '' ? { secret: config['secret'] } : {}),
    },
    created_at: instant(h, 'created_at', what),
    updated_at: instant(h, 'updated_at', what),
    copied: true,
  };
  ctx.tree.put('hook', `${repoId}:${pad(id)}`, hook);
  return hook;
}

/** Whether the value is a repository object (every GitHub webhook payload carries one). */
export function repositoryOf(payload: Obj): Obj | undefined {
  return isObj(payload['repository']) ? payload['repository'] : undefined;
}
