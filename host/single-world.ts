/**
 * The single-world server (`kit world serve`): one world at `{base}/<org>/<world>/…`
 * (vendor wire) and `{base}/-/<org>/<world>/…` (world API). The host routes,
 * authenticates, applies scopes and the request budget, and hands the runner a plain
 * `WorldRequest`; everything else is the world's.
 *
 * The same path runs in-process through `dispatch` (tests) and behind the uWS adapter,
 * which is a thin shell over `SingleWorldCore.handler`.
 */
import { randomBytes } from 'node:crypto';
import { isKitError, statusOf } from '../runtime/errors.js';
import type { KitErrorCode } from '../runtime/errors.js';
import type { Scope, WorldHandle, WorldRequest, WorldResponse } from '../runtime/runner/types.js';
import { findCredential, TokenVerifier } from './core/credentials.js';
import { readTokenOpens } from './core/scopes.js';
import type { WorldTokens } from './node/tokens.js';
import { DEFAULT_MAX_BODY_BYTES, listenHttp } from './node/http/uws.js';
import { allowAnyOrigin, isPreflight, preflightAnswer } from './core/cors.js';
import type { BodyReader, HttpAnswer, HttpHandler, HttpHead } from './core/types.js';
import { RequestBudget, retryAfterSeconds } from './limits.js';
import type { BudgetOptions } from './limits.js';
import { buildAttachManifest } from './attach/manifest.js';
import type { AttachCa } from '../sdk/attach/manifest.js';
import { startConnectProxy } from './node/proxy/proxy.js';
import type { ConnectProxy } from './node/proxy/proxy.js';
import type { WorldCa } from './node/proxy/ca.js';
import { createStreamRoutes } from './node/streams/uws.js';
import type { StreamLimits } from './node/streams/bridge.js';

/** The attach manifest's path below `{world_url}` (spec: World attach and vendor wire). */
const MANIFEST_SUB = '/.well-known/kit-world';

/** Org and world names: lower case, digits and dashes, up to 63 characters. */
export const NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

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

export interface SingleWorldOptions {
  world: WorldHandle;
  org: string;
  /** The world's name in URLs; default `world.name`. */
  worldName?: string;
  tokens: WorldTokens;
  twins: readonly TwinScopes[];
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /**
   * The world's request budget (host/limits.ts). Absent or `false`: none — a world served alone
   * answers its owner's load test at full speed; a host serving many worlds sets one per world.
   */
  budget?: BudgetOptions | false;
  /** Default 4 MB. */
  maxBodyBytes?: number;
  /** How long a stop waits for in-flight requests. Default 10 s. */
  drainTimeoutMs?: number;
  /**
   * The world's CA. With it the server also runs the CONNECT proxy (host/node/proxy/) and the
   * attach manifest names both; without it the manifest's `ca` and `proxy` are null.
   */
  ca?: WorldCa;
  /** The proxy's port: default the server's port + 1 (a free one when the server's is 0); 0 picks. */
  proxyPort?: number;
  /** Limits of stream connections (`{world_api}/streams/<id>`); defaults in host/node/streams/bridge.ts. */
  streamLimits?: Partial<StreamLimits>;
}

/** Where the world is reached from outside, known once the server listens. */
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
}

/** A request as a test writes it: `url` is a path (`/local/w/hello/x?a=1`) or a full URL. */
export interface PlainRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: Uint8Array | string;
}

export interface SingleWorldCore {
  readonly handler: HttpHandler;
  /** The whole auth/route/limits path without sockets. */
  dispatch(request: PlainRequest): Promise<HttpAnswer>;
  /** From now on every request is answered 503 `shutting_down`. */
  stop(): void;
  /** What a token opens, or null (the proxy authenticates with it). */
  scopeOf(token: string): Scope | null;
  /** The server's path of a twin path: `vendorPath('stripe', '/v1/x')` → `/<org>/<world>/stripe/v1/x`. */
  vendorPath(vendor: string, path: string): string;
  /** Sets the addresses the attach manifest names; until then it answers 503. */
  publish(address: PublishedAddress): void;
}

export interface SingleWorldServer {
  /** `{base_url}`, e.g. `http://127.0.0.1:4440`. */
  readonly url: string;
  /** `{world_url}`: `{base_url}/<org>/<world>`. */
  readonly worldUrl: string;
  /** `{world_api}`: `{base_url}/-/<org>/<world>`. */
  readonly worldApi: string;
  readonly port: number;
  /** The CONNECT proxy, when the server was given a CA. */
  readonly proxy: ConnectProxy | null;
  dispatch(request: PlainRequest): Promise<HttpAnswer>;
  /** Stops accepting, lets in-flight requests finish, then closes the world. Idempotent. */
  close(): Promise<void>;
}

/** Headers a client may not set: the host alone says what the credential was. */
const HOST_HEADERS = ['x-kit-token', 'x-twins-key', 'x-kit-auth', 'x-kit-read-only', 'x-kit-twin-url'] as const;

/** A `Host` header a URL can carry: a name or IPv4 address, or a bracketed IPv6 one, and a port. */
const URL_AUTHORITY = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

/** `new URL`, or null for what does not parse (a port over 65535). */
function parsedUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

function stripPrefix(path: string, prefix: string): string | null {
  if (!path.startsWith(prefix)) return null;
  if (path.length === prefix.length) return '';
  return path.charCodeAt(prefix.length) === 47 /* / */ ? path.slice(prefix.length) : null;
}

function splitUrl(url: string): { path: string; query: string } {
  let rest = url;
  const scheme = rest.indexOf('://');
  if (scheme > 0 && scheme < 10) {
    const slash = rest.indexOf('/', scheme + 3);
    rest = slash < 0 ? '/' : rest.slice(slash);
  }
  const hash = rest.indexOf('#');
  if (hash >= 0) rest = rest.slice(0, hash);
  const q = rest.indexOf('?');
  return q < 0 ? { path: rest, query: '' } : { path: rest.slice(0, q), query: rest.slice(q + 1) };
}

/** Builds the routing, authentication and limits of one world, with no sockets. */
export function createSingleWorldCore(options: SingleWorldOptions): SingleWorldCore {
  const world = options.world;
  const org = options.org;
  const name = options.worldName ?? world.name;
  if (!NAME_PATTERN.test(org)) throw new TypeError(`org must match ${NAME_PATTERN}, got ${JSON.stringify(org)}`);
  if (!NAME_PATTERN.test(name)) throw new TypeError(`world name must match ${NAME_PATTERN}, got ${JSON.stringify(name)}`);
  const verifier = new TokenVerifier(options.tokens);
  const readScopeTwins = new Set(options.twins.filter((t) => t.requestScopes.includes('read')).map((t) => t.vendor));
  const budget = options.budget === undefined || options.budget === false ? null : new RequestBudget(options.budget);
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const vendorPrefix = `/${org}/${name}`;
  const apiPrefix = `/-/${org}/${name}`;
  const realm = `kit world ${org}/${name}`;
  const idPrefix = `req_${randomBytes(6).toString('hex')}`;
  let counter = 0;
  let stopped = false;
  let published: PublishedAddress | null = null;

  const errorAnswer = (code: KitErrorCode, message: string, extra?: Record<string, string>): HttpAnswer => {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-kit-world-code': world.code };
    if (extra !== undefined) Object.assign(headers, extra);
    return { status: statusOf(code), headers, body: JSON.stringify({ error: { code, message } }) };
  };

  const fromWorld = (r: WorldResponse): HttpAnswer => {
    // Object.assign, not a spread: V8 spreads these header objects about 20× slower (measured).
    const headers: Record<string, string> = Object.assign({}, r.headers);
    headers['x-kit-world-code'] = world.code;
    const answer: HttpAnswer = { status: r.status, headers, body: r.body };
    if (r.fault !== undefined) answer.fault = r.fault;
    if (r.delayMs !== undefined) answer.delayMs = r.delayMs;
    return answer;
  };

  const fromFailure = (e: unknown): HttpAnswer => {
    if (isKitError(e)) {
      return {
        status: e.status,
        headers: { 'content-type': 'application/json', 'x-kit-world-code': world.code },
        body: JSON.stringify(e.toBody()),
      };
    }
    // The world's own bug: say so without leaking its internals to the client.
    console.error('kit: the world failed on a request:', e);
    return errorAnswer('internal', 'the world failed on this request');
  };

  /**
   * Whether the app's own `Authorization` (sent beside `x-twins-key`, as through the proxy or
   * the attach entry) is a token of this world, so the twin takes it as the app's key as it
   * does when it opens the world. Only a value that looks like a minted token (`tok_`) is
   * hashed: a vendor key (`sk_test_…`) costs a substring test.
   */
  const authorizationIsWorldToken = (authorization: string | undefined): boolean => {
    // Basic hides the value in base64: decoded only then.
    if (authorization === undefined || (!authorization.includes('tok_') && !/^\s*basic\s/i.test(authorization))) return false;
    const inIt = findCredential({ authorization }, 'vendor');
    return inIt !== null && inIt.value.startsWith('tok_') && verifier.scopeOf(inIt.value) !== null;
  };

  const unauthenticated = (surface: 'api' | 'vendor', message: string): HttpAnswer =>
    errorAnswer('unauthenticated', message, {
      // Basic is offered on the vendor wire so git-style clients know to send the token as a password.
      'www-authenticate': surface === 'vendor' ? `Bearer realm="${realm}", Basic realm="${realm}"` : `Bearer realm="${realm}"`,
    });

  const manifestAnswer = (method: string, presented: string, hostHeader: string | undefined): HttpAnswer => {
    if (method !== 'GET' && method !== 'HEAD') {
      return errorAnswer('method_not_allowed', 'the attach manifest answers GET', { allow: 'GET, HEAD' });
    }
    if (published === null) return errorAnswer('shutting_down', 'the server is not listening yet');
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
      worldUrl: `${base}${vendorPrefix}`,
      worldApi: `${base}${apiPrefix}`,
      // The credential presented, never another: the read token's holder (or, later, a named
      // key's) never learns the world's token from its manifest.
      token: presented,
      twins: options.twins,
      ca: published.ca,
      proxyUrl,
    });
    return {
      status: 200,
      headers: { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-kit-world-code': world.code },
      body: JSON.stringify(manifest),
    };
  };

  /**
   * Where the client addressed the twin a vendor path `/<vendor>/…` goes to: the scheme this
   * server is published with, the client's own `Host` (the name it used, as a vendor's links
   * would), the world's prefix and the vendor's segment as sent. Null when neither the request
   * nor the published address names a host (a twin then writes relative links).
   */
  const twinUrlOf = (host: string | undefined, sub: string): string | null => {
    const base = published?.baseUrl ?? null;
    const scheme = base !== null && base.startsWith('https:') ? 'https' : 'http';
    let authority: string;
    if (host !== undefined && URL_AUTHORITY.test(host)) authority = host;
    else if (base !== null) authority = base.slice(base.indexOf('//') + 2).replace(/\/.*$/, '');
    else return null;
    const slash = sub.indexOf('/', 1);
    return `${scheme}://${authority}${vendorPrefix}${slash < 0 ? sub : sub.slice(0, slash)}`;
  };

  const route = (h: HttpHead): HttpAnswer | BodyReader => {
    if (stopped) return errorAnswer('shutting_down', 'the server is stopping');
    // A doubled slash is nearly always a client joining a base URL that ends in `/`.
    const path = h.path.includes('//') ? h.path.replace(/\/{2,}/g, '/') : h.path;
    let surface: 'api' | 'vendor';
    let sub = stripPrefix(path, apiPrefix);
    if (sub !== null) {
      surface = 'api';
      if (sub.length > 1 && sub.endsWith('/')) sub = sub.slice(0, -1);
      if (sub === '') sub = '/';
    } else {
      sub = stripPrefix(path, vendorPrefix);
      if (sub === null) {
        const segments = path.split('/').filter((s) => s !== '');
        const named = segments[0] === '-' ? segments.length >= 3 : segments.length >= 2;
        return named
          ? errorAnswer('unknown_world', `no world at this path; this server serves ${vendorPrefix}/ and ${apiPrefix}/`)
          : errorAnswer('not_found', `nothing here; this server serves ${vendorPrefix}/<vendor>/… and ${apiPrefix}/…`);
      }
      surface = 'vendor';
      if (sub === '' || sub === '/') {
        return errorAnswer('not_found', `name a twin: ${vendorPrefix}/<vendor>/…`);
      }
    }

    const headers = h.headers;
    // Before the credential: a browser sends none on a preflight (host/core/cors.ts).
    if (isPreflight(h.method, headers)) return preflightAnswer(headers, { 'x-kit-world-code': world.code });
    const credential = findCredential(headers, surface);
    if (credential === null) {
      return unauthenticated(
        surface,
        surface === 'api'
          ? 'this endpoint needs the world token in x-kit-token'
          : 'the vendor API needs the world token: x-kit-token, x-twins-key, or the API key (Bearer, token, Basic password or user name)',
      );
    }
    const scope: Scope | null = verifier.scopeOf(credential.value);
    if (scope === null) return unauthenticated(surface, `the token in ${credential.source} does not open this world`);

    const method = h.method;
    if (surface === 'vendor' && sub === MANIFEST_SUB) return manifestAnswer(method, credential.value, headers['host']);
    let readOnly = false;
    if (surface === 'api') {
      if (scope === 'read' && !readTokenOpens(method, sub)) {
        return errorAnswer('forbidden', `the read token does not open ${method} ${sub}; use the world token`);
      }
      if (sub.startsWith('/streams/')) {
        // Only a WebSocket upgrade reaches the stream (host/node/streams/); this is a plain request.
        return errorAnswer('upgrade_required', `${sub} is a WebSocket: open it with an Upgrade, then send the world token as the first message`);
      }
      if (sub === '/branches' || sub.startsWith('/branches/')) {
        return errorAnswer('not_found', 'the single-world server makes no branches; serve the world on a host for branches');
      }
    } else if (scope === 'read' && method !== 'GET' && method !== 'HEAD') {
      const slash = sub.indexOf('/', 1);
      const vendor = slash < 0 ? sub.slice(1) : sub.slice(1, slash);
      if (!readScopeTwins.has(vendor)) {
        return errorAnswer('read_only', `the read token opens only GET and HEAD on ${vendor}`);
      }
      readOnly = true;
    }

    if (budget !== null) {
      const wait = budget.take();
      if (wait > 0) {
        const seconds = retryAfterSeconds(wait);
        return errorAnswer('request_budget_exhausted', `the world's request budget is spent; retry in ${seconds} s`, {
          'retry-after': String(seconds),
        });
      }
    }

    for (const name of HOST_HEADERS) delete headers[name];
    if (credential.source === 'authorization' || (surface === 'vendor' && authorizationIsWorldToken(headers['authorization']))) {
      headers['x-kit-auth'] = 'authorization';
    }
    if (readOnly) headers['x-kit-read-only'] = '1';
    if (surface === 'vendor') {
      const twinUrl = h.twinOrigin ?? twinUrlOf(headers['host'], sub);
      if (twinUrl !== null) headers['x-kit-twin-url'] = twinUrl;
    }

    const request: WorldRequest = {
      surface,
      method,
      path: sub,
      query: h.query,
      headers,
      scope,
      requestId: `${idPrefix}${(counter++).toString(36)}`,
      receivedAt: h.receivedAt,
    };
    return (body) => {
      if (body !== undefined) request.body = body;
      let pending: Promise<WorldResponse>;
      try {
        pending = world.handle(request);
      } catch (e) {
        return Promise.resolve(fromFailure(e));
      }
      return pending.then(fromWorld, fromFailure);
    };
  };

  /** `route`, and a page of another origin may read the answer (host/core/cors.ts). */
  const head = (h: HttpHead): HttpAnswer | BodyReader => {
    const answer = route(h);
    if (h.headers['origin'] === undefined) return answer;
    return typeof answer === 'function' ? (body) => answer(body).then(allowAnyOrigin) : allowAnyOrigin(answer);
  };

  const handler: HttpHandler = {
    head,
    tooLarge: (limit, headers) => {
      const answer = errorAnswer('body_too_large', `the request body is over ${limit} bytes`);
      return headers?.['origin'] === undefined ? answer : allowAnyOrigin(answer);
    },
    badRequest: (message, headers) => {
      const answer = errorAnswer('bad_request', message);
      return headers?.['origin'] === undefined ? answer : allowAnyOrigin(answer);
    },
    stopping: () => errorAnswer('shutting_down', 'the server is stopping'),
    failed: fromFailure,
  };

  return {
    handler,
    stop() {
      stopped = true;
    },
    scopeOf: (token) => verifier.scopeOf(token),
    vendorPath: (vendor, path) => `${vendorPrefix}/${vendor}${path}`,
    publish(address) {
      published = address;
    },
    async dispatch(request: PlainRequest): Promise<HttpAnswer> {
      const { path, query } = splitUrl(request.url);
      const headers = Object.create(null) as Record<string, string>;
      for (const [k, v] of Object.entries(request.headers ?? {})) headers[k.toLowerCase()] = v;
      const raw = request.body;
      // A copy with an ArrayBuffer of its own, as the socket layer hands over (see http/uws.ts).
      const body = raw === undefined ? undefined : typeof raw === 'string' ? new TextEncoder().encode(raw) : new Uint8Array(raw);
      if (stopped) return handler.stopping();
      if (body !== undefined && body.byteLength > maxBody) return handler.tooLarge(maxBody, headers);
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

function urlHost(host: string): string {
  // A wildcard address is not somewhere a client can go; print loopback instead.
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/** Serves one world over HTTP until `close()`. */
export async function startSingleWorldServer(options: SingleWorldOptions): Promise<SingleWorldServer> {
  const core = createSingleWorldCore(options);
  const host = options.host ?? '127.0.0.1';
  // WebSocket `{world_api}/streams/<id>`: TCP-protocol twins (host/node/streams/).
  const streams = createStreamRoutes({ apiPrefix: `/-/${options.org}/${options.worldName ?? options.world.name}`, world: options.world, scopeOf: core.scopeOf, ...(options.streamLimits ? { limits: options.streamLimits } : {}) });
  const http = await listenHttp({
    configure: streams.register,
    handler: core.handler,
    host,
    port: options.port ?? 0,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    drainTimeoutMs: options.drainTimeoutMs ?? 10_000,
  });
  const name = options.worldName ?? options.world.name;
  const url = `http://${urlHost(host)}:${http.port}`;
  let proxy: ConnectProxy | null = null;
  const ca = options.ca;
  if (ca !== undefined) {
    const twins = new Map<string, string>();
    for (const t of options.twins) {
      if ((t.protocol ?? 'http') !== 'http') continue;
      for (const h of t.hosts ?? []) if (!twins.has(h.toLowerCase())) twins.set(h.toLowerCase(), t.vendor);
    }
    try {
      proxy = await startConnectProxy({
        host,
        port: options.proxyPort ?? (http.port < 65535 && options.port !== undefined && options.port !== 0 ? http.port + 1 : 0),
        ca,
        twins,
        scopeOf: core.scopeOf,
        ownServer: { host, port: http.port },
        handler: core.handler,
        vendorPath: core.vendorPath,
        maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
        realm: `kit world ${options.org}/${name}`,
      });
    } catch (e) {
      await http.close();
      throw new Error(`the proxy cannot listen: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  core.publish({ baseUrl: url, proxyUrl: proxy?.url ?? null, ca: ca === undefined ? null : { pem: ca.certPem, sha256: ca.sha256 }, everyAddress: host === '0.0.0.0' || host === '::' || host === '' });
  let closing: Promise<void> | null = null;
  return {
    url,
    worldUrl: `${url}/${options.org}/${name}`,
    worldApi: `${url}/-/${options.org}/${name}`,
    port: http.port,
    proxy,
    dispatch: core.dispatch,
    close(): Promise<void> {
      if (closing === null) {
        closing = (async () => {
          await proxy?.close();
          await streams.close();
          await http.close();
          core.stop();
          await options.world.close();
        })();
      }
      return closing;
    },
  };
}

