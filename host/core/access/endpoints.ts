/**
 * The world endpoints of browser access, answered by the host for every host (spec: Sessions
 * and keys; Authentication 5–10): `…/session` (open, look at, end) and `…/keys`.
 */
import type { Scope } from '../../../runtime/runner/types.js';
import type { HostErrorCode } from '../../errors.js';
import { errorAnswer, hostAnswer } from '../answers.js';
import { KitError } from '../../../runtime/errors.js';
import type { BodyReader, HttpAnswer, HttpHead } from '../types.js';
import { clearedSessionCookie, sessionCookie, sessionIdsOf } from './cookies.js';
import type { PassVerifier } from './passes.js';
import { keyRow, PASS_SESSION_MS, SESSION_MS, type Grant, type SessionRecord, type WorldAccess } from './world-access.js';

/** Where the request stands, as the core found it. */
export interface AccessContext {
  head: HttpHead;
  /** `<org>/<world>`. */
  world: string;
  access: WorldAccess;
  /** The world's own origin, or null where it has none. */
  worldOrigin: string | null;
  /** The request came to the world's own origin. */
  atOrigin: boolean;
  /** The host listens on loopback only (Authentication 7). */
  loopback: boolean;
  passes: PassVerifier | null;
  code: string;
}

const JSON_HEADERS = { 'content-type': 'application/json', 'cache-control': 'no-store' };

function json(status: number, body: unknown, code: string, extra: Record<string, string> = {}): HttpAnswer {
  return { status, headers: { ...JSON_HEADERS, 'x-kit-world-code': code, ...extra }, body: JSON.stringify(body) };
}

const secure = (ctx: AccessContext): boolean => ctx.worldOrigin?.startsWith('https:') === true;

/** 400 `bad_request` naming the field at fault in `param`. */
function invalid(message: string, param: string, code: string): HttpAnswer {
  return errorAnswer(new KitError('bad_request', message, { param }), code);
}

function parseBody(body: Uint8Array | undefined): Record<string, unknown> | null | 'invalid' {
  if (body === undefined || body.byteLength === 0) return null;
  try {
    const value: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : 'invalid';
  } catch {
    return 'invalid';
  }
}

/** The answer that opens a session: the cookie, and the session as the spec shows it. */
function opened(ctx: AccessContext, record: SessionRecord, presentedIds: string[], shown: Record<string, unknown>): HttpAnswer {
  const now = record.createdAt;
  // A session is always a new id: one presented (planted, or this browser's old one) is ended, never adopted.
  for (const old of presentedIds) ctx.access.endSession(old);
  const id = ctx.access.openSession(record, now);
  return json(200, { world: ctx.world, scope: record.scope, ...shown, origin: record.origin, expiresAt: new Date(record.expiresAt).toISOString() }, ctx.code, {
    'set-cookie': sessionCookie(id, record.expiresAt - now, secure(ctx)),
  });
}

function wrongOrigin(ctx: AccessContext): HttpAnswer {
  if (ctx.worldOrigin === null) return hostAnswer('no_world_origin', `${ctx.world} has no origin of its own on this host (a world whose name holds "--", or too long a name), so it opens no browser session`, ctx.code);
  const answer = hostAnswer('wrong_origin', `a session of ${ctx.world} lives at its own origin, ${ctx.worldOrigin}: ask there`, ctx.code);
  // The spec's body is `{ origin }`; the error shape rides beside it.
  return { ...answer, body: JSON.stringify({ origin: ctx.worldOrigin, ...(JSON.parse(answer.body as string) as object) }) };
}

const sameOrigin = (head: HttpHead): boolean => head.headers['sec-fetch-site'] === 'same-origin';

/**
 * `POST …/session`, judged before the core's own credential check: a pass, or nothing on
 * loopback, are credentials only here. `grant` is what a token or a key presented opens (null: none).
 */
export function openSession(ctx: AccessContext, grant: Grant | null, presentedToken: boolean): HttpAnswer | BodyReader {
  const { head, code } = ctx;
  const h = head.headers;
  const elsewhere = ctx.worldOrigin === null || !ctx.atOrigin;
  const presentedIds = sessionIdsOf(h['cookie']);
  const pass = h['x-kit-pass'];
  if (pass !== undefined) {
    if (elsewhere) return wrongOrigin(ctx);
    if (!sameOrigin(head) || (h['origin'] !== undefined && h['origin'] !== ctx.worldOrigin)) {
      return hostAnswer('cross_site_request', "a pass is spent from the world's own page: Sec-Fetch-Site must be same-origin", code);
    }
    const verifier = ctx.passes;
    const origin = ctx.worldOrigin!;
    return async () => {
      if (verifier === null) return hostAnswer('pass_untrusted_issuer', 'this host trusts no issuer of passes (--trust, TRUSTED_ISSUERS)', code);
      const now = Date.now();
      const checked = await verifier.verify(pass.trim(), { world: ctx.world, origin, now });
      if (!checked.ok) return hostAnswer(`pass_${checked.reason}` as HostErrorCode, checked.message, code);
      const c = checked.claims;
      // Spent per issuer: two platforms' ids may meet.
      if (!ctx.access.spendPass(`${c.issuer} ${c.id}`, c.expiresAt, now)) return hostAnswer('pass_spent', 'this pass was spent already: a pass opens one session', code);
      // Spent on disk before the session is answered: a replay after a restart is refused too.
      await ctx.access.durable();
      const named = c.name !== undefined && c.name !== '' ? { name: c.name } : {};
      const record: SessionRecord = { scope: c.scope, kind: 'pass', origin, who: c.subject, ...named, issuer: c.issuer, keyId: null, createdAt: now, expiresAt: now + PASS_SESSION_MS };
      return opened(ctx, record, presentedIds, { who: c.subject, ...named, issuer: c.issuer });
    };
  }
  const now = Date.now();
  if (!presentedToken) {
    // Authentication 7: the world's own page on this machine, asking for itself.
    if (!elsewhere && ctx.loopback && h['origin'] === ctx.worldOrigin && sameOrigin(head)) {
      return async () => {
        const record: SessionRecord = { scope: 'write', kind: 'local', origin: ctx.worldOrigin!, who: 'this machine', issuer: null, keyId: null, createdAt: now, expiresAt: now + SESSION_MS };
        const answer = opened(ctx, record, presentedIds, { local: true });
        await ctx.access.durable();
        return answer;
      };
    }
    return hostAnswer('unauthenticated', 'a session is opened with the world token (x-kit-token), a read key, or a pass (x-kit-pass)', code, { 'www-authenticate': `Bearer realm="kit world ${ctx.world}"` });
  }
  if (grant === null) return hostAnswer('unauthenticated', `the token in x-kit-token does not open ${ctx.world}`, code, { 'www-authenticate': `Bearer realm="kit world ${ctx.world}"` });
  if (grant.kind === 'key' && grant.scope !== 'read') return hostAnswer('key_opens_no_session', 'a named key opens no session, except a key that may only read', code);
  if (elsewhere) return wrongOrigin(ctx);
  return async (body) => {
    const input = parseBody(body);
    if (input === 'invalid') return invalid('the body must be a JSON object { world, scope, origin? }', 'body', code);
    const world = input?.['world'];
    if (world !== undefined && world !== ctx.world) return invalid(`world must be "${ctx.world}", the world of this path`, 'world', code);
    const asked = input?.['scope'] ?? grant.scope;
    if (asked !== 'read' && asked !== 'write') return invalid('scope must be "read" or "write"', 'scope', code);
    if (asked === 'write' && grant.scope === 'read') return hostAnswer('forbidden', 'a read credential opens only a read session', code);
    const origin = input?.['origin'];
    if (origin !== undefined && origin !== ctx.worldOrigin) return wrongOrigin(ctx);
    const key = grant.kind === 'key' ? grant.key : null;
    const expiresAt = Math.min(now + SESSION_MS, key?.expiresAt ?? Infinity);
    const record: SessionRecord = { scope: asked, kind: key === null ? 'token' : 'key', origin: ctx.worldOrigin!, who: key === null ? null : (key.for ?? key.createdBy), issuer: null, keyId: key?.id ?? null, createdAt: now, expiresAt };
    const answer = opened(ctx, record, presentedIds, {});
    await ctx.access.durable();
    return answer;
  };
}

/** `GET` and `DELETE …/session`, after the core's credential check. */
export function sessionEndpoint(ctx: AccessContext, grant: Grant): HttpAnswer {
  const { head, code } = ctx;
  if (head.method === 'DELETE') {
    for (const id of sessionIdsOf(head.headers['cookie'])) ctx.access.endSession(id);
    return { status: 204, headers: { 'x-kit-world-code': code, 'set-cookie': clearedSessionCookie(secure(ctx)), 'cache-control': 'no-store' }, body: '' };
  }
  if (head.method !== 'GET' && head.method !== 'HEAD') return hostAnswer('method_not_allowed', '…/session answers GET, POST and DELETE', code, { allow: 'GET, HEAD, POST, DELETE' });
  if (grant.kind !== 'session') return json(200, { world: ctx.world, scope: grant.scope, via: grant.kind, origin: ctx.worldOrigin }, code);
  const s = grant.session;
  return json(
    200,
    {
      world: ctx.world,
      scope: s.scope,
      via: 'session',
      ...(s.kind === 'local' ? { local: true } : {}),
      ...(s.who !== null ? { who: s.who } : {}),
      ...(s.name !== undefined ? { name: s.name } : {}),
      ...(s.issuer !== null ? { issuer: s.issuer } : {}),
      origin: s.origin,
      expiresAt: new Date(s.expiresAt).toISOString(),
    },
    code,
  );
}

const KEY_NAME = /^[^\u0000-\u001f\u007f]{1,64}$/;
const PERSON = /^[^\u0000-\u001f\u007f]{1,256}$/;

/** Who a key made with `grant` is made by. */
function makerOf(grant: Grant): string {
  if (grant.kind === 'session') return grant.session.who ?? 'token';
  return 'token';
}

/** `…/keys` and `…/keys/<id>`, after the core's credential check. Managed with write access, never by a key. */
export function keysEndpoint(ctx: AccessContext, grant: Grant, sub: string): HttpAnswer | BodyReader {
  const { head, code } = ctx;
  if (grant.kind === 'key') return hostAnswer('keys_need_write_access', "named keys are managed with the world's token or a person's session, never with a key", code);
  if (grant.scope !== 'write') return hostAnswer('keys_need_write_access', 'named keys are managed with write access', code);
  const method = head.method;
  const byToken = grant.kind === 'token';
  if (sub === '/keys') {
    if (method === 'GET' || method === 'HEAD') return json(200, { keys: ctx.access.keys().map(keyRow) }, code);
    if (method === 'DELETE') {
      const person = new URLSearchParams(head.query).get('person');
      if (person === null || !PERSON.test(person)) return invalid('DELETE …/keys needs ?person=<subject>', 'person', code);
      if (!byToken) return hostAnswer('token_only_field', "revoking a person's keys takes the world's token", code);
      return json(200, { revoked: ctx.access.revokeKeysOf(person) }, code);
    }
    if (method !== 'POST') return hostAnswer('method_not_allowed', '…/keys answers GET, POST and DELETE', code, { allow: 'GET, HEAD, POST, DELETE' });
    return async (body) => {
      const input = parseBody(body);
      if (input === null || input === 'invalid') return invalid('the body must be a JSON object { name, scope? }', 'body', code);
      for (const field of Object.keys(input)) {
        if (!['name', 'scope', 'for', 'expiresAt', 'replace'].includes(field)) return invalid(`unknown field ${JSON.stringify(field.slice(0, 64))}`, field.slice(0, 64), code);
        if (!byToken && (field === 'for' || field === 'expiresAt' || field === 'replace')) return hostAnswer('token_only_field', `${field} is given with the world's token only`, code);
      }
      const name = input['name'];
      if (typeof name !== 'string' || !KEY_NAME.test(name)) return invalid('name must be 1 to 64 printable characters', 'name', code);
      const scope = input['scope'] ?? 'read';
      if (scope !== 'read' && scope !== 'write') return invalid('scope must be "read" or "write"', 'scope', code);
      const person = input['for'] ?? null;
      if (person !== null && (typeof person !== 'string' || !PERSON.test(person))) return invalid('for must be a person: 1 to 256 printable characters', 'for', code);
      const now = Date.now();
      let expiresAt: number | null = null;
      const given = input['expiresAt'];
      if (given !== undefined && given !== null) {
        expiresAt = typeof given === 'string' && /^\d{4}-\d\d-\d\dT/.test(given) ? Date.parse(given) : NaN;
        if (!Number.isFinite(expiresAt) || expiresAt <= now) return invalid('expiresAt must be an ISO instant in the future', 'expiresAt', code);
      }
      const replace = input['replace'] ?? false;
      if (typeof replace !== 'boolean') return invalid('replace must be true or false', 'replace', code);
      const made = ctx.access.makeKey({ name, scope, for: person, expiresAt, createdBy: makerOf(grant), replace }, now);
      if (made === 'name_taken') return hostAnswer('key_name_taken', `a key named ${JSON.stringify(name)} stands already; send replace: true (with the world's token) to replace it`, code);
      if (made === 'too_many') return hostAnswer('too_many_keys', 'this world holds 1000 keys: revoke some first', code);
      await ctx.access.durable();
      return json(201, { ...keyRow(made.record), key: made.key }, code);
    };
  }
  const id = decodeURIComponentSafe(sub.slice('/keys/'.length));
  if (method !== 'DELETE') return hostAnswer('method_not_allowed', '…/keys/<id> answers DELETE', code, { allow: 'DELETE' });
  if (id === null || !ctx.access.revokeKey(id)) return hostAnswer('unknown_key', `no key ${JSON.stringify((id ?? '').slice(0, 64))} in ${ctx.world}`, code);
  return { status: 204, headers: { 'x-kit-world-code': code }, body: '' };
}

function decodeURIComponentSafe(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}
