/**
 * The Node side of attach: reads the world's manifest and hooks the three ways a Node app
 * sends HTTP, so unmodified SDKs reach their twins:
 *
 * - `fetch` and the `undici` package: both send through the undici global dispatcher
 *   (`Symbol.for('undici.globalDispatcher.1')`, shared by Node's bundled undici and every
 *   copy of the package). It is replaced by a wrapper around Node's own Agent that rewrites
 *   a twinned request's origin and path before handing it on.
 * - `http.request`/`http.get`/`https.request`/`https.get` (agents included): replaced by
 *   functions that rewrite a twinned request's options, then
 *   `module.syncBuiltinESMExports()` so ESM imports of `node:http` see them too.
 *
 * A twinned request goes to the world's URL for that twin over the world's own scheme
 * (the world serves plain HTTP on loopback, so an `https:` SDK call becomes `http:`), with
 * the world's token in `x-twins-key`; its `Authorization` stays the app's. Requests to
 * other hosts are handed on untouched. Clients that open their own sockets or build their
 * own dispatcher (`new undici.Client(url)`) are not seen: use the proxy for those.
 */
import http from 'node:http';
import https from 'node:https';
import { syncBuiltinESMExports } from 'node:module';
import type { IncomingMessage, ClientRequest, RequestOptions } from 'node:http';
import { MANIFEST_PATH, ManifestError, manifestUrl, parseAttachManifest } from './manifest.js';
import type { AttachManifest } from './manifest.js';
import { createRouter, twinPath } from './route.js';
import type { AttachRouter, Decision } from './route.js';

/** Why attaching failed; the entry prints it and stops the app rather than let it reach the real vendor. */
export class AttachError extends Error {
  override readonly name = 'AttachError';
  constructor(
    readonly code:
      | 'attach_not_configured'
      | 'attach_unreachable'
      | 'attach_refused'
      | 'attach_redirected'
      | 'manifest_too_large'
      | 'invalid_manifest'
      | 'manifest_refused',
    message: string,
  ) {
    super(message);
  }
}

/**
 * The most of a manifest answer read. A manifest is a few KiB: the world's CA certificate
 * (about 1 KiB) and a line or two per twin, some 30 KiB for a hundred twins. 1 MiB is thirty
 * times that and still nothing to hold; past it the answer is not a manifest, and reading on
 * is how a world that streams gigabytes crashed kit.
 */
export const MAX_MANIFEST_BYTES = 1024 * 1024;
/** The most of an error answer read: enough for the line that says why. */
const MAX_ERROR_BYTES = 4 * 1024;

/**
 * Reads at most `limit` bytes of a body. A declared length over it is refused before a byte
 * is read; a body that runs past it is cancelled there (which drops the connection).
 */
async function readCapped(response: Response, limit: number): Promise<{ text: string; over: boolean }> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > limit) {
    await response.body?.cancel().catch(() => undefined);
    return { text: '', over: true };
  }
  if (response.body === null) return { text: '', over: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.byteLength > limit) {
      chunks.push(value.subarray(0, limit - size));
      await reader.cancel().catch(() => undefined);
      return { text: Buffer.concat(chunks).toString('utf8'), over: true };
    }
    size += value.byteLength;
    chunks.push(value);
  }
  return { text: Buffer.concat(chunks).toString('utf8'), over: false };
}

function causeOf(e: unknown): string {
  const c = (e as { cause?: { code?: string; message?: string } }).cause;
  return c?.code ?? c?.message ?? (e instanceof Error ? (e.name === 'TimeoutError' ? 'timed out' : e.message) : String(e));
}

/** A world-chosen text made safe for one line of a message. */
function oneLine(text: string, max: number): string {
  const flat = text.replace(/[\x00-\x1f\x7f]+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/**
 * Fetches and checks the manifest, with the token in `x-kit-token`. No redirect is followed
 * (fetch would carry `x-kit-token` to whatever host the redirect names: it drops only
 * `Authorization`); the answer is read up to `MAX_MANIFEST_BYTES`; and the manifest must
 * keep to what a world may ask (`parseAttachManifest` with the world's URL).
 */
export async function fetchManifest(worldUrl: string, token: string, fetchImpl: typeof fetch = fetch): Promise<AttachManifest> {
  let url: string;
  let world: string;
  try {
    const u = new URL(worldUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
    world = u.href;
    url = manifestUrl(u.href);
  } catch {
    throw new AttachError('attach_not_configured', `KIT_WORLD is not an http(s) URL: ${JSON.stringify(worldUrl.slice(0, 200))}`);
  }
  let response: Response;
  try {
    response = await fetchImpl(url, {
      headers: { 'x-kit-token': token, accept: 'application/json' },
      redirect: 'manual',
      signal: AbortSignal.timeout(15_000),
    });
  } catch (e) {
    throw new AttachError('attach_unreachable', `cannot reach the world at ${url} (${causeOf(e)})`);
  }
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel().catch(() => undefined);
    const location = response.headers.get('location');
    let target: string | null = null;
    try {
      target = location === null ? null : new URL(location, url).href;
    } catch {
      target = null;
    }
    if (target === null) {
      throw new AttachError('attach_redirected', `the world at ${worldUrl} answered ${response.status} (a redirect) with no usable Location; kit follows no redirect`);
    }
    const shown = oneLine(target, 300);
    const suggested = target.endsWith(MANIFEST_PATH) ? oneLine(target.slice(0, -MANIFEST_PATH.length), 300) : null;
    throw new AttachError(
      'attach_redirected',
      `the world at ${worldUrl} redirected to ${shown}; kit follows no redirect (the token would go with it): ` +
        (suggested !== null ? `if that is the world, attach to ${suggested} directly` : "attach to the world's own URL"),
    );
  }
  if (response.status === 401 || response.status === 403) {
    await response.body?.cancel().catch(() => undefined);
    throw new AttachError('attach_refused', `the world at ${worldUrl} refused the token (${response.status}); check KIT_WORLD_TOKEN`);
  }
  let body: { text: string; over: boolean };
  try {
    body = await readCapped(response, response.status === 200 ? MAX_MANIFEST_BYTES : MAX_ERROR_BYTES);
  } catch (e) {
    throw new AttachError('attach_unreachable', `the world at ${url} did not finish its answer (${causeOf(e)})`);
  }
  if (response.status !== 200) {
    const said = oneLine(body.text, 200);
    throw new AttachError('attach_unreachable', `the world at ${url} answered ${response.status}${said !== '' ? `: ${said}` : ''}`);
  }
  if (body.over) {
    throw new AttachError('manifest_too_large', `the manifest at ${url} is larger than 1 MiB; a manifest is a few KiB, so this answer is not one`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(body.text);
  } catch {
    throw new AttachError('invalid_manifest', `${url} did not answer JSON`);
  }
  try {
    return parseAttachManifest(raw, { worldUrl: world });
  } catch (e) {
    if (e instanceof ManifestError && e.code === 'manifest_refused') throw new AttachError('manifest_refused', `the manifest at ${url} is refused: ${e.message}`);
    throw new AttachError('invalid_manifest', `the manifest at ${url} is not usable: ${e instanceof Error ? e.message : String(e)}`);
  }
}

// ---------------------------------------------------------------------------------------
// Headers, in the forms Node and undici accept them.

type HeaderInput = Record<string, string | string[] | number | undefined> | readonly string[] | readonly (readonly [string, string])[] | Iterable<[string, string]> | null | undefined;

function hasHeader(headers: HeaderInput, name: string): boolean {
  if (headers === null || headers === undefined) return false;
  if (Array.isArray(headers)) {
    if (headers.length > 0 && Array.isArray(headers[0])) return (headers as readonly (readonly [string, string])[]).some(([k]) => k.toLowerCase() === name);
    for (let i = 0; i < headers.length; i += 2) if (String(headers[i]).toLowerCase() === name) return true;
    return false;
  }
  if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function') {
    for (const [k] of headers as Iterable<[string, string]>) if (k.toLowerCase() === name) return true;
    return false;
  }
  return Object.keys(headers).some((k) => k.toLowerCase() === name);
}

/** A copy with `drop` removed and `add` appended, in the input's own form. */
function editHeaders(headers: HeaderInput, drop: readonly string[], add: Record<string, string>): HeaderInput {
  const keep = (k: string): boolean => !drop.includes(k.toLowerCase());
  const extra = Object.entries(add);
  if (headers === null || headers === undefined) return Object.fromEntries(extra);
  if (Array.isArray(headers)) {
    if (headers.length > 0 && Array.isArray(headers[0])) {
      return [...(headers as readonly (readonly [string, string])[]).filter(([k]) => keep(k)), ...extra];
    }
    const flat: string[] = [];
    for (let i = 0; i + 1 < headers.length; i += 2) if (keep(String(headers[i]))) flat.push(String(headers[i]), String(headers[i + 1]));
    for (const [k, v] of extra) flat.push(k, v);
    return flat;
  }
  if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function') {
    return [...[...(headers as Iterable<[string, string]>)].filter(([k]) => keep(k)), ...extra];
  }
  const out: Record<string, string | string[] | number | undefined> = {};
  for (const [k, v] of Object.entries(headers)) if (keep(k)) out[k] = v;
  return Object.assign(out, add);
}

function tokenHeader(router: AttachRouter, headers: HeaderInput): Record<string, string> {
  // An app that already sends a credential of the world's keeps it.
  return hasHeader(headers, 'x-twins-key') || hasHeader(headers, 'x-kit-token') ? {} : { 'x-twins-key': router.token };
}

// ---------------------------------------------------------------------------------------
// fetch and undici: the global dispatcher.

const DISPATCHER = Symbol.for('undici.globalDispatcher.1');

interface DispatchOptions {
  origin?: string | URL;
  path: string;
  headers?: HeaderInput;
  servername?: string | null;
  [key: string]: unknown;
}
interface Dispatcher {
  dispatch(options: DispatchOptions, handler: unknown): boolean;
}

function originParts(origin: string | URL | undefined): { hostname: string; port: number } | null {
  if (origin === undefined) return null;
  try {
    const u = typeof origin === 'string' ? new URL(origin) : origin;
    return { hostname: u.hostname, port: u.port !== '' ? Number(u.port) : u.protocol === 'https:' ? 443 : 80 };
  } catch {
    return null;
  }
}

function hookDispatcher(router: AttachRouter): void {
  // Touching a web global makes Node load its bundled undici, which installs its Agent.
  void globalThis.Headers;
  const g = globalThis as unknown as Record<symbol, Dispatcher | undefined>;
  const base = g[DISPATCHER];
  if (base === undefined || typeof base.dispatch !== 'function') {
    throw new AttachError('attach_not_configured', 'this Node has no undici global dispatcher to attach fetch to');
  }
  const dispatch = (options: DispatchOptions, handler: unknown): boolean => {
    const parts = originParts(options.origin);
    const decision: Decision = parts === null ? { kind: 'pass' } : router.decide(parts.hostname, parts.port, options.path);
    if (decision.kind === 'pass') return base.dispatch(options, handler);
    if (decision.kind === 'world') {
      return base.dispatch({ ...options, headers: editHeaders(options.headers, [], tokenHeader(router, options.headers)) }, handler);
    }
    const t = decision.target;
    const rewritten: DispatchOptions = {
      ...options,
      origin: t.origin,
      path: twinPath(t, options.path),
      headers: editHeaders(options.headers, ['host'], tokenHeader(router, options.headers)),
    };
    delete rewritten.servername;
    return base.dispatch(rewritten, handler);
  };
  // Everything but `dispatch` is the base Agent's own (close, destroy, events), bound to it.
  const wrapper = new Proxy(base as object, {
    get(target, prop) {
      if (prop === 'dispatch') return dispatch;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  g[DISPATCHER] = wrapper as Dispatcher;
}

// ---------------------------------------------------------------------------------------
// http and https.

type RequestFn = typeof http.request;
type Callback = (res: IncomingMessage) => void;

/** Node's `(url?, options?, callback?)` as one options object, as `http.request` reads it. */
function normalize(args: unknown[]): { options: RequestOptions & { href?: string }; callback: Callback | undefined } {
  let i = 0;
  let options: RequestOptions = {};
  const first = args[0];
  if (typeof first === 'string' || first instanceof URL) {
    const u = typeof first === 'string' ? new URL(first) : first;
    options = {
      protocol: u.protocol,
      hostname: u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname,
      path: `${u.pathname}${u.search}`,
    };
    if (u.port !== '') options.port = Number(u.port);
    if (u.username !== '' || u.password !== '') options.auth = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
    i = 1;
  }
  const next = args[i];
  if (next !== null && typeof next === 'object') {
    options = { ...options, ...(next as RequestOptions) };
    i++;
  }
  const cb = args[i];
  return { options, callback: typeof cb === 'function' ? (cb as Callback) : undefined };
}

function hostAndPort(options: RequestOptions, defaultPort: number): { hostname: string; port: number } {
  let hostname = options.hostname ?? options.host ?? 'localhost';
  let port = options.port !== undefined && options.port !== null && options.port !== '' ? Number(options.port) : NaN;
  // `host: 'api.stripe.com:443'` is not Node's form, but some clients send it.
  const m = /^([^:[\]]+):(\d+)$/.exec(hostname);
  if (m !== null && options.hostname === undefined) {
    hostname = m[1] as string;
    if (Number.isNaN(port)) port = Number(m[2]);
  }
  const agentPort = (options.agent as { defaultPort?: number } | undefined)?.defaultPort;
  return { hostname, port: Number.isNaN(port) ? Number(options.defaultPort ?? agentPort ?? defaultPort) : port };
}

/** Options that name how to reach the vendor (its socket, its TLS), dropped for the twin. */
const VENDOR_ONLY = ['host', 'hostname', 'port', 'protocol', 'socketPath', 'createConnection', 'lookup', 'servername', 'defaultPort', 'family', 'localAddress', 'agent', '_defaultAgent'] as const;

function hookHttp(router: AttachRouter): void {
  const original = { httpRequest: http.request, httpsRequest: https.request };
  const make = (defaultProtocol: 'http:' | 'https:', isGet: boolean): RequestFn => {
    const fn = function (this: unknown, ...args: unknown[]): ClientRequest {
      const own = defaultProtocol === 'https:' ? original.httpsRequest : original.httpRequest;
      const { options, callback } = normalize(args);
      const protocol = options.protocol ?? defaultProtocol;
      const { hostname, port } = hostAndPort(options, protocol === 'https:' ? 443 : 80);
      const path = options.path ?? '/';
      // A Unix socket (Docker's, say) is never a vendor's host.
      const decision: Decision = options.socketPath !== undefined ? { kind: 'pass' } : router.decide(hostname, port, path);
      let req: ClientRequest;
      if (decision.kind === 'pass') {
        req = (own as (...a: unknown[]) => ClientRequest).apply(this, args);
      } else if (decision.kind === 'world') {
        const headers = editHeaders(options.headers as HeaderInput, [], tokenHeader(router, options.headers as HeaderInput));
        req = (own as (o: RequestOptions, cb?: Callback) => ClientRequest)({ ...options, headers: headers as RequestOptions['headers'] }, callback);
      } else {
        const t = decision.target;
        const rewritten: RequestOptions = { ...options };
        for (const k of VENDOR_ONLY) delete (rewritten as Record<string, unknown>)[k];
        rewritten.protocol = t.protocol;
        rewritten.hostname = t.hostname;
        rewritten.port = t.port;
        rewritten.path = twinPath(t, path);
        // Named outright: Node adds no Host of its own to a raw header array.
        const host = `${t.hostname.includes(':') ? `[${t.hostname}]` : t.hostname}:${t.port}`;
        rewritten.headers = editHeaders(options.headers as HeaderInput, ['host'], { ...tokenHeader(router, options.headers as HeaderInput), host }) as RequestOptions['headers'];
        // The app's agent speaks the vendor's scheme; `agent: false` (no pooling) is kept.
        if (options.agent === false) rewritten.agent = false;
        const send = t.protocol === 'https:' ? original.httpsRequest : original.httpRequest;
        req = (send as (o: RequestOptions, cb?: Callback) => ClientRequest)(rewritten, callback);
      }
      if (isGet) req.end();
      return req;
    };
    return fn as unknown as RequestFn;
  };
  http.request = make('http:', false);
  http.get = make('http:', true) as typeof http.get;
  https.request = make('https:', false);
  https.get = make('https:', true) as typeof https.get;
  // ESM `import { request } from 'node:https'` and namespace imports read the builtin's own exports.
  syncBuiltinESMExports();
}

let installed: AttachRouter | null = null;

/** Hooks fetch, undici and http/https for this process. Once only; a second call throws. */
export function installAttach(manifest: AttachManifest, worldUrl: string, token: string): AttachRouter {
  if (installed !== null) throw new TypeError('attach is already installed in this process');
  const router = createRouter(manifest, worldUrl, token);
  hookDispatcher(router);
  hookHttp(router);
  installed = router;
  return router;
}

/**
 * The entry's work: with `KIT_WORLD` and `KIT_WORLD_TOKEN` set, fetch the manifest, put its
 * `env` into `process.env` (without overriding what the app was given) and install the hooks.
 * Returns null when `KIT_WORLD` is not set.
 */
export async function attachFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<{ manifest: AttachManifest; router: AttachRouter } | null> {
  const world = env['KIT_WORLD'];
  if (world === undefined || world === '') return null;
  const token = env['KIT_WORLD_TOKEN'] ?? env['KIT_TWINS_KEY'];
  if (token === undefined || token === '') {
    throw new AttachError('attach_not_configured', 'KIT_WORLD is set but KIT_WORLD_TOKEN is not; set it to the world token');
  }
  const manifest = await fetchManifest(world, token);
  for (const [k, v] of Object.entries(manifest.env)) env[k] ??= v;
  return { manifest, router: installAttach(manifest, world, token) };
}
