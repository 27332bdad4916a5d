/**
 * Users, organizations and credentials: the twin's own state.
 *
 * - `user/<login, lower case>` → StoredUser (an organization is a user of type `Organization`
 *   with `members`);
 * - `user_email/<email, lower case>` → `{ login }`, so commit authors map to accounts;
 * - `token/<sha256 hex of the token>` → `{ login, scopes, id, created_at }`: the token itself is
 *   answered once and never kept.
 *
 * A fresh twin has one site admin, `admin` (id 1), that exists without a record so a world's
 * first request need not write; the world token presented as the GitHub credential acts as it.
 */
import type { ReadTree, TwinContext, TwinRequest } from '../../../../sdk/twin/index.js';
import { hex, utf8Encode } from './bytes.js';
import { sha256 } from './hash.js';
import { API, WEB, nodeId } from './addresses.js';
import { GhError } from '../errors.js';
import { listRange } from './records.js';

export const ADMIN_LOGIN = 'admin';

export interface StoredUser {
  id: number;
  login: string;
  type: 'User' | 'Organization';
  site_admin: boolean;
  name: string | null;
  email: string | null;
  company: string | null;
  blog: string;
  location: string | null;
  bio: string | null;
  created_at: string;
  updated_at: string;
  suspended_at?: string | null;
  /** Organizations only: member logins (lower case); the first is the org's admin. */
  members?: string[];
}

export interface Caller {
  kind: 'admin' | 'token';
  login: string;
  siteAdmin: boolean;
  scopes: string[];
}

const ADMIN: StoredUser = {
  id: 1,
  login: ADMIN_LOGIN,
  type: 'User',
  site_admin: true,
  name: 'Site Admin',
  email: 'admin@twin.github.test',
  company: null,
  blog: '',
  location: null,
  bio: null,
  created_at: '2008-01-14T04:33:35Z',
  updated_at: '2008-01-14T04:33:35Z',
};

export function loadUser(tree: ReadTree, login: string): StoredUser | undefined {
  const key = login.toLowerCase();
  return tree.get<StoredUser>('user', key) ?? (key === ADMIN_LOGIN ? ADMIN : undefined);
}

export function userByEmail(tree: ReadTree, email: string): StoredUser | undefined {
  if (email.toLowerCase() === ADMIN.email) return loadUser(tree, ADMIN_LOGIN);
  const link = tree.get<{ login: string }>('user_email', email.toLowerCase());
  return link === undefined ? undefined : loadUser(tree, link.login);
}

export function tokenHash(token: string): string {
  return hex(sha256(utf8Encode('twinkit-github-token:' + token)));
}

/** The token a request presents: `token X`, `Bearer X`, or Basic with the token as the password. */
export function presentedToken(req: TwinRequest): string | undefined {
  const h = (req.headers['authorization'] ?? '').trim();
  if (h === '') return undefined;
  const m = /^(\w+)\s+(.+)$/.exec(h);
  if (m === null) return h;
  const scheme = (m[1] as string).toLowerCase();
  const value = (m[2] as string).trim();
  if (scheme === 'basic') {
    const A = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    let bits = 0, acc = 0, out = '';
    for (const ch of value.replace(/=+$/, '')) {
      const v = A.indexOf(ch);
      if (v < 0) return value;
      acc = ((acc << 6) | v) & 0xffffff;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out += String.fromCharCode((acc >> bits) & 0xff);
      }
    }
    const colon = out.indexOf(':');
    return colon < 0 ? out : out.slice(colon + 1);
  }
  return value;
}

/** Who is calling: the site admin (world token), a user (their token), or nobody; a bad token is a 401. */
export function authenticate(req: TwinRequest, ctx: TwinContext): Caller | null {
  if ((req.headers['x-kit-auth'] ?? '').toLowerCase() === 'authorization') {
    return { kind: 'admin', login: ADMIN_LOGIN, siteAdmin: true, scopes: ['repo', 'admin:org', 'site_admin', 'user', 'admin:repo_hook'] };
  }
  const token = presentedToken(req);
  if (token === undefined) return null;
  if (token.length > 256) throw new GhError(401, 'Bad credentials');
  const t = ctx.tree.get<{ login: string; scopes: string[] }>('token', tokenHash(token));
  if (t === undefined) throw new GhError(401, 'Bad credentials');
  const user = loadUser(ctx.tree, t.login);
  if (user === undefined || (user.suspended_at ?? null) !== null) throw new GhError(401, 'Bad credentials');
  return { kind: 'token', login: user.login, siteAdmin: user.site_admin, scopes: t.scopes };
}

export function userUrls(login: string): Record<string, string> {
  const u = `${API}/users/${login}`;
  return {
    avatar_url: `https://avatars.githubusercontent.com/u/${encodeURIComponent(login)}?v=4`,
    gravatar_id: '',
    url: u,
    html_url: `${WEB}/${login}`,
    followers_url: `${u}/followers`,
    following_url: `${u}/following{/other_user}`,
    gists_url: `${u}/gists{/gist_id}`,
    starred_url: `${u}/starred{/owner}{/repo}`,
    subscriptions_url: `${u}/subscriptions`,
    organizations_url: `${u}/orgs`,
    repos_url: `${u}/repos`,
    events_url: `${u}/events{/privacy}`,
    received_events_url: `${u}/received_events`,
  };
}

/** The short user object embedded in other objects. */
export function simpleUser(u: StoredUser): Record<string, unknown> {
  return {
    login: u.login,
    id: u.id,
    node_id: nodeId(u.type, u.id),
    ...userUrls(u.login),
    type: u.type,
    user_view_type: 'public',
    site_admin: u.site_admin,
  };
}

/** A login's short object, or a ghost for a deleted account (GitHub shows `ghost`). */
export function simpleUserByLogin(tree: ReadTree, login: string): Record<string, unknown> {
  const u = loadUser(tree, login);
  if (u !== undefined) return simpleUser(u);
  return simpleUser({ ...ADMIN, id: 10137, login: 'ghost', site_admin: false, name: null, email: null });
}

export function countOwned(tree: ReadTree, login: string): { public: number; private: number } {
  const key = login.toLowerCase();
  let pub = 0, priv = 0;
  for (const item of listRange<{ id: number }>(tree, 'repo_name', `${key}/`, `${key}0`)) {
    const repo = tree.get<{ private: boolean }>('repo', String(item.value.id));
    if (repo === undefined) continue;
    if (repo.private) priv++;
    else pub++;
  }
  return { public: pub, private: priv };
}

export function fullUser(tree: ReadTree, u: StoredUser, self: boolean): Record<string, unknown> {
  const counts = countOwned(tree, u.login);
  const out: Record<string, unknown> = {
    ...simpleUser(u),
    name: u.name,
    company: u.company,
    blog: u.blog,
    location: u.location,
    email: u.email,
    hireable: null,
    bio: u.bio,
    twitter_username: null,
    public_repos: counts.public,
    public_gists: 0,
    followers: 0,
    following: 0,
    created_at: u.created_at,
    updated_at: u.updated_at,
  };
  if (u.type === 'Organization') out['members_count'] = (u.members ?? []).length;
  if (self) {
    out['private_gists'] = 0;
    out['total_private_repos'] = counts.private;
    out['owned_private_repos'] = counts.private;
    out['disk_usage'] = 0;
    out['collaborators'] = 0;
    out['two_factor_authentication'] = false;
    out['plan'] = { name: 'enterprise', space: 976562499, collaborators: 0, private_repos: 9999 };
  }
  if (u.suspended_at !== undefined) out['suspended_at'] = u.suspended_at;
  return out;
}

export function orgObject(u: StoredUser): Record<string, unknown> {
  const base = `${API}/orgs/${u.login}`;
  return {
    login: u.login,
    id: u.id,
    node_id: nodeId('Organization', u.id),
    url: base,
    repos_url: `${base}/repos`,
    events_url: `${base}/events`,
    hooks_url: `${base}/hooks`,
    issues_url: `${base}/issues`,
    members_url: `${base}/members{/member}`,
    public_members_url: `${base}/public_members{/member}`,
    avatar_url: `https://avatars.githubusercontent.com/u/${encodeURIComponent(u.login)}?v=4`,
    description: u.bio,
    name: u.name,
    company: u.company,
    blog: u.blog,
    location: u.location,
    email: u.email,
    html_url: `${WEB}/${u.login}`,
    created_at: u.created_at,
    updated_at: u.updated_at,
    type: 'Organization',
  };
}

/** Whether `login` belongs to organization `org` (or is the org/user itself). */
export function actsFor(tree: ReadTree, caller: Caller, ownerLogin: string): boolean {
  if (caller.siteAdmin) return true;
  if (caller.login.toLowerCase() === ownerLogin.toLowerCase()) return true;
  const owner = loadUser(tree, ownerLogin);
  return owner?.type === 'Organization' && (owner.members ?? []).includes(caller.login.toLowerCase());
}
