/**
 * `/user`, `/users/{username}`, organizations, and the GitHub Enterprise Server admin paths
 * that make users, organizations and tokens (site admin only).
 */
import {
  bodyObject, isoNow, nextNumber, optStringArray, optString, reqString, type Call, type Obj,
} from '../lib/http.js';
import { API } from '../lib/addresses.js';
import { forbidden, notFound, validation } from '../errors.js';
import { fullUser, loadUser, orgObject, tokenHash, type Caller, type StoredUser } from '../lib/users.js';

const LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;

function requireSiteAdmin(call: Call): Caller {
  const c = call.caller as Caller;
  if (!c.siteAdmin) throw forbidden('Must have admin rights to use this endpoint.');
  return c;
}

export function getAuthenticated(call: Call): { body: Obj } {
  const u = loadUser(call.ctx.tree, (call.caller as Caller).login);
  if (u === undefined) throw notFound();
  return { body: fullUser(call.ctx.tree, u, true) };
}

export function updateAuthenticated(call: Call): { body: Obj } {
  const { ctx } = call;
  const u = loadUser(ctx.tree, (call.caller as Caller).login) as StoredUser;
  const b = bodyObject(call.req);
  const fields = ['name', 'email', 'blog', 'company', 'location', 'bio'] as const;
  const next: Partial<StoredUser> = {};
  for (const f of fields) {
    const v = optString(b, f, 'User');
    if (v !== undefined) next[f] = v;
  }
  if (next.email !== undefined && next.email !== null) claimEmail(call, u.login, next.email, u.email);
  const updated: StoredUser = { ...u, ...next, updated_at: isoNow(ctx) };
  ctx.tree.put('user', u.login.toLowerCase(), updated);
  return { body: fullUser(ctx.tree, updated, true) };
}

function claimEmail(call: Call, login: string, email: string, previous: string | null): void {
  const owner = call.ctx.tree.get<{ login: string }>('user_email', email.toLowerCase());
  if (owner !== undefined && owner.login !== login.toLowerCase()) {
    throw validation([{ resource: 'User', field: 'email', code: 'custom', message: 'email is already in use' }]);
  }
  if (previous !== null && previous.toLowerCase() !== email.toLowerCase()) call.ctx.tree.delete('user_email', previous.toLowerCase());
  call.ctx.tree.put('user_email', email.toLowerCase(), { login: login.toLowerCase() });
}

export function getByUsername(call: Call): { body: Obj } {
  const u = loadUser(call.ctx.tree, call.req.params['username'] ?? '');
  if (u === undefined) throw notFound();
  const self = call.caller !== null && call.caller.login.toLowerCase() === u.login.toLowerCase();
  return { body: fullUser(call.ctx.tree, u, self) };
}

function newAccount(call: Call, login: string, type: StoredUser['type'], extra: Partial<StoredUser>): StoredUser {
  const { ctx } = call;
  if (!LOGIN.test(login)) throw validation([{ resource: type === 'User' ? 'User' : 'Organization', field: 'login', code: 'invalid', value: login }]);
  if (loadUser(ctx.tree, login) !== undefined) {
    throw validation([{ resource: type === 'User' ? 'User' : 'Organization', field: 'login', code: 'custom', message: 'login has already been taken' }]);
  }
  const now = isoNow(ctx);
  const user: StoredUser = {
    id: nextNumber(ctx, 'user') + 1,
    login,
    type,
    site_admin: false,
    name: null,
    email: null,
    company: null,
    blog: '',
    location: null,
    bio: null,
    created_at: now,
    updated_at: now,
    ...extra,
  };
  return user;
}

/** `POST /admin/users` `{ login, email }` → 201 the user. */
export function adminCreateUser(call: Call): { status: number; body: Obj } {
  requireSiteAdmin(call);
  const b = bodyObject(call.req);
  const login = reqString(b, 'login', 'User');
  const email = optString(b, 'email', 'User') ?? null;
  const user = newAccount(call, login, 'User', { email });
  if (email !== null) claimEmail(call, login, email, null);
  call.ctx.tree.put('user', login.toLowerCase(), user);
  return { status: 201, body: fullUser(call.ctx.tree, user, false) };
}

/** `DELETE /admin/users/{username}`: the user's repositories stay, owned by a login nobody has. */
export function adminDeleteUser(call: Call): { status: number } {
  requireSiteAdmin(call);
  const u = loadUser(call.ctx.tree, call.req.params['username'] ?? '');
  if (u === undefined || u.type !== 'User') throw notFound();
  if (u.site_admin && u.id === 1) throw forbidden('The site admin cannot be deleted.');
  call.ctx.tree.delete('user', u.login.toLowerCase());
  if (u.email !== null) call.ctx.tree.delete('user_email', u.email.toLowerCase());
  return { status: 204 };
}

/** `PUT /users/{username}/suspended` and DELETE: a suspended user's tokens stop working. */
export function suspend(call: Call): { status: number } {
  requireSiteAdmin(call);
  const u = loadUser(call.ctx.tree, call.req.params['username'] ?? '');
  if (u === undefined || u.type !== 'User') throw notFound();
  if (u.id === 1) throw forbidden('The site admin cannot be suspended.');
  call.ctx.tree.put('user', u.login.toLowerCase(), { ...u, suspended_at: call.req.method === 'PUT' ? isoNow(call.ctx) : null });
  return { status: 204 };
}

/** `POST /admin/users/{username}/authorizations` `{ scopes }` → 201 with the token, answered this once. */
export function adminCreateToken(call: Call): { status: number; body: Obj } {
  requireSiteAdmin(call);
  const { ctx } = call;
  const u = loadUser(ctx.tree, call.req.params['username'] ?? '');
  if (u === undefined || u.type !== 'User') throw notFound();
  const scopes = optStringArray(bodyObject(call.req), 'scopes', 'OauthAccess') ?? [];
  const token = ctx.id('ghp_', 36);
  const id = nextNumber(ctx, 'authorization');
  const now = isoNow(ctx);
  ctx.tree.put('token', tokenHash(token), { id, login: u.login.toLowerCase(), scopes, created_at: now });
  return {
    status: 201,
    body: {
      id,
      url: `${API}/authorizations/${id}`,
      app: { name: 'Site admin token', url: 'https://docs.github.com/enterprise/rest/enterprise-admin', client_id: '00000000000000000000' },
      token,
      hashed_token: tokenHash(token),
      token_last_eight: token.slice(-8),
      note: null,
      note_url: null,
      created_at: now,
      updated_at: now,
      scopes,
      fingerprint: null,
    },
  };
}

/** `POST /admin/organizations` `{ login, admin, profile_name }` → 201 the organization. */
export function adminCreateOrg(call: Call): { status: number; body: Obj } {
  requireSiteAdmin(call);
  const b = bodyObject(call.req);
  const login = reqString(b, 'login', 'Organization');
  const adminLogin = reqString(b, 'admin', 'Organization');
  const admin = loadUser(call.ctx.tree, adminLogin);
  if (admin === undefined || admin.type !== 'User') throw validation([{ resource: 'Organization', field: 'admin', code: 'invalid', value: adminLogin }]);
  const name = optString(b, 'profile_name', 'Organization') ?? null;
  const org = newAccount(call, login, 'Organization', { name, members: [admin.login.toLowerCase()] });
  call.ctx.tree.put('user', login.toLowerCase(), org);
  return { status: 201, body: orgObject(org) };
}

export function getOrg(call: Call): { body: Obj } {
  const org = loadUser(call.ctx.tree, call.req.params['org'] ?? '');
  if (org === undefined || org.type !== 'Organization') throw notFound();
  return { body: { ...orgObject(org), public_repos: 0, followers: 0, following: 0, has_organization_projects: true, has_repository_projects: true } };
}

/** `PUT /orgs/{org}/memberships/{username}`: org admins and the site admin add members. */
export function setMembership(call: Call): { body: Obj } {
  const { ctx } = call;
  const org = loadUser(ctx.tree, call.req.params['org'] ?? '');
  if (org === undefined || org.type !== 'Organization') throw notFound();
  const caller = call.caller as Caller;
  const members = org.members ?? [];
  if (!caller.siteAdmin && members[0] !== caller.login.toLowerCase()) throw forbidden('You must be an admin to add members.');
  const user = loadUser(ctx.tree, call.req.params['username'] ?? '');
  if (user === undefined || user.type !== 'User') throw notFound();
  if (!members.includes(user.login.toLowerCase())) ctx.tree.put('user', org.login.toLowerCase(), { ...org, members: [...members, user.login.toLowerCase()] });
  return {
    body: { url: `${API}/orgs/${org.login}/memberships/${user.login}`, state: 'active', role: members[0] === user.login.toLowerCase() ? 'admin' : 'member', organization: orgObject(org) },
  };
}

export function listOrgMembers(call: Call): { body: Obj[] } {
  const org = loadUser(call.ctx.tree, call.req.params['org'] ?? '');
  if (org === undefined || org.type !== 'Organization') throw notFound();
  const out: Obj[] = [];
  for (const m of org.members ?? []) {
    const u = loadUser(call.ctx.tree, m);
    if (u !== undefined) out.push(fullUser(call.ctx.tree, u, false));
  }
  return { body: out };
}

export function rateLimit(call: Call): { body: Obj } {
  const reset = Math.floor(call.ctx.nowMs() / 3_600_000 + 1) * 3600;
  const limit = call.caller === null ? 60 : 5000;
  const core = { limit, used: 0, remaining: limit, reset };
  return { body: { resources: { core, search: { limit: 30, used: 0, remaining: 30, reset } }, rate: core } };
}
