/**
 * The world's HTTP CONNECT proxy, for apps in any language (`HTTPS_PROXY`). It
 * authenticates the world's token (`Proxy-Authorization: Basic`, any user, the token as
 * password), terminates TLS for twinned hosts with a leaf from the world's CA and hands the
 * decrypted requests to the server's own handler (the same head/body path a request on the
 * server's port takes, so routing, scopes and the budget are the server's), and tunnels
 * other hosts untouched as a plain TCP pipe: the world's token to public addresses, the read
 * token to the world's own server only (addresses.ts; the address is judged after the proxy
 * resolves the name itself, and the tunnel connects to that very address).
 *
 * Everything a client holds is bounded: the CONNECT head within `headTimeoutMs`, a tunnel's
 * upstream (name resolution included) within `connectTimeoutMs`, a tunnel closed after
 * `tunnelIdleMs` without a byte either way, `maxTunnelsPerCredential` tunnels and decrypted
 * connections per credential, `maxConnections` client connections in all.
 *
 * Built on Node's `http` (CONNECT is a Node strength and uWS has no CONNECT); the decrypted
 * side is an unlistened `http.Server` fed the TLS sockets, so HTTP/1.1 parsing, keep-alive
 * and chunked bodies are Node's.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { lookup as dnsLookup } from 'node:dns/promises';
import { connect as netConnect, isIP } from 'node:net';
import type { Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import { TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';
import type { HttpAnswer, HttpHandler } from '../../core/types.js';
import type { WorldCa } from './ca.js';
import { AllowList, formatAddress, pickTunnelAddress } from './addresses.js';
import type { TunnelAllowance, TunnelScope } from './addresses.js';

/** A name's addresses, as `dns.lookup(name, { all: true })` gives them. */
export type TunnelLookup = (hostname: string) => Promise<readonly { address: string; family: number }[]>;

export interface ConnectProxyOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 picks a free port. */
  port: number;
  ca: WorldCa;
  /** Twinned host (lower case, no port) → the vendor id whose twin answers it. */
  twins: ReadonlyMap<string, string>;
  /**
   * What a token opens: `write` (the world's token), `read` (the read token), null (nothing:
   * 407). Decrypted requests carry it to the server, which applies the scope's rules; plain
   * tunnels follow `pickTunnelAddress`.
   */
  scopeOf(token: string): TunnelScope | null;
  /**
   * The world's own server, as it listens: every credential may tunnel to it (an app attached
   * through the proxy may address the world URL). A wildcard host (`0.0.0.0`, `::`) stands for
   * every address of this machine (loopback and each interface's, as at start) on that port.
   */
  ownServer?: { host: string; port: number };
  /**
   * Addresses the world's token may tunnel to although their range is refused: a database on
   * the private network, the loopback upstreams of tests. Empty by default.
   */
  allowTunnels?: readonly TunnelAllowance[];
  /** Name resolution for tunnels. Default `dns.lookup(name, { all: true })`. */
  lookup?: TunnelLookup;
  /** The server's handler; a decrypted request reaches it as if sent to the server's port. */
  handler: HttpHandler;
  /** The server's path of a twin path: `(stripe, /v1/customers)` → `/local/shop/stripe/v1/customers`. */
  vendorPath(vendor: string, path: string): string;
  maxBodyBytes: number;
  /** For the 407's realm, e.g. `kit world local/shop`. */
  realm: string;
  /** How long a client may take to send its CONNECT head from the moment it connects. Default 10 s. */
  headTimeoutMs?: number;
  /** How long a tunnel's upstream may take to resolve and connect. Default 15 s. */
  connectTimeoutMs?: number;
  /** A tunnel without a byte either way for this long is closed. Default 5 minutes. */
  tunnelIdleMs?: number;
  /** Tunnels and decrypted connections one credential may hold at once. Default 128. */
  maxTunnelsPerCredential?: number;
  /** Client connections the proxy holds at once, in any state; more are answered 503 and closed. Default 256. */
  maxConnections?: number;
  /** How long a client may take to finish the TLS handshake of a twinned host. Default 30 s. */
  handshakeTimeoutMs?: number;
  /**
   * A decrypted connection's limits: a request's head within `headersMs` (20 s), the whole
   * request within `requestMs` (120 s), no byte for `idleMs` (30 s) closes it; checked every
   * `checkEveryMs` (5 s).
   */
  innerTimeouts?: Partial<{ headersMs: number; requestMs: number; idleMs: number; checkEveryMs: number }>;
}

export interface ConnectProxy {
  readonly port: number;
  /** `http://<host>:<port>`, without credentials. */
  readonly url: string;
  /** Client connections held now (each tunnel holds one more socket, its upstream). */
  readonly connections: number;
  /** Stops listening and cuts every tunnel and decrypted connection. Idempotent. */
  close(): Promise<void>;
}

interface Terminated {
  vendor: string;
  token: string;
  /** `https://<host>[:port]`, as the client addressed it: the twin's links start there. */
  origin: string;
}

function json(code: string, message: string): string {
  return JSON.stringify({ error: { code, message } });
}

/** How long a refused client may keep its side open after the answer before it is cut. */
const REFUSAL_LINGER_MS = 2_000;
/** Connections turned away at the cap that may wait for their 503 to be read; past this they are cut at once. */
const MAX_TURNED_AWAY = 64;

/**
 * A raw HTTP/1.1 answer on a CONNECT socket (no `ServerResponse` exists for CONNECT), then
 * the socket closed: what the client still sends is read and dropped (closing with unread
 * bytes would reset the connection and lose the answer), and a client that keeps its side
 * open is cut after `REFUSAL_LINGER_MS` (the server is half-open: it would wait for ever).
 */
function rawAnswer(socket: Duplex, status: number, reason: string, headers: Record<string, string>, body: string): void {
  const lines = [`HTTP/1.1 ${status} ${reason}`];
  const all: Record<string, string> = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), connection: 'close', ...headers };
  for (const [k, v] of Object.entries(all)) lines.push(`${k}: ${v}`);
  if (socket.destroyed) return;
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
  socket.resume();
  const linger = setTimeout(() => socket.destroy(), REFUSAL_LINGER_MS);
  linger.unref();
  socket.once('close', () => clearTimeout(linger));
}

/** The allowances standing for the world's own server (see `ConnectProxyOptions.ownServer`). */
async function ownServerAllowances(own: { host: string; port: number }, lookup: TunnelLookup): Promise<TunnelAllowance[]> {
  const port = own.port;
  const host = own.host.replace(/^\[(.*)\]$/, '$1');
  if (host === '' || host === '0.0.0.0' || host === '::') {
    const out: TunnelAllowance[] = [{ address: '127.0.0.0/8', port }, { address: '::1', port }];
    for (const list of Object.values(networkInterfaces())) for (const i of list ?? []) out.push({ address: i.address, port });
    return out;
  }
  if (isIP(host) !== 0) return [{ address: host, port }];
  return (await lookup(host)).map((r) => ({ address: r.address, port }));
}

/** The password of a `Basic` Proxy-Authorization, or null. */
function proxyToken(header: string | undefined): string | null {
  if (header === undefined) return null;
  const m = /^\s*basic\s+([A-Za-z0-9+/=._-]+)\s*$/i.exec(header);
  if (m === null) return null;
  const decoded = Buffer.from(m[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : decoded.slice(colon + 1);
}

/** `host:port` of a CONNECT, IPv6 in brackets. Null when malformed. */
export function parseAuthority(authority: string): { host: string; port: number } | null {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9._-]+)):(\d{1,5})$/.exec(authority);
  if (m === null) return null;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return null;
  // A fully qualified name (`api.stripe.com.`) is the same host: it must not slip past the twins.
  const host = (m[1] ?? m[2] ?? '').toLowerCase().replace(/\.$/, '');
  if (m[1] !== undefined && isIP(host) !== 6) return null;
  if (host === '') return null;
  return { host, port };
}

function headerRecord(req: IncomingMessage): Record<string, string> {
  const headers = Object.create(null) as Record<string, string>;
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    const value = raw[i + 1] as string;
    const prior = headers[name];
    headers[name] = prior === undefined ? value : `${prior}, ${value}`;
  }
  return headers;
}

/** Headers Node computes itself from the body it is given. */
const FRAMING = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive']);

function send(req: IncomingMessage, res: ServerResponse, answer: HttpAnswer): void {
  const write = (): void => {
    if (answer.fault === 'reset') {
      req.socket.destroy();
      return;
    }
    if (res.destroyed) return;
    res.statusCode = answer.status;
    for (const [k, v] of Object.entries(answer.headers)) {
      const lower = k.toLowerCase();
      // A HEAD's answer has no body and says the GET's length itself (host/core/answers.ts).
      if (!FRAMING.has(lower) || (lower === 'content-length' && req.method === 'HEAD' && /^\d{1,15}$/.test(v))) res.setHeader(k, v);
    }
    if (answer.close === true) res.shouldKeepAlive = false;
    res.end(typeof answer.body === 'string' ? answer.body : Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength));
  };
  if (answer.delayMs !== undefined && answer.delayMs > 0) setTimeout(write, answer.delayMs).unref();
  else write();
}

/** Starts the proxy. Refuses a missing or wrong credential with 407 before anything else. */
export async function startConnectProxy(options: ConnectProxyOptions): Promise<ConnectProxy> {
  const host = options.host ?? '127.0.0.1';
  const lookup: TunnelLookup = options.lookup ?? ((name) => dnsLookup(name, { all: true, verbatim: true }));
  const own = new AllowList(options.ownServer === undefined ? [] : await ownServerAllowances(options.ownServer, lookup));
  const allow = new AllowList(options.allowTunnels ?? []);
  const headTimeout = options.headTimeoutMs ?? 10_000;
  const tunnelIdle = options.tunnelIdleMs ?? 300_000;
  const maxPerCredential = options.maxTunnelsPerCredential ?? 128;
  const maxConnections = options.maxConnections ?? 256;
  /** Accepted client sockets (not their TLS wrappers or upstreams), for the global cap. */
  const clients = new Set<Duplex>();
  const turnedAway = new WeakSet<Duplex>();
  let turnedAwayNow = 0;
  /** Tunnels and decrypted connections held, per token. */
  const held = new Map<string, number>();
  const headTimers = new WeakMap<Duplex, NodeJS.Timeout>();
  const sockets = new Set<Duplex>();
  const terminated = new WeakMap<object, Terminated>();
  const track = (s: Duplex): void => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  };
  const connectTimeout = options.connectTimeoutMs ?? 15_000;
  const handshakeTimeout = options.handshakeTimeoutMs ?? 30_000;
  const innerTimeouts = { headersMs: 20_000, requestMs: 120_000, idleMs: 30_000, checkEveryMs: 5_000, ...options.innerTimeouts };

  // The decrypted side: HTTP/1.1 over each terminated TLS socket.
  const inner: Server = createServer({ headersTimeout: innerTimeouts.headersMs, requestTimeout: innerTimeouts.requestMs, connectionsCheckingInterval: innerTimeouts.checkEveryMs }, (req, res) => {
    const meta = terminated.get(req.socket);
    if (meta === undefined) {
      req.socket.destroy();
      return;
    }
    const target = req.url ?? '/';
    // Origin-form is what clients send inside a tunnel; an absolute form is folded to it.
    let pathAndQuery = target;
    if (!target.startsWith('/')) {
      try {
        const u = new URL(target);
        pathAndQuery = `${u.pathname}${u.search}`;
      } catch {
        send(req, res, { status: 400, headers: { 'content-type': 'application/json' }, body: json('bad_request', 'the request target is not a path') });
        return;
      }
    }
    const q = pathAndQuery.indexOf('?');
    const path = q < 0 ? pathAndQuery : pathAndQuery.slice(0, q);
    const query = q < 0 ? '' : pathAndQuery.slice(q + 1);
    const headers = headerRecord(req);
    // The proxy credential speaks for the app; what rides inside is the vendor's (Authorization stays).
    delete headers['x-kit-token'];
    headers['x-twins-key'] = meta.token;
    let first: ReturnType<HttpHandler['head']>;
    try {
      first = options.handler.head({ method: (req.method ?? 'GET').toUpperCase(), path: options.vendorPath(meta.vendor, path), query, headers, receivedAt: Date.now(), twinOrigin: meta.origin });
    } catch (e) {
      send(req, res, options.handler.failed(e));
      return;
    }
    if (typeof first !== 'function') {
      req.resume();
      send(req, res, first);
      return;
    }
    const reader = first;
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > options.maxBodyBytes) {
        refused = true;
        chunks.length = 0;
        send(req, res, { ...options.handler.tooLarge(options.maxBodyBytes, headers), close: true });
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (refused) return;
      const body = size === 0 ? undefined : new Uint8Array(Buffer.concat(chunks, size));
      reader(body).then(
        (answer) => send(req, res, answer),
        (e: unknown) => send(req, res, options.handler.failed(e)),
      );
    });
    req.on('error', () => req.socket.destroy());
  });
  inner.on('clientError', (_e, socket) => socket.destroy());
  // Node checks a server's headersTimeout and requestTimeout only once it is listening, and
  // this one never listens (it is fed the TLS sockets): without this a decrypted connection
  // that stalls mid-request, or drips its head a byte at a time, was held for ever (500 such
  // connections held 500 descriptors). 'listening' is what starts Node's own checks.
  inner.timeout = innerTimeouts.idleMs;
  inner.emit('listening');

  const outer: Server = createServer((req, res) => {
    if (turnedAway.has(req.socket)) return;
    // Plain (non-CONNECT) proxy requests: this proxy speaks CONNECT only, as HTTPS_PROXY clients do.
    res.writeHead(405, { 'content-type': 'application/json', allow: 'CONNECT', connection: 'close' });
    res.end(json('method_not_allowed', 'this proxy takes CONNECT only (set it as HTTPS_PROXY)'));
    req.resume();
  });
  outer.on('clientError', (_e, socket: Duplex) => {
    // A request Node cannot parse: say so when the socket can still take it.
    if (turnedAway.has(socket)) socket.destroy();
    else if (socket.writable) rawAnswer(socket, 400, 'Bad Request', {}, json('bad_request', 'not an HTTP/1.1 proxy request'));
    else socket.destroy();
  });
  outer.on('connection', (s: Socket) => {
    track(s);
    s.on('error', () => s.destroy());
    if (clients.size >= maxConnections) {
      // Descriptors are what a flood exhausts: past the cap a connection costs one only while
      // its 503 is read, and past MAX_TURNED_AWAY of those not even that.
      if (turnedAwayNow >= MAX_TURNED_AWAY) {
        s.destroy();
        return;
      }
      turnedAway.add(s);
      turnedAwayNow++;
      s.once('close', () => turnedAwayNow--);
      rawAnswer(s, 503, 'Service Unavailable', { 'retry-after': '1' }, json('proxy_busy', `the proxy holds ${maxConnections} connections, its limit; retry when one closes`));
      return;
    }
    clients.add(s);
    // Until its CONNECT head is in, a client holds a descriptor for nothing: a few seconds, as on the server's port.
    const timer = setTimeout(() => s.destroy(), headTimeout);
    timer.unref();
    headTimers.set(s, timer);
    s.once('close', () => {
      clients.delete(s);
      clearTimeout(timer);
    });
  });

  outer.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => {
    if (turnedAway.has(client)) return;
    clearTimeout(headTimers.get(client));
    client.on('error', () => client.destroy());
    const token = proxyToken(req.headers['proxy-authorization']);
    const scope = token === null ? null : options.scopeOf(token);
    if (token === null || scope === null) {
      rawAnswer(
        client,
        407,
        'Proxy Authentication Required',
        { 'proxy-authenticate': `Basic realm="${options.realm}"` },
        json('unauthenticated', token === null ? 'the proxy needs the world token as the password of Proxy-Authorization: Basic' : 'the token in Proxy-Authorization does not open this world'),
      );
      return;
    }
    const target = parseAuthority(req.url ?? '');
    if (target === null) {
      rawAnswer(client, 400, 'Bad Request', {}, json('bad_request', 'CONNECT needs host:port'));
      return;
    }
    const holding = held.get(token) ?? 0;
    if (holding >= maxPerCredential) {
      rawAnswer(client, 429, 'Too Many Requests', { 'retry-after': '1' }, json('too_many_tunnels', `this credential holds ${holding} tunnels through the proxy, its limit; close one first`));
      return;
    }
    held.set(token, holding + 1);
    client.once('close', () => {
      const n = (held.get(token) ?? 1) - 1;
      if (n <= 0) held.delete(token);
      else held.set(token, n);
    });
    const vendor = options.twins.get(target.host);
    if (vendor !== undefined) {
      const name = target.host.includes(':') ? `[${target.host}]` : target.host;
      const origin = `https://${name}${target.port === 443 ? '' : `:${target.port}`}`;
      terminate(client, head, target.host, { vendor, token, origin });
      return;
    }
    tunnel(client, head, target.host, target.port, scope);
  });

  const terminate = (client: Duplex, head: Buffer, hostName: string, meta: Terminated): void => {
    options.ca.contextFor(hostName).then(
      (secureContext) => {
        if (client.destroyed) return;
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length > 0) client.unshift(head);
        const tls = new TLSSocket(client as Socket, { isServer: true, secureContext, ALPNProtocols: ['http/1.1'] });
        tls.on('error', () => {
          tls.destroy();
          client.destroy();
        });
        track(tls);
        // A client that never finishes its handshake would hold the socket forever; Node's
        // HTTP timeouts start only once bytes of a request arrive.
        const stall = setTimeout(() => tls.destroy(), handshakeTimeout);
        stall.unref();
        tls.once('secure', () => clearTimeout(stall));
        tls.once('close', () => clearTimeout(stall));
        terminated.set(tls, meta);
        inner.emit('connection', tls);
      },
      // A host the CA may not vouch for (a CA minted before its twin) is the usual reason: say it.
      (e: unknown) => rawAnswer(client, 502, 'Bad Gateway', {}, json('bad_gateway', `no certificate could be issued for ${hostName}: ${e instanceof Error ? e.message : String(e)}`)),
    );
  };

  const tunnel = (client: Duplex, head: Buffer, hostName: string, port: number, scope: TunnelScope): void => {
    let upstream: Socket | null = null;
    let connected = false;
    let failed = false;
    const fail = (status: number, reason: string, code: string, message: string): void => {
      failed = true;
      upstream?.destroy();
      if (!client.destroyed) rawAnswer(client, status, reason, {}, json(code, message));
    };
    // One deadline for the name and the connection: a resolver that never answers holds nothing longer.
    const deadline = setTimeout(() => {
      if (!connected) fail(502, 'Bad Gateway', 'bad_gateway', `cannot reach ${hostName}:${port}: no connection within ${connectTimeout} ms`);
    }, connectTimeout);
    deadline.unref();
    client.once('close', () => clearTimeout(deadline));
    const resolved: Promise<readonly { address: string }[]> = isIP(hostName) !== 0 ? Promise.resolve([{ address: hostName }]) : Promise.resolve(hostName).then(lookup);
    resolved.then(
      (addresses) => {
        if (failed || client.destroyed) return;
        if (addresses.length === 0) {
          fail(502, 'Bad Gateway', 'bad_gateway', `cannot resolve ${hostName}: no address`);
          return;
        }
        const choice = pickTunnelAddress(addresses.map((a) => a.address), port, scope, own, allow);
        if (!choice.ok) {
          const what = isIP(hostName) !== 0 ? hostName : `${hostName} (${choice.address})`;
          if (choice.code === 'forbidden') {
            const authority = `${isIP(hostName) === 6 ? `[${hostName}]` : hostName}:${port}${isIP(hostName) !== 0 ? '' : ` (${choice.address})`}`;
            fail(403, 'Forbidden', 'forbidden', `the read token tunnels only to the world's own server and its twinned hosts, not to ${authority}; use the world's token, or leave this host out of the proxy (NO_PROXY)`);
          } else {
            fail(403, 'Forbidden', 'tunnel_refused', `${what} is ${choice.kind ?? 'refused'}: the proxy tunnels only to public addresses and the world's own server`);
          }
          return;
        }
        // The address judged is the address connected to: no second resolution a rebinding DNS could answer differently.
        const address = formatAddress(choice.address);
        const up = netConnect({ host: address, port, family: choice.address.family });
        upstream = up;
        track(up);
        up.once('connect', () => {
          connected = true;
          clearTimeout(deadline);
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          if (head.length > 0) up.write(head);
          // Reads and writes both reset a socket's timer: the upstream's sees every byte either way.
          up.setTimeout(tunnelIdle, () => {
            up.destroy();
            client.destroy();
          });
          // pipe() carries backpressure both ways; an end on one side half-closes the other.
          up.pipe(client);
          client.pipe(up);
        });
        up.on('error', (e: NodeJS.ErrnoException) => {
          if (connected) client.destroy();
          else if (!failed) fail(502, 'Bad Gateway', 'bad_gateway', `cannot reach ${hostName}:${port}: ${e.code ?? e.message}`);
        });
        client.on('close', () => up.destroy());
        up.on('close', () => {
          if (connected) client.destroy();
        });
      },
      (e: NodeJS.ErrnoException) => {
        if (!failed) fail(502, 'Bad Gateway', 'bad_gateway', `cannot resolve ${hostName}: ${e.code ?? e.message}`);
      },
    );
  };

  await new Promise<void>((resolve, reject) => {
    outer.once('error', reject);
    outer.listen({ host, port: options.port, exclusive: true }, () => {
      outer.off('error', reject);
      resolve();
    });
  });
  const address = outer.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const urlHost = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
  let closing: Promise<void> | null = null;
  return {
    port,
    url: `http://${urlHost}:${port}`,
    get connections() {
      return clients.size;
    },
    close() {
      if (closing === null) {
        closing = new Promise<void>((resolve) => {
          outer.close(() => resolve());
          for (const s of sockets) s.destroy();
          inner.close();
        });
      }
      return closing;
    },
  };
}
