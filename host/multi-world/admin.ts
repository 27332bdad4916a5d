/**
 * The host's admin surface, `/-/…` (spec: Multi-world host endpoints): the admin token opens
 * it (in `x-kit-token` or as a bearer) and nothing under a world; a world's token opens
 * nothing here. `/-/ping` and the console's files need no credential. `PUT …/import` places a
 * twin's export files (docs/export.md) into a world.
 */
import { KitError } from '../../runtime/errors.js';
import { HostError } from '../errors.js';
import { finish, fromFailure, hostAnswer } from '../core/answers.js';
import type { AdminSurface } from '../core/core.js';
import { findCredential, TokenVerifier } from '../core/credentials.js';
import type { BodyReader, HttpAnswer, HttpHead } from '../core/types.js';
import { parseBudget } from '../limits.js';
import { consoleAnswer } from './console.js';
import { checkName, objectBody, segment } from './input.js';
import { checkDeclaredLength, readTwinUpload, vendorSegment, type TwinAdmin } from './installed-twins.js';
import type { NewWorld, WorldAdmin } from './worlds.js';

/** Org names the admin's paths take: no org may be called these. */
export const ADMIN_NAMES: ReadonlySet<string> = new Set(['ping', 'worlds', 'vendors', 'twins', 'console']);

const json = (status: number, body: unknown, code: string): HttpAnswer => ({
  status,
  headers: { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-kit-world-code': code },
  body: status === 204 ? '' : JSON.stringify(body),
});

function allow(method: string, ...methods: string[]): void {
  const m = method === 'HEAD' ? 'GET' : method;
  if (!methods.includes(m)) throw new KitError('method_not_allowed', `this path answers ${methods.join(', ')}, not ${method}`, { allow: methods.join(', ') });
}

export function createAdminSurface(options: {
  adminToken: string;
  worlds: WorldAdmin;
  /** `/-/twins`: twins an admin installs (installed-twins.ts); absent, the path answers 404. */
  twins?: TwinAdmin;
  hostCode: string;
  consoleDir: string | null;
}): AdminSurface {
  // The admin token checked like a world's: digests compared in constant time.
  const verifier = new TokenVerifier({ token: options.adminToken, readToken: `${options.adminToken}\u0000no-read-token` });
  const { worlds, hostCode: code } = options;

  const route = async (method: string, segments: string[], body: Uint8Array | undefined, contentType: string | undefined): Promise<HttpAnswer> => {
    const [head, org, world, action, extra] = segments;
    if (head === 'twins' && options.twins !== undefined) return twinRoute(options.twins, method, segments, body, contentType);
    if (head === 'worlds') {
      if (org === undefined) {
        allow(method, 'GET', 'POST');
        if (method === 'POST') return json(201, await worlds.create(newWorld(body, await worlds.vendors())), code);
        return json(200, { worlds: await worlds.rows() }, code);
      }
      const name = `${segment(org, 'org')}/${segment(world, 'world')}`;
      if (action === undefined) {
        allow(method, 'GET', 'DELETE');
        if (method === 'DELETE') {
          await worlds.remove(name);
          return json(204, null, code);
        }
        return json(200, await worlds.row(name), code);
      }
      if (extra !== undefined) throw new KitError('not_found', `no admin endpoint /-/${segments.join('/')}`);
      if (action === 'owner') {
        allow(method, 'PUT');
        const owner = checkName(objectBody(body, ['owner'])['owner'], 'owner');
        return json(200, await worlds.setOwner(name, owner), code);
      }
      if (action === 'budget') {
        allow(method, 'PUT');
        const raw = objectBody(body, ['budget'])['budget'];
        if (raw !== null && typeof raw !== 'string') throw new HostError('invalid_budget', 'budget is "<requests>/<window>" (1000/10s), "off", or null for the host\'s default', { param: 'budget' });
        if (typeof raw === 'string') {
          try {
            parseBudget(raw);
          } catch (e) {
            throw new HostError('invalid_budget', (e as Error).message, { param: 'budget' });
          }
        }
        return json(200, await worlds.setBudget(name, raw), code);
      }
      if (action === 'rotate') {
        allow(method, 'POST');
        return json(200, await worlds.rotate(name), code);
      }
      if (action === 'import') {
        allow(method, 'PUT');
        return json(200, await worlds.importTwin(name, objectBody(body, ['twin', 'files'])), code);
      }
      throw new KitError('not_found', `no admin endpoint /-/${segments.join('/')}`);
    }
    if (head === 'vendors' && org === undefined) {
      allow(method, 'GET');
      return json(200, { vendors: await worlds.vendors() }, code);
    }
    throw new KitError('not_found', `no admin endpoint /-/${segments.join('/')}`);
  };

  /** `/-/twins` and `/-/twins/<vendor>` (docs/installed-twins.md). */
  const twinRoute = async (twins: TwinAdmin, method: string, segments: string[], body: Uint8Array | undefined, contentType: string | undefined): Promise<HttpAnswer> => {
    if (segments.length === 1) {
      allow(method, 'GET');
      return json(200, { twins: await twins.rows() }, code);
    }
    if (segments.length !== 2) throw new KitError('not_found', `no admin endpoint /-/${segments.join('/')}`);
    const vendor = vendorSegment(segments[1]);
    allow(method, 'GET', 'PUT', 'DELETE');
    if (method === 'PUT') {
      const { answer, replaced } = await twins.install(readTwinUpload(vendor, contentType, body));
      return json(replaced ? 200 : 201, answer, code);
    }
    if (method === 'DELETE') {
      await twins.remove(vendor);
      return json(204, null, code);
    }
    return json(200, await twins.detail(vendor), code);
  };

  return {
    names: ADMIN_NAMES,
    head(h: HttpHead, sub: string): HttpAnswer | BodyReader {
      const origin = h.headers['origin'];
      const segments = sub.split('/').filter((s) => s !== '');
      const method = h.method;
      if (segments[0] === 'ping') {
        if (segments.length > 1) return finish(hostAnswer('not_found', `no admin endpoint /-${sub}`, code), method, origin);
        const names = worlds.names();
        if (Array.isArray(names)) return finish(json(200, { ok: true, worlds: names }, code), method, origin);
        return async () => finish(await names.then((n) => json(200, { ok: true, worlds: n }, code), (e: unknown) => fromFailure(e, code)), method, origin);
      }
      if (segments[0] === 'console' && segments.length === 1 && !h.path.endsWith('/')) {
        // The page's files are named relative to it: it must be read at /-/console/.
        return finish({ status: 308, headers: { location: '/-/console/', 'x-kit-world-code': code }, body: '' }, method, origin);
      }
      if (segments[0] === 'console') return finish(consoleAnswer(options.consoleDir, segments.slice(1), method, code), method, origin);
      const credential = findCredential(h.headers, 'admin');
      if (credential === null || verifier.scopeOf(credential.value) !== 'write') {
        return finish(
          hostAnswer('unauthenticated', credential === null ? 'the admin endpoints need the host\'s admin token in x-kit-token (or as a bearer)' : `the token in ${credential.source} is not this host's admin token`, code, {
            'www-authenticate': 'Bearer realm="kit host"',
          }),
          method,
          origin,
        );
      }
      if (segments[0] === 'twins' && method === 'PUT') {
        // A bundle over the limit is refused on its declared length, before its body is read.
        try {
          checkDeclaredLength(h.headers['content-length']);
        } catch (e) {
          return finish(fromFailure(e, code), method, origin);
        }
      }
      const contentType = h.headers['content-type'];
      return async (body) => {
        let answer: HttpAnswer;
        try {
          answer = await route(method, segments, body, contentType);
        } catch (e) {
          answer = fromFailure(e, code);
        }
        return finish(answer, method, origin);
      };
    },
  };
}

/** Adopted tokens (spec: Limits): 24 to 256 URL-safe characters. */
const ADOPTED_TOKEN = /^[A-Za-z0-9_-]{24,256}$/;

/** The body of `POST /-/worlds`, checked: a bare world, a branch (`from`), adopted tokens. */
function newWorld(body: Uint8Array | undefined, known: readonly string[]): NewWorld {
  const b = objectBody(body, ['org', 'world', 'vendors', 'owner', 'from', 'token', 'readToken']);
  const input: NewWorld = {
    org: checkReserved(checkName(b['org'], 'org')),
    world: checkName(b['world'], 'world'),
    vendors: checkVendors(b['vendors'], known),
    owner: b['owner'] === undefined || b['owner'] === null ? null : checkName(b['owner'], 'owner'),
  };
  const from = b['from'];
  if (from !== undefined && from !== null) {
    const parts = typeof from === 'string' ? from.split('/') : [];
    if (parts.length !== 2) throw new HostError('invalid_name', 'from is <org>/<world> of a world on this host', { param: 'from' });
    input.from = `${checkName(parts[0], 'from')}/${checkName(parts[1], 'from')}`;
  }
  const token = b['token'];
  const readToken = b['readToken'];
  if (token !== undefined || readToken !== undefined) {
    for (const [param, value] of [['token', token], ['readToken', readToken]] as const) {
      if (typeof value !== 'string' || !ADOPTED_TOKEN.test(value)) {
        throw new HostError('invalid_token', `${param} is 24 to 256 URL-safe characters (A-Z a-z 0-9 - _); send token and readToken together`, { param });
      }
    }
    if (token === readToken) throw new HostError('invalid_token', 'token and readToken must differ: the read token would open writes', { param: 'readToken' });
    input.tokens = { token: token as string, readToken: readToken as string };
  }
  return input;
}

function checkReserved(org: string): string {
  if (ADMIN_NAMES.has(org)) throw new HostError('reserved_name', `${org} is one of the host's own paths (/-/${org}); pick another org`, { param: 'org' });
  return org;
}

function checkVendors(value: unknown, known: readonly string[]): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.some((v) => typeof v !== 'string')) {
    throw new KitError('bad_request', `vendors is a non-empty array of vendor ids: ${known.join(', ')}`, { param: 'vendors' });
  }
  const unknown = (value as string[]).filter((v) => !known.includes(v));
  if (unknown.length > 0) throw new HostError('unknown_vendor', `no twin for ${unknown.join(', ')} on this host; it has ${known.join(', ')}`, { param: 'vendors' });
  return [...new Set(value as string[])].sort();
}
