/**
 * Commit statuses (what CI bots post): `status/<repo id>:<sha>:<id, 10 digits>` → StoredStatus.
 * The combined status takes the newest status per context: `failure` if any is `error` or
 * `failure`, `pending` if any is pending (or there are none), else `success`.
 */
import { SHA, getCommit, resolveCommitish } from '../lib/git.js';
import { bodyObject, invalidField, isoNow, nextNumber, optString, pad, paginate, reqString, type Call, type Obj } from '../lib/http.js';
import { nodeId } from '../lib/addresses.js';
import { GhError, validation } from '../errors.js';
import { listRange } from '../lib/records.js';
import { simpleUserByLogin, type Caller } from '../lib/users.js';
import { deliver } from './hooks.js';
import { loadRepo, presentRepo, repoApi, type StoredRepo } from './repos.js';

interface StoredStatus { id: number; sha: string; state: string; target_url: string | null; description: string | null; context: string; creator: string; created_at: string; updated_at: string }

const STATES = ['error', 'failure', 'pending', 'success'];

/**
 * GitHub's cap: "There is a limit of 1000 statuses per sha and context within a repository.
 * Attempts to create more than 1000 statuses will result in a validation error" (REST docs,
 * create a commit status). Counted in `status_count/<repo id>:<sha>:<context>` → { n }, so a
 * create reads one record; the combined status reads every status of the sha, which this bounds
 * per context.
 */
const STATUSES_PER_CONTEXT = 1000;

function present(call: Call, repo: StoredRepo, s: StoredStatus): Obj {
  return {
    url: `${repoApi(repo)}/statuses/${s.sha}`, avatar_url: null, id: s.id, node_id: nodeId('StatusContext', s.id), state: s.state,
    description: s.description, target_url: s.target_url, context: s.context, created_at: s.created_at, updated_at: s.updated_at,
    creator: simpleUserByLogin(call.ctx.tree, s.creator),
  };
}

function statusesOf(call: Call, repo: StoredRepo, sha: string): StoredStatus[] {
  return listRange<StoredStatus>(call.ctx.tree, 'status', `${repo.id}:${sha}:`, `${repo.id}:${sha};`).map((i) => i.value).reverse();
}

function commitOf(call: Call, repo: StoredRepo): string {
  const ref = call.req.params['ref'] ?? '';
  const sha = resolveCommitish(call.ctx.tree, repo.id, ref);
  if (sha === undefined) throw new GhError(404, `No commit found for SHA: ${ref}`);
  return sha;
}

export function createStatus(call: Call): { status: number; body: Obj } {
  const { ctx } = call;
  const repo = loadRepo(call, 'write');
  const sha = call.req.params['sha'] ?? '';
  if (!SHA.test(sha) || getCommit(ctx.tree, repo.id, sha) === undefined) throw new GhError(422, `No commit found for SHA: ${sha}`);
  const b = bodyObject(call.req);
  const state = reqString(b, 'state', 'Status');
  if (!STATES.includes(state)) throw invalidField('Status', 'state', state);
  const context = optString(b, 'context', 'Status') ?? 'default';
  const description = optString(b, 'description', 'Status') ?? null;
  const target = optString(b, 'target_url', 'Status') ?? null;
  if (context.length > 255 || (description ?? '').length > 1024 || (target !== null && !/^https?:\/\//.test(target))) throw invalidField('Status', 'target_url', target);
  const countKey = `${repo.id}:${sha}:${context}`;
  const made = ctx.tree.get<{ n: number }>('status_count', countKey)?.n ?? 0;
  if (made >= STATUSES_PER_CONTEXT) throw validation([{ resource: 'Status', code: 'custom', message: 'This SHA and context has reached the maximum number of statuses.' }]);
  ctx.tree.put('status_count', countKey, { n: made + 1 });
  const now = isoNow(ctx);
  const s: StoredStatus = { id: nextNumber(ctx, 'status'), sha, state, target_url: target, description, context, creator: (call.caller as Caller).login.toLowerCase(), created_at: now, updated_at: now };
  ctx.tree.put('status', `${repo.id}:${sha}:${pad(s.id)}`, s);
  const body = present(call, repo, s);
  deliver(call, repo, 'status', { id: s.id, sha, name: `${repo.owner}/${repo.name}`, target_url: target, context, description, state, created_at: now, updated_at: now, branches: [] });
  return { status: 201, body };
}

export function listStatuses(call: Call): { body: Obj[] } {
  const repo = loadRepo(call);
  return { body: paginate(call, statusesOf(call, repo, commitOf(call, repo))).map((s) => present(call, repo, s)) };
}

export function combinedStatus(call: Call): { body: Obj } {
  const repo = loadRepo(call);
  const sha = commitOf(call, repo);
  const latest = new Map<string, StoredStatus>();
  for (const s of statusesOf(call, repo, sha)) if (!latest.has(s.context)) latest.set(s.context, s);
  const all = [...latest.values()];
  const state = all.some((s) => s.state === 'error' || s.state === 'failure') ? 'failure' : all.length === 0 || all.some((s) => s.state === 'pending') ? 'pending' : 'success';
  return {
    body: {
      state, statuses: paginate(call, all).map((s) => present(call, repo, s)), sha, total_count: all.length,
      repository: presentRepo(call.ctx.tree, repo, null, false), commit_url: `${repoApi(repo)}/commits/${sha}`, url: `${repoApi(repo)}/commits/${sha}/status`,
    },
  };
}
