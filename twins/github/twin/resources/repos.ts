/**
 * Repositories: create (for the caller and for an organization, `auto_init`), get, update
 * (rename keeps every record: they are keyed by repository id), list, delete.
 *
 * - `repo/<id>` → StoredRepo;
 * - `repo_name/<owner lower>/<name lower>` → `{ id }`: the name index (also walked by owner).
 */
import type { ReadTree, TwinContext } from '../../../../sdk/twin/index.js';
import { utf8Encode } from '../lib/bytes.js';
import { TreeEditor, putBlob, putObject, setRef, getRef } from '../lib/git.js';
import {
  TEXT_LIMITS, bodyObject, invalidField, isoNow, longerThan, nextNumber, optBool, optString, optStringArray, paginate, reqString, sortBy, str, type Call, type Obj,
} from '../lib/http.js';
import { API, WEB, nodeId } from '../lib/addresses.js';
import { forbidden, malformedRecord, notFound, validation, validationMessages } from '../errors.js';
import { actsFor, loadUser, simpleUser, simpleUserByLogin, type Caller, type StoredUser } from '../lib/users.js';

export interface StoredRepo {
  id: number;
  name: string;
  owner: string;
  private: boolean;
  description: string | null;
  homepage: string | null;
  default_branch: string;
  created_at: string;
  updated_at: string;
  pushed_at: string;
  has_issues: boolean;
  has_projects: boolean;
  has_wiki: boolean;
  archived: boolean;
  allow_merge_commit: boolean;
  allow_squash_merge: boolean;
  allow_rebase_merge: boolean;
  delete_branch_on_merge: boolean;
  is_template: boolean;
  topics: string[];
  /** Open issues and pull requests, kept as GitHub shows it. */
  open_issues_count: number;
  /** Outside collaborators: login (lower case) → permission. */
  collaborators?: Record<string, Permission>;
}

export type Permission = 'pull' | 'triage' | 'push' | 'maintain' | 'admin';
const RANK: Record<Permission, number> = { pull: 1, triage: 2, push: 3, maintain: 4, admin: 5 };

const NAME = /^[A-Za-z0-9._-]{1,100}$/;

export function repoByName(tree: ReadTree, owner: string, name: string): StoredRepo | undefined {
  const key = `${owner.toLowerCase()}/${name.toLowerCase()}`;
  const link = tree.get<{ id?: unknown }>('repo_name', key);
  if (link === undefined) return undefined;
  if (typeof link !== 'object' || link === null || typeof link.id !== 'number') throw malformedRecord('repo_name', key, 'not a { id } link');
  const repo = tree.get<StoredRepo>('repo', String(link.id));
  // Every request on a repository starts here: what it answers is made from these fields.
  if (repo !== undefined && (typeof repo !== 'object' || repo === null || repo.id !== link.id || typeof repo.name !== 'string' || typeof repo.owner !== 'string')) {
    throw malformedRecord('repo', String(link.id), 'not a repository with its id, name and owner');
  }
  return repo;
}

/** The caller's permission on a repository (owners, org members and the site admin are admins), or null. */
export function permissionOf(tree: ReadTree, caller: Caller | null, repo: StoredRepo): Permission | null {
  if (caller === null) return null;
  if (actsFor(tree, caller, repo.owner)) return 'admin';
  return repo.collaborators?.[caller.login.toLowerCase()] ?? null;
}

export function canRead(tree: ReadTree, caller: Caller | null, repo: StoredRepo): boolean {
  return !repo.private || permissionOf(tree, caller, repo) !== null;
}

export function canWrite(tree: ReadTree, caller: Caller | null, repo: StoredRepo): boolean {
  const p = permissionOf(tree, caller, repo);
  return p !== null && RANK[p] >= RANK.push;
}

export function isAdmin(tree: ReadTree, caller: Caller | null, repo: StoredRepo): boolean {
  return permissionOf(tree, caller, repo) === 'admin';
}

/** The repository named by `:owner/:repo`, visible to the caller, or 404. With `write`, 403 when it may only read. */
export function loadRepo(call: Call, access: 'read' | 'write' | 'admin' = 'read'): StoredRepo {
  const repo = repoByName(call.ctx.tree, call.req.params['owner'] ?? '', call.req.params['repo'] ?? '');
  if (repo === undefined || !canRead(call.ctx.tree, call.caller, repo)) throw notFound();
  if (access === 'admin' && !isAdmin(call.ctx.tree, call.caller, repo)) throw forbidden('Must have admin rights to Repository.');
  if (access === 'write') {
    if (!canWrite(call.ctx.tree, call.caller, repo)) throw forbidden('Must have push access to Repository.');
    if (repo.archived) throw forbidden('Repository was archived so is read-only.');
  }
  return repo;
}

export function saveRepo(ctx: TwinContext, repo: StoredRepo): void {
  ctx.tree.put('repo', String(repo.id), repo);
}

export function touchRepo(ctx: TwinContext, repo: StoredRepo, pushed = false): void {
  repo.updated_at = isoNow(ctx);
  if (pushed) repo.pushed_at = repo.updated_at;
  saveRepo(ctx, repo);
}

export function fullName(repo: StoredRepo): string {
  return `${repo.owner}/${repo.name}`;
}

export function repoApi(repo: StoredRepo): string {
  return `${API}/repos/${fullName(repo)}`;
}

/** The repository object (GitHub's "full repository" when `full`). */
export function presentRepo(tree: ReadTree, repo: StoredRepo, caller: Caller | null, full = true): Obj {
  const u = repoApi(repo);
  const owner = loadUser(tree, repo.owner);
  const out: Obj = {
    id: repo.id,
    node_id: nodeId('Repository', repo.id),
    name: repo.name,
    full_name: fullName(repo),
    private: repo.private,
    owner: owner === undefined ? simpleUserByLogin(tree, repo.owner) : simpleUser(owner),
    html_url: `${WEB}/${fullName(repo)}`,
    description: repo.description,
    fork: false,
    url: u,
    archive_url: `${u}/{archive_format}{/ref}`,
    assignees_url: `${u}/assignees{/user}`,
    blobs_url: `${u}/git/blobs{/sha}`,
    branches_url: `${u}/branches{/branch}`,
    collaborators_url: `${u}/collaborators{/collaborator}`,
    comments_url: `${u}/comments{/number}`,
    commits_url: `${u}/commits{/sha}`,
    compare_url: `${u}/compare/{base}...{head}`,
    contents_url: `${u}/contents/{+path}`,
    contributors_url: `${u}/contributors`,
    deployments_url: `${u}/deployments`,
    downloads_url: `${u}/downloads`,
    events_url: `${u}/events`,
    forks_url: `${u}/forks`,
    git_commits_url: `${u}/git/commits{/sha}`,
    git_refs_url: `${u}/git/refs{/sha}`,
    git_tags_url: `${u}/git/tags{/sha}`,
    git_url: `git://github.com/${fullName(repo)}.git`,
    issue_comment_url: `${u}/issues/comments{/number}`,
    issue_events_url: `${u}/issues/events{/number}`,
    issues_url: `${u}/issues{/number}`,
    keys_url: `${u}/keys{/key_id}`,
    labels_url: `${u}/labels{/name}`,
    languages_url: `${u}/languages`,
    merges_url: `${u}/merges`,
    milestones_url: `${u}/milestones{/number}`,
    notifications_url: `${u}/notifications{?since,all,participating}`,
    pulls_url: `${u}/pulls{/number}`,
    releases_url: `${u}/releases{/id}`,
    ssh_url: `git@github.com:${fullName(repo)}.git`,
    stargazers_url: `${u}/stargazers`,
    statuses_url: `${u}/statuses/{sha}`,
    subscribers_url: `${u}/subscribers`,
    subscription_url: `${u}/subscription`,
    tags_url: `${u}/tags`,
    teams_url: `${u}/teams`,
    trees_url: `${u}/git/trees{/sha}`,
    clone_url: `${WEB}/${fullName(repo)}.git`,
    hooks_url: `${u}/hooks`,
    svn_url: `${WEB}/${fullName(repo)}`,
    homepage: repo.homepage,
    language: null,
    forks_count: 0,
    stargazers_count: 0,
    watchers_count: 0,
    size: 0,
    default_branch: repo.default_branch,
    open_issues_count: repo.open_issues_count,
    is_template: repo.is_template,
    topics: repo.topics,
    has_issues: repo.has_issues,
    has_projects: repo.has_projects,
    has_wiki: repo.has_wiki,
    has_pages: false,
    has_downloads: true,
    has_discussions: false,
    archived: repo.archived,
    disabled: false,
    visibility: repo.private ? 'private' : 'public',
    pushed_at: repo.pushed_at,
    created_at: repo.created_at,
    updated_at: repo.updated_at,
    allow_forking: true,
    web_commit_signoff_required: false,
    forks: 0,
    open_issues: repo.open_issues_count,
    watchers: 0,
  };
  if (caller !== null) {
    const rank = RANK[permissionOf(tree, caller, repo) ?? 'pull'];
    out['permissions'] = { admin: rank >= 5, maintain: rank >= 4, push: rank >= 3, triage: rank >= 2, pull: true };
  }
  if (full) {
    out['allow_merge_commit'] = repo.allow_merge_commit;
    out['allow_squash_merge'] = repo.allow_squash_merge;
    out['allow_rebase_merge'] = repo.allow_rebase_merge;
    out['allow_auto_merge'] = false;
    out['delete_branch_on_merge'] = repo.delete_branch_on_merge;
    out['allow_update_branch'] = false;
    out['network_count'] = 0;
    out['subscribers_count'] = 0;
    if (owner?.type === 'Organization') out['organization'] = simpleUser(owner);
  }
  return out;
}

// ------------------------------------------------------------------ handlers

/**
 * GitHub's cap on a repository's description (350 characters): the repository object carries it
 * into every issue of a list, every pull request (twice) and every webhook payload.
 */
function checkDescription(description: string | null | undefined, message?: string): void {
  const max = TEXT_LIMITS.repoDescription;
  if (description === null || description === undefined || !longerThan(description, max)) return;
  throw validation([{ resource: 'Repository', code: 'custom', field: 'description', message: `description cannot be more than ${max} characters` }], message);
}

function createRepo(call: Call, ownerLogin: string): { status: number; body: Obj } {
  const { ctx } = call;
  const b = bodyObject(call.req);
  const name = reqString(b, 'name', 'Repository');
  if (!NAME.test(name) || name === '.' || name === '..') {
    throw validation([{ resource: 'Repository', code: 'custom', field: 'name', message: 'name is invalid' }], 'Repository creation failed.');
  }
  if (repoByName(ctx.tree, ownerLogin, name) !== undefined) {
    throw validation([{ resource: 'Repository', code: 'custom', field: 'name', message: 'name already exists on this account' }], 'Repository creation failed.');
  }
  const description = optString(b, 'description', 'Repository') ?? null;
  checkDescription(description, 'Repository creation failed.');
  const homepage = optString(b, 'homepage', 'Repository') ?? null;
  const visibility = optString(b, 'visibility', 'Repository');
  if (visibility !== undefined && !['public', 'private', 'internal'].includes(visibility)) throw invalidField('Repository', 'visibility', visibility);
  const priv = optBool(b, 'private', 'Repository') ?? (visibility === 'private' || visibility === 'internal');
  const autoInit = optBool(b, 'auto_init', 'Repository') ?? false;
  const flags = {
    has_issues: optBool(b, 'has_issues', 'Repository') ?? true,
    has_projects: optBool(b, 'has_projects', 'Repository') ?? true,
    has_wiki: optBool(b, 'has_wiki', 'Repository') ?? true,
    is_template: optBool(b, 'is_template', 'Repository') ?? false,
    allow_merge_commit: optBool(b, 'allow_merge_commit', 'Repository') ?? true,
    allow_squash_merge: optBool(b, 'allow_squash_merge', 'Repository') ?? true,
    allow_rebase_merge: optBool(b, 'allow_rebase_merge', 'Repository') ?? true,
    delete_branch_on_merge: optBool(b, 'delete_branch_on_merge', 'Repository') ?? false,
  };
  const owner = loadUser(ctx.tree, ownerLogin);
  if (owner === undefined) throw notFound();
  const now = isoNow(ctx);
  const repo: StoredRepo = {
    id: nextNumber(ctx, 'repo') + 1_000,
    name,
    owner: owner.login,
    private: priv,
    description,
    homepage,
    default_branch: 'main',
    created_at: now,
    updated_at: now,
    pushed_at: now,
    archived: false,
    topics: [],
    open_issues_count: 0,
    ...flags,
  };
  ctx.tree.put('repo_name', `${owner.login.toLowerCase()}/${name.toLowerCase()}`, { id: repo.id });
  saveRepo(ctx, repo);
  if (autoInit) {
    const me = call.caller === null ? undefined : loadUser(ctx.tree, call.caller.login);
    const person = { name: me?.name ?? me?.login ?? 'GitHub', email: me?.email ?? 'noreply@github.com', date: now };
    const readme = `# ${name}\n${description === null ? '' : '\n' + description + '\n'}`;
    const blob = putBlob(ctx, repo.id, utf8Encode(readme));
    const edit = new TreeEditor(ctx.tree, repo.id, null);
    edit.set('README.md', { mode: '100644', type: 'blob', sha: blob });
    const tree = edit.write((o) => putObject(ctx, repo.id, o));
    const commit = putObject(ctx, repo.id, { t: 'commit', tree, parents: [], author: person, committer: person, message: 'Initial commit' });
    setRef(ctx, repo.id, `refs/heads/${repo.default_branch}`, commit);
  }
  call.headers['location'] = repoApi(repo);
  return { status: 201, body: presentRepo(ctx.tree, repo, call.caller) };
}

export function createForUser(call: Call): { status: number; body: Obj } {
  return createRepo(call, (call.caller as Caller).login);
}

export function createInOrg(call: Call): { status: number; body: Obj } {
  const org = loadUser(call.ctx.tree, call.req.params['org'] ?? '');
  if (org === undefined || org.type !== 'Organization') throw notFound();
  if (!actsFor(call.ctx.tree, call.caller as Caller, org.login)) throw forbidden('You need admin access to the organization before adding a repository to it.');
  return createRepo(call, org.login);
}

export function getRepo(call: Call): { body: Obj } {
  return { body: presentRepo(call.ctx.tree, loadRepo(call), call.caller) };
}

export function updateRepo(call: Call): { body: Obj } {
  const { ctx } = call;
  const repo = loadRepo(call, 'admin');
  const b = bodyObject(call.req);
  const name = optString(b, 'name', 'Repository');
  if (name !== undefined && name !== repo.name) {
    if (!NAME.test(name)) throw invalidField('Repository', 'name', name);
    const clash = repoByName(ctx.tree, repo.owner, name);
    if (clash !== undefined && clash.id !== repo.id) {
      throw validation([{ resource: 'Repository', code: 'custom', field: 'name', message: 'name already exists on this account' }]);
    }
  }
  const defaultBranch = optString(b, 'default_branch', 'Repository');
  if (defaultBranch !== undefined && defaultBranch !== repo.default_branch && getRef(ctx.tree, repo.id, `refs/heads/${defaultBranch}`) === undefined) {
    throw validation([{ resource: 'Repository', code: 'invalid', field: 'default_branch' }]);
  }
  const visibility = optString(b, 'visibility', 'Repository');
  if (visibility !== undefined && !['public', 'private', 'internal'].includes(visibility)) throw invalidField('Repository', 'visibility', visibility);
  const description = b['description'] === null ? null : optString(b, 'description', 'Repository');
  checkDescription(description);
  const homepage = b['homepage'] === null ? null : optString(b, 'homepage', 'Repository');
  const priv = optBool(b, 'private', 'Repository');
  const bools = ['has_issues', 'has_projects', 'has_wiki', 'is_template', 'archived', 'allow_merge_commit', 'allow_squash_merge', 'allow_rebase_merge', 'delete_branch_on_merge'] as const;
  const flags: Partial<Record<(typeof bools)[number], boolean>> = {};
  for (const k of bools) {
    const v = optBool(b, k, 'Repository');
    if (v !== undefined) flags[k] = v;
  }
  if (name !== undefined && name !== repo.name) {
    ctx.tree.delete('repo_name', `${repo.owner.toLowerCase()}/${repo.name.toLowerCase()}`);
    ctx.tree.put('repo_name', `${repo.owner.toLowerCase()}/${name.toLowerCase()}`, { id: repo.id });
    repo.name = name;
  }
  if (description !== undefined) repo.description = description;
  if (homepage !== undefined) repo.homepage = homepage;
  if (defaultBranch !== undefined) repo.default_branch = defaultBranch;
  if (priv !== undefined) repo.private = priv;
  if (visibility !== undefined) repo.private = visibility !== 'public';
  Object.assign(repo, flags);
  touchRepo(ctx, repo);
  return { body: presentRepo(ctx.tree, repo, call.caller) };
}

export function deleteRepo(call: Call): { status: number } {
  const repo = loadRepo(call, 'admin');
  // Child records (issues, objects, refs) are keyed by the id, which is never reused, so they
  // simply become unreachable.
  call.ctx.tree.delete('repo_name', `${repo.owner.toLowerCase()}/${repo.name.toLowerCase()}`);
  call.ctx.tree.delete('repo', String(repo.id));
  return { status: 204 };
}

/** GitHub's topic rules: at most 20 per repository, each lower case letters, digits and hyphens, starting with a letter or digit, at most 50 characters. */
const TOPIC = /^[a-z0-9][a-z0-9-]{0,49}$/;
const MAX_TOPICS = 20;

export function replaceTopics(call: Call): { body: Obj } {
  const repo = loadRepo(call, 'write');
  const names = optStringArray(bodyObject(call.req), 'names', 'Repository');
  if (names === undefined) throw validation([{ resource: 'Repository', field: 'names', code: 'missing_field' }]);
  // Saved as lower case, as GitHub's docs say; the set is what is counted.
  const topics = [...new Set(names.map((n) => n.toLowerCase()))];
  // Topics are shown in every repository object: in each issue of a list, twice per pull
  // request, in every webhook payload. GitHub's refusals are bare strings.
  if (topics.length > MAX_TOPICS) throw validationMessages([`A repository cannot have more than ${MAX_TOPICS} topics.`]);
  if (topics.some((n) => !TOPIC.test(n))) throw validationMessages(['Topics must start with a lowercase letter or number, consist of 50 characters or less, and can include hyphens.']);
  repo.topics = topics;
  touchRepo(call.ctx, repo);
  return { body: { names: repo.topics } };
}

export function getTopics(call: Call): { body: Obj } {
  return { body: { names: loadRepo(call).topics } };
}

/** Every repository an owner has, in name order. */
export function reposOf(tree: ReadTree, owner: string): StoredRepo[] {
  const key = owner.toLowerCase();
  const out: StoredRepo[] = [];
  let after = `${key}/`;
  for (;;) {
    const page = tree.list<{ id: number }>('repo_name', { after, before: `${key}0`, limit: 100 });
    for (const item of page.items) {
      const r = tree.get<StoredRepo>('repo', String(item.value.id));
      if (r !== undefined) out.push(r);
    }
    const last = page.items[page.items.length - 1];
    if (!page.hasMore || last === undefined) break;
    after = last.id;
  }
  return out;
}

export function allRepos(tree: ReadTree): StoredRepo[] {
  const out: StoredRepo[] = [];
  let after: string | undefined;
  for (;;) {
    const page = tree.list<StoredRepo>('repo', after === undefined ? { limit: 100 } : { after, limit: 100 });
    for (const item of page.items) out.push(item.value);
    const last = page.items[page.items.length - 1];
    if (!page.hasMore || last === undefined) break;
    after = last.id;
  }
  return out;
}

function listSorted(call: Call, repos: StoredRepo[]): { body: Obj[] } {
  const sort = str(call.req.query, 'sort') ?? 'full_name';
  const dirDefault = sort === 'full_name' ? 'asc' : 'desc';
  const direction = (str(call.req.query, 'direction') ?? dirDefault) === 'asc' ? 'asc' : 'desc';
  const key = (r: StoredRepo): string => (sort === 'created' ? r.created_at : sort === 'updated' ? r.updated_at : sort === 'pushed' ? r.pushed_at : fullName(r).toLowerCase());
  const visible = repos.filter((r) => canRead(call.ctx.tree, call.caller, r));
  const type = str(call.req.query, 'type') ?? str(call.req.query, 'visibility') ?? 'all';
  const typed = visible.filter((r) => (type === 'public' ? !r.private : type === 'private' ? r.private : true));
  return { body: paginate(call, sortBy(typed, key, direction)).map((r) => presentRepo(call.ctx.tree, r, call.caller, false)) };
}

export function listForAuthenticatedUser(call: Call): { body: Obj[] } {
  const me = call.caller as Caller;
  const mine = reposOf(call.ctx.tree, me.login);
  // Repositories of the organizations the caller belongs to count too (affiliation=organization_member).
  const orgs = allRepos(call.ctx.tree).filter((r) => r.owner.toLowerCase() !== me.login.toLowerCase() && (
    (loadUser(call.ctx.tree, r.owner)?.type === 'Organization' && actsFor(call.ctx.tree, { ...me, siteAdmin: false }, r.owner)) ||
    r.collaborators?.[me.login.toLowerCase()] !== undefined));
  return listSorted(call, [...mine, ...orgs]);
}

export function listForUser(call: Call): { body: Obj[] } {
  const user = loadUser(call.ctx.tree, call.req.params['username'] ?? '');
  if (user === undefined) throw notFound();
  return listSorted(call, reposOf(call.ctx.tree, user.login));
}

export function listForOrg(call: Call): { body: Obj[] } {
  const org = loadUser(call.ctx.tree, call.req.params['org'] ?? '');
  if (org === undefined || org.type !== 'Organization') throw notFound();
  return listSorted(call, reposOf(call.ctx.tree, org.login));
}

// ------------------------------------------------------------------ collaborators

function collaboratorUser(call: Call): StoredUser {
  const u = loadUser(call.ctx.tree, call.req.params['username'] ?? '');
  if (u === undefined || u.type !== 'User') throw notFound();
  return u;
}

/** `PUT …/collaborators/{username}` `{ permission }`: added at once (no invitation to accept), 201 the first time, 204 after. */
export function addCollaborator(call: Call): { status: number; body?: Obj } {
  const repo = loadRepo(call, 'admin');
  const u = collaboratorUser(call);
  const raw = optString(bodyObject(call.req), 'permission', 'Collaborator') ?? 'push';
  const permission = (raw === 'read' ? 'pull' : raw === 'write' ? 'push' : raw) as Permission;
  if (RANK[permission] === undefined) throw invalidField('Collaborator', 'permission', raw);
  if (u.login.toLowerCase() === repo.owner.toLowerCase()) throw validation([{ resource: 'Repository', code: 'custom', message: 'Repository owner cannot be a collaborator' }]);
  const had = repo.collaborators?.[u.login.toLowerCase()] !== undefined;
  repo.collaborators = { ...(repo.collaborators ?? {}), [u.login.toLowerCase()]: permission };
  touchRepo(call.ctx, repo);
  if (had) return { status: 204 };
  return {
    status: 201,
    body: { id: nextNumber(call.ctx, 'invitation'), repository: presentRepo(call.ctx.tree, repo, null, false), invitee: simpleUser(u), inviter: simpleUserByLogin(call.ctx.tree, (call.caller as Caller).login), permissions: raw === 'pull' ? 'read' : raw === 'push' ? 'write' : raw, created_at: isoNow(call.ctx), expired: false, url: `${repoApi(repo)}/invitations`, html_url: `${WEB}/${fullName(repo)}/invitations` },
  };
}

export function removeCollaborator(call: Call): { status: number } {
  const repo = loadRepo(call, 'admin');
  const u = collaboratorUser(call);
  const next = { ...(repo.collaborators ?? {}) };
  delete next[u.login.toLowerCase()];
  repo.collaborators = next;
  touchRepo(call.ctx, repo);
  return { status: 204 };
}

export function checkCollaborator(call: Call): { status: number } {
  const repo = loadRepo(call);
  const u = collaboratorUser(call);
  const p = permissionOf(call.ctx.tree, { kind: 'token', login: u.login, siteAdmin: false, scopes: [] }, repo);
  if (p === null) throw notFound();
  return { status: 204 };
}

export function getCollaboratorPermission(call: Call): { body: Obj } {
  const repo = loadRepo(call);
  const u = collaboratorUser(call);
  const p = permissionOf(call.ctx.tree, { kind: 'token', login: u.login, siteAdmin: u.site_admin, scopes: [] }, repo);
  const legacy = p === null ? (repo.private ? 'none' : 'read') : p === 'admin' ? 'admin' : RANK[p] >= RANK.push ? 'write' : 'read';
  return { body: { permission: legacy, role_name: p === null ? (repo.private ? 'none' : 'read') : p === 'pull' ? 'read' : p === 'push' ? 'write' : p, user: simpleUser(u) } };
}

export function listCollaborators(call: Call): { body: Obj[] } {
  const repo = loadRepo(call, 'write');
  const owner = loadUser(call.ctx.tree, repo.owner);
  const logins = owner?.type === 'Organization' ? [...(owner.members ?? [])] : [repo.owner.toLowerCase()];
  for (const l of Object.keys(repo.collaborators ?? {})) if (!logins.includes(l)) logins.push(l);
  const out: Obj[] = [];
  for (const l of logins) {
    const u = loadUser(call.ctx.tree, l);
    if (u === undefined) continue;
    const rank = RANK[permissionOf(call.ctx.tree, { kind: 'token', login: u.login, siteAdmin: false, scopes: [] }, repo) ?? 'pull'];
    out.push({ ...simpleUser(u), permissions: { admin: rank >= 5, maintain: rank >= 4, push: rank >= 3, triage: rank >= 2, pull: true }, role_name: ['', 'read', 'triage', 'write', 'maintain', 'admin'][rank] });
  }
  return { body: paginate(call, out) };
}
