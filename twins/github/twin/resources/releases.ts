/**
 * Releases (no assets): `release/<repo id>:<id, 10 digits>` → StoredRelease. Creating a
 * release for a tag that does not exist makes the tag (a lightweight ref) at `target_commitish`,
 * as GitHub does; drafts make no tag until published.
 */
import { getRef, refConflict, resolveCommitish, setRef, validRefName } from '../lib/git.js';
import {
  TEXT_LIMITS, bodyObject, isoNow, maxLength, nextNumber, optBool, optString, pad, paginate, reqString, type Call, type Obj,
} from '../lib/http.js';
import { WEB, nodeId } from '../lib/addresses.js';
import { notFound, validation } from '../errors.js';
import { listRange } from '../lib/records.js';
import { simpleUserByLogin, type Caller } from '../lib/users.js';
import { deliver } from './hooks.js';
import { fullName, loadRepo, repoApi, type StoredRepo } from './repos.js';

interface StoredRelease {
  id: number; tag_name: string; target_commitish: string; name: string | null; body: string | null; draft: boolean; prerelease: boolean;
  author: string; created_at: string; published_at: string | null;
}

const key = (repoId: number, id: number): string => `${repoId}:${pad(id)}`;

function present(call: Call, repo: StoredRepo, r: StoredRelease): Obj {
  const u = `${repoApi(repo)}/releases/${r.id}`;
  return {
    url: u, html_url: `${WEB}/${fullName(repo)}/releases/tag/${r.tag_name}`, assets_url: `${u}/assets`, upload_url: `https://uploads.github.com/repos/${fullName(repo)}/releases/${r.id}/assets{?name,label}`,
    tarball_url: `${repoApi(repo)}/tarball/${r.tag_name}`, zipball_url: `${repoApi(repo)}/zipball/${r.tag_name}`, id: r.id, node_id: nodeId('Release', r.id),
    tag_name: r.tag_name, target_commitish: r.target_commitish, name: r.name, body: r.body, draft: r.draft, prerelease: r.prerelease,
    created_at: r.created_at, published_at: r.published_at, author: simpleUserByLogin(call.ctx.tree, r.author), assets: [],
  };
}

function all(call: Call, repo: StoredRepo): StoredRelease[] {
  return listRange<StoredRelease>(call.ctx.tree, 'release', `${repo.id}:`, `${repo.id};`).map((i) => i.value).reverse();
}

function visible(call: Call, repo: StoredRepo, r: StoredRelease): boolean {
  // Drafts are for people with push access only.
  return !r.draft || call.caller !== null && loadRepoWritable(call, repo);
}

function loadRepoWritable(call: Call, repo: StoredRepo): boolean {
  try {
    return loadRepo(call, 'write').id === repo.id;
  } catch {
    return false;
  }
}

/** GitHub's caps on a release's text: body 125,000 characters, name 256. */
function checkReleaseText(r: Pick<StoredRelease, 'name' | 'body'>): void {
  maxLength(r.body, TEXT_LIMITS.releaseBody, 'Release', 'body');
  maxLength(r.name, TEXT_LIMITS.releaseName, 'Release', 'name');
}

function ensureTag(call: Call, repo: StoredRepo, r: StoredRelease): void {
  if (r.draft || getRef(call.ctx.tree, repo.id, `refs/tags/${r.tag_name}`) !== undefined) return;
  const sha = resolveCommitish(call.ctx.tree, repo.id, r.target_commitish);
  if (sha === undefined) throw validation([{ resource: 'Release', code: 'invalid', field: 'target_commitish' }]);
  // A tag `v1/x` beside a tag `v1` (or the other way round): git cannot hold both.
  if (refConflict(call.ctx.tree, repo.id, `refs/tags/${r.tag_name}`) !== undefined) throw validation([{ resource: 'Release', code: 'invalid', field: 'tag_name' }]);
  setRef(call.ctx, repo.id, `refs/tags/${r.tag_name}`, sha);
}

export function createRelease(call: Call): { status: number; body: Obj } {
  const { ctx } = call;
  const repo = loadRepo(call, 'write');
  const b = bodyObject(call.req);
  const tag = reqString(b, 'tag_name', 'Release');
  if (!validRefName(`refs/tags/${tag}`)) throw validation([{ resource: 'Release', code: 'invalid', field: 'tag_name' }]);
  if (all(call, repo).some((r) => r.tag_name === tag)) throw validation([{ resource: 'Release', code: 'already_exists', field: 'tag_name' }]);
  const now = isoNow(ctx);
  const draft = optBool(b, 'draft', 'Release') ?? false;
  const r: StoredRelease = {
    id: nextNumber(ctx, 'release'), tag_name: tag, target_commitish: optString(b, 'target_commitish', 'Release') ?? repo.default_branch,
    name: optString(b, 'name', 'Release') ?? null, body: optString(b, 'body', 'Release') ?? null, draft, prerelease: optBool(b, 'prerelease', 'Release') ?? false,
    author: (call.caller as Caller).login.toLowerCase(), created_at: now, published_at: draft ? null : now,
  };
  checkReleaseText(r);
  ensureTag(call, repo, r);
  ctx.tree.put('release', key(repo.id, r.id), r);
  const body = present(call, repo, r);
  deliver(call, repo, 'release', { action: draft ? 'created' : 'published', release: body });
  return { status: 201, body };
}

function load(call: Call, repo: StoredRepo): StoredRelease {
  const id = call.req.params['release_id'] ?? '';
  if (!/^\d{1,10}$/.test(id)) throw notFound();
  const r = call.ctx.tree.get<StoredRelease>('release', key(repo.id, Number(id)));
  if (r === undefined || !visible(call, repo, r)) throw notFound();
  return r;
}

export function getRelease(call: Call): { body: Obj } {
  const repo = loadRepo(call);
  return { body: present(call, repo, load(call, repo)) };
}

export function getReleaseByTag(call: Call): { body: Obj } {
  const repo = loadRepo(call);
  const r = all(call, repo).find((x) => x.tag_name === call.req.params['tag'] && !x.draft);
  if (r === undefined) throw notFound();
  return { body: present(call, repo, r) };
}

export function getLatestRelease(call: Call): { body: Obj } {
  const repo = loadRepo(call);
  const r = all(call, repo).filter((x) => !x.draft && !x.prerelease).sort((a, b) => ((a.published_at ?? '') < (b.published_at ?? '') ? 1 : (a.published_at ?? '') > (b.published_at ?? '') ? -1 : b.id - a.id))[0];
  if (r === undefined) throw notFound();
  return { body: present(call, repo, r) };
}

export function listReleases(call: Call): { body: Obj[] } {
  const repo = loadRepo(call);
  return { body: paginate(call, all(call, repo).filter((r) => visible(call, repo, r))).map((r) => present(call, repo, r)) };
}

export function updateRelease(call: Call): { body: Obj } {
  const repo = loadRepo(call, 'write');
  const r = load(call, repo);
  const b = bodyObject(call.req);
  const tag = optString(b, 'tag_name', 'Release');
  if (tag !== undefined && tag !== r.tag_name && (!validRefName(`refs/tags/${tag}`) || all(call, repo).some((x) => x.tag_name === tag))) throw validation([{ resource: 'Release', code: 'invalid', field: 'tag_name' }]);
  const draft = optBool(b, 'draft', 'Release');
  const next: StoredRelease = {
    ...r, tag_name: tag ?? r.tag_name, target_commitish: optString(b, 'target_commitish', 'Release') ?? r.target_commitish,
    name: b['name'] === null ? null : optString(b, 'name', 'Release') ?? r.name, body: b['body'] === null ? null : optString(b, 'body', 'Release') ?? r.body,
    draft: draft ?? r.draft, prerelease: optBool(b, 'prerelease', 'Release') ?? r.prerelease,
  };
  checkReleaseText(next);
  const publishing = r.draft && !next.draft;
  if (publishing) next.published_at = isoNow(call.ctx);
  ensureTag(call, repo, next);
  call.ctx.tree.put('release', key(repo.id, r.id), next);
  const body = present(call, repo, next);
  deliver(call, repo, 'release', { action: publishing ? 'published' : 'edited', release: body });
  return { body };
}

export function deleteRelease(call: Call): { status: number } {
  const repo = loadRepo(call, 'write');
  const r = load(call, repo);
  call.ctx.tree.delete('release', key(repo.id, r.id));
  deliver(call, repo, 'release', { action: 'deleted', release: present(call, repo, r) });
  return { status: 204 };
}
