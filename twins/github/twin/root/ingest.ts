/**
 * Webhook ingest: a GitHub webhook of the real repository (verified by the host with the
 * sealed secret, `X-Hub-Signature-256`) folded into the copy. The event is the
 * `X-GitHub-Event` header; the object in the payload is written as a refresh would write it.
 *
 * Folded: `issues`, `label`, `milestone`, `push`, `repository`. Any other event, or one about
 * another repository (an organization's hook sends every repository's), writes nothing.
 */
import type { IngestedWebhook, RootInfo, TwinContext } from '../../../../sdk/twin/types.js';
import { pad } from '../lib/http.js';
import { listRange } from '../lib/records.js';
import { getObject, objectId, validRefName, type CommitObject } from '../lib/git.js';
import type { StoredLabel } from '../resources/issues.js';
import type { StoredRepo } from '../resources/repos.js';
import { instant, isObj, list, num, obj, parseRoot, rootError, sha, text, type Obj, type RepoRoot } from './answers.js';
import { copyIssue, copyLabel, copyMilestone, copyRepo, raiseCounter, repositoryOf } from './copy.js';
import { storeCommit } from './files.js';

const FOLDED = new Set(['issues', 'label', 'milestone', 'push', 'repository']);
const ZERO = '0000000000000000000000000000000000000000';

export function ingest(webhook: IngestedWebhook, ctx: TwinContext, info: RootInfo): void {
  const root = parseRoot(info.url);
  const event = webhook.headers['x-github-event'] ?? '';
  if (!FOLDED.has(event)) return;
  const what = `the ${event} webhook`;
  const payload = obj(webhook.body, what);
  const repository = repositoryOf(payload);
  if (repository === undefined) throw rootError(`${what} has no repository`);
  if (!ofRoot(ctx, root, repository, what)) return;
  const action = typeof payload['action'] === 'string' ? payload['action'] : '';
  if (event === 'repository') return foldRepository(ctx, root, repository, action, what);
  const repo = copyRepo(ctx, repository, `${what}.repository`);
  if (event === 'issues') foldIssue(ctx, repo, payload, action, what);
  else if (event === 'label') foldLabel(ctx, repo, payload, action, what);
  else if (event === 'milestone') foldMilestone(ctx, repo, payload, action, what);
  else foldPush(ctx, repo, payload, what);
}

/**
 * Whether the webhook is about the root's repository: the one the root's name leads to in the
 * copy (which a rename or transfer keeps, as GitHub's redirect does), or, before any refresh,
 * the one of that name.
 */
function ofRoot(ctx: TwinContext, root: RepoRoot, repository: Obj, what: string): boolean {
  const link = ctx.tree.get<{ id?: unknown }>('repo_name', `${root.owner.toLowerCase()}/${root.repo.toLowerCase()}`);
  if (link !== undefined && typeof link.id === 'number') return num(repository, 'id', `${what}.repository`) === link.id;
  const fullName = repository['full_name'];
  return typeof fullName === 'string' && fullName.toLowerCase() === `${root.owner}/${root.repo}`.toLowerCase();
}

function foldIssue(ctx: TwinContext, repo: StoredRepo, payload: Obj, action: string, what: string): void {
  const raw = obj(payload['issue'], `${what}.issue`);
  const number = num(raw, 'number', `${what}.issue`);
  if (action === 'deleted' || action === 'transferred') {
    if (raw['pull_request'] === undefined) ctx.tree.delete('issue', `${repo.id}:${pad(number)}`);
    return;
  }
  const issue = copyIssue(ctx, repo.id, raw, `${what}.issue`);
  if (issue === undefined) return;
  raiseCounter(ctx, 'issue', issue.id + 1);
  raiseCounter(ctx, `number:${repo.id}`, issue.number + 1);
}

function foldLabel(ctx: TwinContext, repo: StoredRepo, payload: Obj, action: string, what: string): void {
  const raw = obj(payload['label'], `${what}.label`);
  if (action === 'deleted') {
    ctx.tree.delete('label', `${repo.id}:${text(raw, 'name', `${what}.label`).toLowerCase()}`);
    return;
  }
  const label = copyLabel(ctx, repo.id, raw, `${what}.label`);
  // A rename moves the record (labels are keyed by name; issues hold the id, which stays). The
  // old name is found by id: GitHub's `changes.name.from` says it, but not every sender sends it.
  const key = label.name.toLowerCase();
  for (const held of listRange<StoredLabel>(ctx.tree, 'label', `${repo.id}:`, `${repo.id};`)) {
    if (held.value.id === label.id && held.id !== `${repo.id}:${key}`) ctx.tree.delete('label', held.id);
  }
  raiseCounter(ctx, 'label', label.id + 1);
}

function foldMilestone(ctx: TwinContext, repo: StoredRepo, payload: Obj, action: string, what: string): void {
  const raw = obj(payload['milestone'], `${what}.milestone`);
  if (action === 'deleted') {
    const key = `${repo.id}:${pad(num(raw, 'number', `${what}.milestone`))}`;
    ctx.tree.delete('milestone', key);
    ctx.tree.delete('milestone_count', key);
    return;
  }
  const milestone = copyMilestone(ctx, repo.id, raw, `${what}.milestone`);
  raiseCounter(ctx, 'milestone', milestone.id + 1);
  raiseCounter(ctx, `milestone:${repo.id}`, milestone.number + 1);
}

/**
 * `repository`: the object written again (edited, renamed, transferred, archived, made public or
 * private); `deleted` removes it. A rename keeps the root's own name leading to it; a name in
 * between (a second rename) is let go.
 */
function foldRepository(ctx: TwinContext, root: RepoRoot, raw: Obj, action: string, what: string): void {
  const id = num(raw, 'id', `${what}.repository`);
  const before = ctx.tree.get<StoredRepo>('repo', String(id));
  const rootKey = `${root.owner.toLowerCase()}/${root.repo.toLowerCase()}`;
  const beforeKey = before === undefined ? undefined : `${before.owner.toLowerCase()}/${before.name.toLowerCase()}`;
  if (action === 'deleted') {
    ctx.tree.delete('repo', String(id));
    ctx.tree.delete('repo_name', rootKey);
    if (beforeKey !== undefined) ctx.tree.delete('repo_name', beforeKey);
    return;
  }
  const repo = copyRepo(ctx, raw, `${what}.repository`);
  const key = `${repo.owner.toLowerCase()}/${repo.name.toLowerCase()}`;
  if (beforeKey !== undefined && beforeKey !== key && beforeKey !== rootKey) ctx.tree.delete('repo_name', beforeKey);
}

/**
 * `push`: the ref moves (or is deleted), and the commits the payload lists are stored: rebuilt
 * from it (the parent of each is the one before it, the first's is `before`; the zone is the
 * timestamp's), checked against their ids, and stored `partial` when they do not match (a merge,
 * a signed commit), so the next refresh reads them from the API. The files of the new head
 * are not in a payload (only the paths changed): they come with the next refresh, and until
 * then the contents API answers 404 for that branch's files.
 */
function foldPush(ctx: TwinContext, repo: StoredRepo, payload: Obj, what: string): void {
  const ref = text(payload, 'ref', what);
  if (!(ref.startsWith('refs/heads/') || ref.startsWith('refs/tags/')) || !validRefName(ref)) return;
  const key = `${repo.id}:${ref}`;
  const after = sha(payload, 'after', what);
  if (payload['deleted'] === true || after === ZERO) {
    ctx.tree.delete('ref', key);
    return;
  }
  const before = typeof payload['before'] === 'string' && /^[0-9a-f]{40}$/.test(payload['before']) && payload['before'] !== ZERO ? payload['before'] : undefined;
  let parent = before;
  for (const [n, raw] of list(payload['commits'] ?? [], `${what}.commits`).entries()) {
    parent = storePushed(ctx, repo.id, raw, parent === undefined ? [] : [parent], `${what}.commits[${n}]`);
  }
  // The head alone (a branch made at a commit pushed before, a force-push back): its parents are not known.
  if (isObj(payload['head_commit']) && getObject(ctx.tree, repo.id, after) === undefined) storePushed(ctx, repo.id, payload['head_commit'], [], `${what}.head_commit`);
  ctx.tree.put('ref', key, { sha: after });
}

/** Stores a commit of a push payload unless the copy holds it whole; answers its id. */
function storePushed(ctx: TwinContext, repoId: number, raw: unknown, parents: string[], what: string): string {
  const c = obj(raw, what);
  const id = sha(c, 'id', what);
  const held = getObject(ctx.tree, repoId, id);
  if (held?.t === 'commit' && held.partial !== true) return id;
  const stamp = text(c, 'timestamp', what);
  const zone = /([+-])(\d{2}):?(\d{2})$/.exec(stamp);
  const tz = zone === null ? '+0000' : `${zone[1]}${zone[2]}${zone[3]}`;
  const date = instant(c, 'timestamp', what);
  const who = (field: string): { name: string; email: string; date: string } => {
    const p = obj(c[field], `${what}.${field}`);
    return { name: text(p, 'name', `${what}.${field}`), email: text(p, 'email', `${what}.${field}`), date };
  };
  const message = text(c, 'message', what);
  const base: CommitObject = { t: 'commit', tree: sha(c, 'tree_id', what), parents, author: who('author'), committer: who('committer'), message };
  if (tz !== '+0000') base.tz = [tz, tz];
  // git ends a message typed in an editor with a newline, which GitHub's JSON may or may not show.
  for (const candidate of [base, { ...base, message: message + '\n' }]) {
    if (objectId(candidate) === id) {
      storeCommit(ctx, repoId, id, candidate);
      return id;
    }
  }
  storeCommit(ctx, repoId, id, { ...base, partial: true });
  return id;
}
