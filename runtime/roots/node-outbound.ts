/**
 * The outbound fetch on Node (runtime/roots/outbound.ts): every call a world makes outside
 * itself — a root's refresh, a link's forward — leaves through here.
 *
 * Destinations (runtime/roots/destinations.ts): the URL is checked before anything is opened,
 * and a name is resolved inside the socket's own `lookup` hook, where every address it resolves
 * to is judged and the connection is made to those addresses only. There is no second
 * resolution between the check and the connect for a name to answer differently the second
 * time (DNS rebinding). An IP literal never reaches `lookup` (Node connects to it directly);
 * the URL check has judged it.
 *
 * Built on `node:http`/`node:https` (not the global fetch) for that hook, for CONNECT and for the
 * raw response headers. One connection per call (no agent pool: a pooled socket would have
 * been judged for another call). Redirects are never followed. The request's hop-by-hop
 * headers, `host` and `content-length` are the exchange's own and set here.
 *
 * With a proxy (`http://user:pass@host:port`), an https destination is reached through an HTTP
 * CONNECT tunnel, with TLS to the destination inside it (Node's default CAs plus `proxy.ca`), and
 * an http one (loopback, in tests) as an absolute-form request to the proxy. The destination's
 * name is then resolved by the proxy, not here; the proxy's own address is the operator's
 * choice and is not judged. This is how tests reach `api.stripe.com`: a served world's proxy
 * routes the vendor's host to its twin, under the world's CA.
 *
 * Errors are KitErrors: `destination_refused`, `outbound_timeout`, `outbound_too_large`,
 * `outbound_failed`. Their messages name the method, the origin and a system error code, never
 * a path, a query or a header's value.
 */
import { promises as dns } from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { request as httpRequest } from 'node:http';
import type { ClientRequest, IncomingMessage, RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { Socket } from 'node:net';
import * as tls from 'node:tls';
import { KitError } from '../errors.js';
import { addressRefusal, prepareOutboundCall, type DestinationOptions } from './destinations.js';
import type { OutboundAnswer, OutboundFetch, OutboundLimits, OutboundRequest } from './outbound.js';

export interface NodeOutboundOptions {
  /** Whether loopback destinations (and `http:` to them) are allowed: local tests only. */
  loopback: boolean;
  /** Webhook deliveries (`purpose: 'webhook'`) may reach any http(s) host: a host of this machine alone, delivering to the app's own receivers. */
  webhooksAnywhere?: boolean;
  /** Every call through this HTTP proxy (`http://user:pass@host:port`; the user info becomes `Proxy-Authorization: Basic`). */
  proxy?: {
    url: string;
    /** A PEM certificate trusted for destinations reached through the proxy, besides Node's default CAs (a world's CA). */
    ca?: string;
  };
  /** Every address a name resolves to. Default `dns.lookup(name, { all: true })`; tests give names without DNS. */
  resolve?: (hostname: string) => Promise<readonly string[]>;
}

interface Proxy {
  host: string;
  port: number;
  authorization: string | null;
  /** The CAs trusted through the tunnel; undefined keeps Node's defaults. */
  ca: string[] | undefined;
}

/** Something an exchange holds open until it settles. */
interface Held {
  destroy(): void;
}

/** The outbound fetch of a Node host. */
export function createNodeOutbound(options: NodeOutboundOptions): OutboundFetch {
  const loopback = options.loopback;
  const proxy = options.proxy === undefined ? null : parseProxy(options.proxy);
  const resolve = options.resolve ?? defaultResolve;
  return async (request: OutboundRequest, limits: OutboundLimits): Promise<OutboundAnswer> => {
    const anywhere = request.purpose === 'webhook' && options.webhooksAnywhere === true;
    const { url, method, where, headers } = prepareOutboundCall(request, limits, { loopback, anywhere });
    headers['host'] = url.host;
    if (request.body !== undefined) headers['content-length'] = String(request.body.byteLength);
    const body = request.body === undefined ? undefined : Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength);
    const host = connectHost(url);
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const path = `${url.pathname}${url.search}`;

    return exchange(where, limits, body, async (hold) => {
      // A local world's webhooks go to the app's own receivers, not through the way out to vendors.
      if (proxy === null || anywhere) {
        const open = url.protocol === 'https:' ? httpsRequest : httpRequest;
        const direct: RequestOptions = { host, port, method, path, headers, agent: false, lookup: guardedLookup(resolve, { loopback, anywhere }) };
        return open(direct);
      }
      if (url.protocol === 'http:') {
        // Absolute form: the proxy opens the connection (RFC 9112 §3.2.2).
        const absolute = `${url.protocol}//${url.host}${path}`;
        return httpRequest({ host: proxy.host, port: proxy.port, method, path: absolute, headers: withProxyAuthorization(headers, proxy), agent: false });
      }
      const tunnel = await openTunnel(proxy, host, port, where, hold);
      return httpRequest({ method, path, headers, createConnection: () => tunnel });
    });
  };
}

/**
 * Runs one exchange: `open` makes the request (after a tunnel, maybe), the body is sent, the
 * answer read up to `maxBytes`, all within `timeoutMs`. Whatever was opened is destroyed when it
 * settles, either way.
 */
function exchange(where: string, limits: OutboundLimits, body: Buffer | undefined, open: (hold: (h: Held) => void) => Promise<ClientRequest>): Promise<OutboundAnswer> {
  return new Promise<OutboundAnswer>((resolvePromise, rejectPromise) => {
    let settled = false;
    const held = new Set<Held>();
    const hold = (h: Held): void => {
      if (settled) h.destroy();
      else held.add(h);
    };
    const settle = (error: KitError | null, answer?: OutboundAnswer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      for (const h of held) h.destroy();
      if (error !== null) rejectPromise(error);
      else resolvePromise(answer as OutboundAnswer);
    };
    const fail = (e: unknown): void => settle(asKitError(e, where));
    const tooLarge = (): void => settle(new KitError('outbound_too_large', `${where}: the answer's body is over ${limits.maxBytes} bytes`));
    const timer = setTimeout(() => settle(new KitError('outbound_timeout', `${where}: no complete answer within ${limits.timeoutMs} ms`)), limits.timeoutMs);

    const receive = (res: IncomingMessage): void => {
      hold(res);
      res.on('error', fail);
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > limits.maxBytes) return tooLarge();
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > limits.maxBytes) return tooLarge();
        chunks.push(chunk);
      });
      res.on('end', () => {
        if (!res.complete) return fail(Object.assign(new Error('incomplete'), { code: 'ECONNRESET' }));
        // A copy of its own: Buffer.concat may hand out a slice of Node's shared pool.
        const bytes = new Uint8Array(size);
        let at = 0;
        for (const c of chunks) {
          bytes.set(c, at);
          at += c.length;
        }
        settle(null, { status: res.statusCode ?? 0, headers: answerHeaders(res.rawHeaders), body: bytes });
      });
      res.on('close', () => {
        if (!res.complete) fail(Object.assign(new Error('closed'), { code: 'ECONNRESET' }));
      });
    };

    open(hold).then((req) => {
      if (settled) return req.destroy();
      hold(req);
      req.on('error', fail);
      req.on('response', receive);
      req.end(body);
    }, fail);
  });
}

/** The socket's `lookup`: resolves a name once, refuses it if any address is one it must not reach. */
function guardedLookup(resolve: (hostname: string) => Promise<readonly string[]>, destinations: DestinationOptions): NonNullable<RequestOptions['lookup']> {
  return (hostname: string, options: LookupOptions, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void): void => {
    const judged = resolve(hostname).then((addresses) => {
      if (addresses.length === 0) throw Object.assign(new Error('no address'), { code: 'ENOTFOUND' });
      for (const address of addresses) {
        const why = addressRefusal(address, destinations);
        if (why !== null) throw new KitError('destination_refused', `the destination host ${hostname} resolves to an address it must not reach: ${why}`);
      }
      const wanted = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
      const usable = addresses.map((address) => ({ address, family: isIP(address) })).filter((a) => a.family !== 0 && (wanted === 0 || a.family === wanted));
      if (usable.length === 0) throw Object.assign(new Error('no address'), { code: 'ENOTFOUND' });
      return usable;
    });
    // The callback is called once, outside the judging (a throw in it is not a second answer).
    judged.then(
      (usable) => (options.all === true ? callback(null, usable) : callback(null, (usable[0] as LookupAddress).address, (usable[0] as LookupAddress).family)),
      (e: unknown) => callback(e as NodeJS.ErrnoException, ''),
    );
  };
}

async function defaultResolve(hostname: string): Promise<readonly string[]> {
  const found = await dns.lookup(hostname, { all: true });
  return found.map((a) => a.address);
}

/** CONNECT to the proxy, then TLS to the destination inside the tunnel; resolves once the handshake is done. */
function openTunnel(proxy: Proxy, host: string, port: number, where: string, hold: (h: Held) => void): Promise<tls.TLSSocket> {
  const authority = `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
  return new Promise((resolveTunnel, rejectTunnel) => {
    const connect = httpRequest({ host: proxy.host, port: proxy.port, method: 'CONNECT', path: authority, headers: withProxyAuthorization({ host: authority }, proxy), agent: false });
    hold(connect);
    connect.on('error', rejectTunnel);
    connect.on('connect', (res: IncomingMessage, socket: Socket, head: Buffer) => {
      hold(socket);
      res.resume();
      if (res.statusCode !== 200) {
        socket.destroy();
        rejectTunnel(new KitError('outbound_failed', `${where}: the proxy refused the tunnel (${res.statusCode ?? 0})`));
        return;
      }
      if (head.length > 0) socket.unshift(head);
      const secure = tls.connect({ socket, ...(isIP(host) === 0 ? { servername: host } : {}), ...(proxy.ca === undefined ? {} : { ca: proxy.ca }), ALPNProtocols: ['http/1.1'] });
      hold(secure);
      secure.once('error', rejectTunnel);
      secure.once('secureConnect', () => {
        secure.off('error', rejectTunnel);
        resolveTunnel(secure);
      });
    });
    connect.end();
  });
}

function parseProxy(proxy: NonNullable<NodeOutboundOptions['proxy']>): Proxy {
  let url: URL;
  try {
    url = new URL(proxy.url);
  } catch {
    // Never the text: it holds the proxy's password.
    throw new TypeError('the outbound proxy must be an http://[user:password@]host:port URL');
  }
  if (url.protocol !== 'http:' || url.hostname === '') throw new TypeError('the outbound proxy must be an http://[user:password@]host:port URL');
  const credentials = url.username !== '' || url.password !== '' ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : null;
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: Number(url.port || 80),
    authorization: credentials === null ? null : `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`,
    ca: proxy.ca === undefined ? undefined : [...defaultCertificates(), proxy.ca],
  };
}

/** Node's default CAs (with NODE_EXTRA_CA_CERTS where Node can list them): giving `ca` replaces them. */
function defaultCertificates(): readonly string[] {
  const list = (tls as { getCACertificates?: (type: 'default') => string[] }).getCACertificates;
  return typeof list === 'function' ? list('default') : tls.rootCertificates;
}

function withProxyAuthorization(headers: Record<string, string>, proxy: Proxy): Record<string, string> {
  return proxy.authorization === null ? headers : { ...headers, 'proxy-authorization': proxy.authorization };
}

/** The host to connect to: no IPv6 brackets, no trailing dot (TLS names have none). */
function connectHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
}

/** Lower-case names; repeated headers joined with `, `, set-cookie with `\n`. */
function answerHeaders(raw: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    const value = raw[i + 1] as string;
    const before = headers[name];
    headers[name] = before === undefined ? value : `${before}${name === 'set-cookie' ? '\n' : ', '}${value}`;
  }
  return headers;
}

/** What a system error code means, for the message (the code itself follows it). */
function reason(code: string | null): string {
  if (code === null) return 'the exchange failed';
  if (code === 'ECONNREFUSED') return 'the connection was refused';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'the connection was cut';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'ENODATA') return 'the name does not resolve';
  if (code === 'ETIMEDOUT' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'the host cannot be reached';
  if (code === 'ERR_INVALID_CHAR' || code === 'ERR_INVALID_HTTP_TOKEN') return 'a request header holds a character HTTP does not allow';
  if (code === 'ERR_INVALID_ARG_VALUE' || code === 'ERR_UNESCAPED_CHARACTERS') return 'the request is not one HTTP can carry';
  if (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || /CERT|SELF_SIGNED|UNABLE_TO_/.test(code)) return 'the TLS handshake failed';
  if (code.startsWith('HPE_')) return 'the answer is not valid HTTP';
  return 'the exchange failed';
}

/** A KitError as is; anything else `outbound_failed` with only its system code (Node's own messages may quote a header). */
function asKitError(e: unknown, where: string): KitError {
  if (e instanceof KitError) return e;
  const raw = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  const code = typeof raw === 'string' && /^[A-Z0-9_]{1,64}$/.test(raw) ? raw : null;
  return new KitError('outbound_failed', `${where}: ${reason(code)}${code === null ? '' : ` (${code})`}`);
}
