/**
 * The host core: one request pipeline for every host (the single-world server, the
 * multi-world host, the edge variant). It takes a plain head, finds the world the path names,
 * authenticates against that world's credentials, applies scopes and the world's request
 * budget, and hands the world a plain `WorldRequest`; paths of the host's own (`/-/worlds`,
 * `/-/ping`, …) go to its admin surface. No socket, uWS, `node:http` or workerd type in here:
 * each host is a thin shell that feeds it heads and bodies (host/node/http/ on Node).
 */
import type { Scope, TwinBundle, WorldRequest, WorldResponse } from '../../runtime/runner/types.js';
import { buildAttachManifest } from '../attach/manifest.js';
import type { AttachCa } from '../../sdk/attach/manifest.js';
import { retryAfterSeconds, type RequestBudget } from '../limits.js';
import { finish, fromFailure, fromWorld, hostAnswer, withOrigin } from './answers.js';
import { isPreflight, preflightAnswer } from './cors.js';
import { findCredential } from './credentials.js';
import { forwardHeaders, twinUrlOf, URL_AUTHORITY } from './forward.js';
import { locate, splitUrl } from './paths.js';
import { opensKeyless, readTokenOpens } from './scopes.js';
import type { BodyReader, HttpAnswer, HttpHandler, HttpHead } from './types.js';
import { SESSION_COOKIE, sessionIdsOf, withoutSessionCookie } from './access/cookies.js';
import { keysEndpoint, openSession, sessionEndpoint, type AccessContext } from './access/endpoints.js';
import type { PassVerifier } from './access/passes.js';
import { worldAtHost, type WorldOriginRule } from './access/origins.js';
import type { Grant, WorldAccess } from './access/world-access.js';
import { mirrorPage, mirrorShell, navigationMirror, originOfWorld, servesItsOwnPage, withMirrors, worldOriginPage, type BrowserWorld } from './browser.js';
import { NO_PAGES, type PageFiles } from './pages.js';

/** The attach manifest's path below `{world_url}` (spec: World attach and vendor wire). */
const MANIFEST_SUB = '/.well-known/kit-world';
/** What a keyless endpoint (webhook ingest) is let through with: nothing of the world's, read scope at most. */
const KEYLESS: Grant = Object.freeze({ kind: 'token', scope: 'read' });

export interface TwinScopes {
  vendor: string;
  /** `['read']` when the twin enforces the read scope itself (Authentication 11). */
  requestScopes: readonly 'read'[];
  /** From the twin's manifest, for the attach manifest: `http` (default) or a TCP protocol (`smtp`). */
  protocol?: string;
  /** From the twin's manifest: the vendor hosts it answers for (`api.stripe.com`). */
  hosts?: readonly string[];
  /** From the twin's manifest: the variables its client reads for its endpoint. */
  endpointEnv?: readonly string[];
}

/** What the core needs of a twin, from its bundle's manifest. */
export function twinScopesOf(bundle: TwinBundle): TwinScopes {
  const m = bundle.manifest;
  return {
    vendor: bundle.vendor,
    requestScopes: m.requestScopes ?? [],
    protocol: m.protocol,
    hosts: m.models.hosts,
    ...(m.models.endpointEnv !== undefined ? { endpointEnv: m.models.endpointEnv } : {}),
  };
}

/** A world as the core sees it: found synchronously on the head, run once the body is in. */
export interface MountedWorld {
  /** The code version answered in `x-kit-world-code`. */
  readonly code: string;
  /** What a presented token (or named key) opens in this world, or null. */
  scopeOf(token: string): Scope | null;
  /**
   * The world's sessions and named keys (host/core/access/). Absent: the world opens none, and
   * only its two tokens are credentials (the core's own unit tests).
   */
  readonly access?: WorldAccess;
  readonly twins: readonly TwinScopes[];
  /** The world's request budget; null: none. */
  readonly budget: RequestBudget | null;
  /** Runs one request in the world (opening it first, on a host that closes idle worlds). */
  handle(request: WorldRequest): Promise<WorldResponse>;
  /**
   * The host's own endpoints below `{world_api}` (`/branches`, on a host that makes branches).
   * Absent, or answering undefined: the path goes to the world.
   */
  hostEndpoint?(request: WorldRequest): Promise<WorldResponse> | undefined;
}

/** The worlds a host serves, by the names in their URLs. */
export interface WorldDirectory {
  /** The world at `<org>/<world>`, or null; synchronous, as the head is judged before the body. */
  find(org: string, world: string): MountedWorld | null;
  /** Said in a 404 for a path that names no world (`this server serves /local/demo/`). */
  readonly notFoundHint: string;
}

/** The host's own paths under `/-/` (`worlds`, `ping`, …), with their own credential. */
export interface AdminSurface {
  /** First segments after `/-/` that are the admin's (reserved as org names). */
  readonly names: ReadonlySet<string>;
  /** `sub` is the path after `/-` (`/worlds/acme/shop/rotate`). */
  head(head: HttpHead, sub: string): HttpAnswer | BodyReader;
}

/** Where the host is reached from outside, known once it listens. */
export interface PublishedAddress {
  /** `{base_url}`. */
  baseUrl: string;
  proxyUrl: string | null;
  ca: AttachCa | null;
  /**
   * The server listens on every address (`0.0.0.0`, `::`): `baseUrl` names loopback, which is
   * wrong for a client on another machine, so the manifest names the host that client used
   * (its `Host`), with the published ports.
   */
  everyAddress?: boolean;
  /** How the host gives each world an origin of its own (access/origins.ts); absent: none. */
  worldOrigins?: WorldOriginRule | null;
}

/** A request as a test writes it: `url` is a path (`/local/w/hello/x?a=1`) or a full URL. */
export interface PlainRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: Uint8Array | string;
}

export interface HostCoreOptions {
  worlds: WorldDirectory;
  admin?: AdminSurface;
  /** The code stamped on answers that concern no world (a 404, the admin's). */
  hostCode: string;
  /** Default 4 MB. */
  maxBodyBytes: number;
  /** Said in the 404 of `…/branches` where the host makes none. */
  noBranches?: string;
  /** The world page and the mirrors (host/core/pages.ts); default none. */
  pages?: PageFiles;
  /** Checks passes (`POST …/session` with `x-kit-pass`); null: this host trusts no issuer. */
  passes?: PassVerifier | null;
}

export interface HostCore {
  readonly handler: HttpHandler;
  /** The whole path without sockets (tests, benchmarks). */
  dispatch(request: PlainRequest): Promise<HttpAnswer>;
  /** From now on every request is answered 503 `shutting_down`. */
  stop(): void;
  /** Sets the addresses the attach manifest names; until then it answers 503. */
  publish(address: PublishedAddress): void;
  readonly published: PublishedAddress | null;
}

function parsedUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

export function createHostCore(options: HostCoreOptions): HostCore {
  const { worlds, admin, hostCode } = options;
  const adminNames: ReadonlySet<string> = admin?.names ?? new Set();
  const idPrefix = `req_${Array.from(crypto.getRandomValues(new Uint8Array(6)), (b) => b.toString(16).padStart(2, '0')).join('')}`;
  let counter = 0;
  let stopped = false;
  let published: PublishedAddress | null = null;

  const unauthenticated = (surface: 'api' | 'vendor', realm: string, code: string, message: string): HttpAnswer =>
    hostAnswer('unauthenticated', message, code, {
      // Basic is offered on the vendor wire so git-style clients know to send the token as a password.
      'www-authenticate': surface === 'vendor' ? `Bearer realm="${realm}", Basic realm="${realm}"` : `Bearer realm="${realm}"`,
    });

  const manifestAnswer = (mounted: MountedWorld, org: string, name: string, method: string, presented: string, hostHeader: string | undefined): HttpAnswer => {
    if (method !== 'GET' && method !== 'HEAD') {
      return hostAnswer('method_not_allowed', 'the attach manifest answers GET', mounted.code, { allow: 'GET, HEAD' });
    }
    if (published === null) return hostAnswer('shutting_down', 'the server is not listening yet', mounted.code);
    let base = published.baseUrl.replace(/\/+$/, '');
    let proxyUrl = published.proxyUrl;
    const asked = published.everyAddress === true && hostHeader !== undefined && URL_AUTHORITY.test(hostHeader) ? parsedUrl(`http://${hostHeader}`) : null;
    if (asked !== null) {
      base = `${base.slice(0, base.indexOf('//') + 2)}${asked.host}`;
      if (proxyUrl !== null) {
        const proxy = new URL(proxyUrl);
        proxy.hostname = asked.hostname;
        proxyUrl = proxy.href.replace(/\/$/, '');
      }
    }
    const manifest = buildAttachManifest({
      name,
      worldUrl: `${base}/${org}/${name}`,
      worldApi: `${base}/-/${org}/${name}`,
      // The credential presented, never another: the read token's holder (or, later, a named
      // key's) never learns the world's token from its manifest.
      token: presented,
      twins: mounted.twins,
      ca: published.ca,
      proxyUrl,
    });
    return { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-kit-world-code': mounted.code }, body: JSON.stringify(manifest) };
  };

  const pages = options.pages ?? NO_PAGES;
  const passes = options.passes ?? null;
  const rule = (): WorldOriginRule | null => published?.worldOrigins ?? null;

  /** The credential a request presents: a token or a key in a header, else the session of its cookie at the world's origin. */
  const grantOf = (mounted: MountedWorld, presented: string | null, cookie: string | undefined, atOrigin: boolean, now: number): Grant | null => {
    const access = mounted.access;
    if (presented !== null) {
      if (access !== undefined) return access.grantOf(presented, now);
      const scope = mounted.scopeOf(presented);
      return scope === null ? null : { kind: 'token', scope };
    }
    if (access === undefined || !atOrigin) return null;
    for (const id of sessionIdsOf(cookie)) {
      const session = access.session(id, now);
      if (session !== null) return { kind: 'session', scope: session.scope, session, sessionId: id };
    }
    return null;
  };

  /**
   * What the pages of `org/name` need of this request: the origin it came to (the world's own,
   * else the host's as the client addressed it; null when its `Host` is unusable).
   */
  const browserOf = (org: string, name: string, mounted: MountedWorld, at: boolean, hostHeader: string | undefined, origins: WorldOriginRule | null): BrowserWorld => {
    const base = published?.baseUrl ?? null;
    const scheme = at ? origins!.scheme : base?.startsWith('https:') === true ? 'https' : 'http';
    const selfOrigin = hostHeader !== undefined && URL_AUTHORITY.test(hostHeader) ? `${scheme}://${hostHeader.toLowerCase()}` : null;
    return { org, name, mounted, rule: origins, pages, selfOrigin, base };
  };

  const route = (h: HttpHead): HttpAnswer | BodyReader => {
    if (stopped) return hostAnswer('shutting_down', 'the server is stopping', hostCode);
    const headers = h.headers;
    const origins = rule();
    // A request to a world's own origin reaches that world only (access/origins.ts).
    const at = origins === null ? null : worldAtHost(origins, headers['host']);
    if (at !== null) {
      const mounted = worlds.find(at.org, at.world);
      if (mounted === null) return hostAnswer('unknown_world', `no world ${at.org}/${at.world} here`, hostCode);
      const page = worldOriginPage(browserOf(at.org, at.world, mounted, true, headers['host'], origins), h);
      if (page !== undefined) return page;
    }
    const where = locate(h.path, adminNames);
    if (where.kind === 'admin') {
      if (at !== null) return hostAnswer('not_found', "the host's admin endpoints are not served at a world's origin", hostCode);
      return admin!.head(h, where.sub);
    }
    if (where.kind === 'none') {
      return where.namesWorld ? hostAnswer('unknown_world', `no world at this path; ${worlds.notFoundHint}`, hostCode) : hostAnswer('not_found', `nothing here; ${worlds.notFoundHint}`, hostCode);
    }
    const { surface, org, world: name, sub } = where;
    if (at !== null && (at.org !== org || at.world !== name)) return hostAnswer('not_found', `this origin serves ${at.org}/${at.world} only`, hostCode);
    const mounted = worlds.find(org, name);
    if (mounted === null) return hostAnswer('unknown_world', `no world ${org}/${name} here; ${worlds.notFoundHint}`, hostCode);
    const code = mounted.code;
    if (surface === 'vendor' && (sub === '' || sub === '/')) return hostAnswer('not_found', `name a twin: /${org}/${name}/<vendor>/…`, code);

    // Before the credential: a browser sends none on a preflight (cors.ts).
    if (isPreflight(h.method, headers)) return preflightAnswer(headers, { 'x-kit-world-code': code });
    // Made only for a request a page may concern (a mirror's path, a browser's navigation, the map).
    let made: BrowserWorld | null = null;
    const browserWorld = (): BrowserWorld => (made ??= browserOf(org, name, mounted, at !== null, headers['host'], origins));
    let mirrorFor: string | null = null;
    if (surface === 'vendor') {
      // Keyless: a mirror's shell and files.
      if (sub.includes('/mirror')) {
        const page = mirrorPage(browserWorld(), h, sub);
        if (page !== undefined) return page;
      }
      if (headers['sec-fetch-dest'] !== undefined) mirrorFor = navigationMirror(browserWorld(), h, sub);
      // A navigation that may get the mirror asks the twin afresh: its 304 would make the browser
      // show the JSON it cached from the mirror's own read of the same address.
      if (mirrorFor !== null) {
        delete headers['if-none-match'];
        delete headers['if-modified-since'];
      }
    }
    const atOrigin = at !== null;
    const accessContext = (access: WorldAccess): AccessContext => ({
      head: h,
      world: `${org}/${name}`,
      access,
      worldOrigin: originOfWorld(origins, org, name),
      atOrigin,
      loopback: origins?.loopback === true,
      passes,
      code,
    });
    // A vendor's webhook carries no credential of the world's: its signature is one (the runner checks it).
    const keyless = surface === 'api' && opensKeyless(h.method, sub);
    const credential = keyless ? null : findCredential(headers, surface);
    const now = h.receivedAt;
    const grant = keyless ? KEYLESS : grantOf(mounted, credential?.value ?? null, headers['cookie'], atOrigin, now);
    if (surface === 'api' && sub === '/session' && h.method === 'POST' && mounted.access !== undefined) {
      // A pass, or nothing on loopback, are credentials here alone (access/endpoints.ts).
      return openSession(accessContext(mounted.access), grant?.kind === 'session' ? null : grant, credential !== null);
    }
    const realm = `kit world ${org}/${name}`;
    if (grant === null) {
      // A browser opening a twin's URL gets the mirror's shell, which opens its own session.
      if (mirrorFor !== null) return mirrorShell(browserWorld(), mirrorFor);
      if (credential !== null) return unauthenticated(surface, realm, code, `the token in ${credential.source} does not open this world`);
      return unauthenticated(
        surface,
        realm,
        code,
        surface === 'api'
          ? 'this endpoint needs the world token in x-kit-token'
          : 'the vendor API needs the world token: x-kit-token, x-twins-key, or the API key (Bearer, token, Basic password or user name)',
      );
    }
    const scope: Scope = grant.scope;
    const method = h.method;
    if (grant.kind === 'session' && method !== 'GET' && method !== 'HEAD' && headers['sec-fetch-site'] !== 'same-origin') {
      // A page of another origin (even of the same site) may make the browser send the cookie; never its writes.
      return hostAnswer('cross_site_request', `a request carried by a session that is not a read must come from the world's own page (Sec-Fetch-Site: same-origin)`, code);
    }

    if (surface === 'vendor' && sub === MANIFEST_SUB) {
      // The manifest hands its holder's credential to the app; a browser session has none to hand.
      if (credential === null) return hostAnswer('forbidden', 'the attach manifest is for a token or key holder, not a browser session', code);
      return manifestAnswer(mounted, org, name, method, credential.value, headers['host']);
    }
    let readOnly = false;
    if (surface === 'api') {
      if (scope === 'read' && !keyless && !readTokenOpens(method, sub)) {
        return hostAnswer('forbidden', `the read ${grant.kind} does not open ${method} ${sub}; use the world token`, code);
      }
      if (mounted.access !== undefined && (sub === '/session' || sub === '/keys' || sub.startsWith('/keys/'))) {
        const ctx = accessContext(mounted.access);
        return sub === '/session' ? sessionEndpoint(ctx, grant) : keysEndpoint(ctx, grant, sub);
      }
      if (sub.startsWith('/streams/')) {
        // Only a WebSocket upgrade reaches the stream (host/node/streams/); this is a plain request.
        return hostAnswer('upgrade_required', `${sub} is a WebSocket: open it with an Upgrade, then send the world token as the first message`, code);
      }
      if ((sub === '/branches' || sub.startsWith('/branches/')) && mounted.hostEndpoint === undefined) {
        return hostAnswer('not_found', options.noBranches ?? 'this host makes no branches', code);
      }
    } else if (scope === 'read' && method !== 'GET' && method !== 'HEAD') {
      const slash = sub.indexOf('/', 1);
      const vendor = slash < 0 ? sub.slice(1) : sub.slice(1, slash);
      if (!mounted.twins.some((t) => t.vendor === vendor && t.requestScopes.includes('read'))) {
        return hostAnswer('read_only', `the read ${grant.kind === 'token' ? 'token' : grant.kind} opens only GET and HEAD on ${vendor}`, code);
      }
      readOnly = true;
    }

    const budget = mounted.budget;
    if (budget !== null) {
      const wait = budget.take();
      if (wait > 0) {
        const seconds = retryAfterSeconds(wait);
        return hostAnswer('request_budget_exhausted', `the world's request budget is spent; retry in ${seconds} s`, code, { 'retry-after': String(seconds) });
      }
    }

    const twinUrl = surface === 'vendor' ? (h.twinOrigin ?? twinUrlOf(published?.baseUrl ?? null, headers['host'], `/${org}/${name}`, sub)) : null;
    forwardHeaders(headers, {
      surface,
      // A session stands for the world's own credential, as the token in the app's key slot does.
      credentialSource: credential?.source ?? 'authorization',
      readOnly,
      twinUrl,
      scopeOf: (t) => mounted.scopeOf(t),
    });
    // The session's cookie is the host's, never the twin's to see (nor its log's).
    const cookie = headers['cookie'];
    if (cookie !== undefined && cookie.includes(SESSION_COOKIE)) {
      const kept = withoutSessionCookie(cookie);
      if (kept === undefined) delete headers['cookie'];
      else headers['cookie'] = kept;
    }
    const request: WorldRequest = {
      surface,
      method,
      path: sub,
      query: h.query,
      headers,
      scope,
      credential: keyless ? 'none' : grant.kind,
      ...(grant.kind === 'session' ? { who: grant.session.who ?? 'a session opened with the token' } : {}),
      requestId: `${idPrefix}${(counter++).toString(36)}`,
      receivedAt: h.receivedAt,
    };
    return (body) => {
      if (body !== undefined) request.body = body;
      let pending: Promise<WorldResponse>;
      try {
        pending = (surface === 'api' ? mounted.hostEndpoint?.(request) : undefined) ?? mounted.handle(request);
      } catch (e) {
        return Promise.resolve(fromFailure(e, code));
      }
      return pending.then(
        (r) => {
          const answer = fromWorld(r, code);
          if (mirrorFor !== null && !servesItsOwnPage(answer)) return mirrorShell(browserWorld(), mirrorFor);
          // A browser keeps a twin's JSON and a navigation's page of one address apart.
          if (surface === 'vendor' && headers['sec-fetch-dest'] !== undefined) answer.headers['vary'] = answer.headers['vary'] === undefined ? 'Sec-Fetch-Dest' : `${answer.headers['vary']}, Sec-Fetch-Dest`;
          // A twin's answer at the world's origin (a stored file, a mail's attachment) runs nothing
          // there as a page of that origin, unless the twin says what it may run.
          if (atOrigin && surface === 'vendor') {
            answer.headers['content-security-policy'] ??= 'sandbox';
            answer.headers['x-content-type-options'] ??= 'nosniff';
          }
          if (surface === 'api' && sub === '/map') return withMirrors(answer, browserWorld());
          return answer;
        },
        (e) => fromFailure(e, code),
      );
    };
  };

  /** `route`, then CORS and HEAD's shape on whatever it answers. */
  const head = (h: HttpHead): HttpAnswer | BodyReader => {
    const answer = route(h);
    const origin = h.headers['origin'];
    const method = h.method;
    if (origin === undefined && method !== 'HEAD') return answer;
    return typeof answer === 'function' ? (body) => answer(body).then((a) => finish(a, method, origin)) : finish(answer, method, origin);
  };

  const handler: HttpHandler = {
    head,
    // The adapter shapes these for a HEAD itself (it knows the method; they come before the head is judged).
    tooLarge: (limit, headers) => withOrigin(hostAnswer('body_too_large', `the request body is over ${limit} bytes`, hostCode), headers?.['origin']),
    badRequest: (message, headers) => withOrigin(hostAnswer('bad_request', message, hostCode), headers?.['origin']),
    stopping: () => hostAnswer('shutting_down', 'the server is stopping', hostCode),
    failed: (e) => fromFailure(e, hostCode),
  };

  return {
    handler,
    stop() {
      stopped = true;
    },
    publish(address) {
      published = address;
    },
    get published() {
      return published;
    },
    async dispatch(request: PlainRequest): Promise<HttpAnswer> {
      const { path, query } = splitUrl(request.url);
      const headers = Object.create(null) as Record<string, string>;
      for (const [k, v] of Object.entries(request.headers ?? {})) headers[k.toLowerCase()] = v;
      const raw = request.body;
      // A copy with an ArrayBuffer of its own, as the socket layer hands over (node/http/uws.ts).
      const body = raw === undefined ? undefined : typeof raw === 'string' ? new TextEncoder().encode(raw) : new Uint8Array(raw);
      if (stopped) return handler.stopping();
      if (body !== undefined && body.byteLength > options.maxBodyBytes) return handler.tooLarge(options.maxBodyBytes, headers);
      const first = head({ method: request.method.toUpperCase(), path, query, headers, receivedAt: Date.now() });
      if (typeof first !== 'function') return first;
      try {
        return await first(body !== undefined && body.byteLength > 0 ? body : undefined);
      } catch (e) {
        return handler.failed(e);
      }
    },
  };
}
