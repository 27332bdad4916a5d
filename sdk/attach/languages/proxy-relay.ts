/**
 * A loopback CONNECT relay in front of the world's proxy, for clients that will not send the
 * proxy's credentials by themselves. Java is the one: `HttpURLConnection` and `HttpClient`
 * answer the proxy's `407` only through an `Authenticator` set in the app, and never with
 * Basic for a tunnel (`jdk.http.auth.tunneling.disabledSchemes` defaults to `Basic`). The
 * relay asks nothing of its client and adds the world token's `Proxy-Authorization` when it
 * sends the `CONNECT` on to the world's proxy; after that it only copies bytes, both ways.
 * What may be tunnelled, and to where, stays the world's proxy's call.
 *
 * A credential-free port on loopback is open to every process on the machine, so on Linux
 * each connection's owner is looked up in /proc/net/tcp and tcp6: one from a process of
 * another user is refused (403). Where there is no /proc/net/tcp (macOS, …) that check cannot
 * be made and any local process may use the relay while the attached command runs.
 */
import { readFile } from 'node:fs/promises';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { endianness } from 'node:os';

export interface ProxyRelayOptions {
  /** The world's proxy with its credential: `http://<user>:<token>@<host>:<port>`. */
  upstream: string;
  /** How long a client has to send its `CONNECT` head. Default 10 s, the world proxy's own. */
  headTimeoutMs?: number;
  /** Whose connections are taken: a uid, or null for anyone's. Default this process's uid where /proc/net/tcp tells the peer's (Linux), else null. */
  onlyUid?: number | null;
}

export interface ProxyRelay {
  /** `127.0.0.1` */
  host: string;
  port: number;
  /** Stops listening and ends every tunnel. */
  close(): Promise<void>;
}

const LOOPBACK = '127.0.0.1';
/** The largest `CONNECT` head taken (Java's is under 200 bytes). */
const MAX_HEAD_BYTES = 16 * 1024;
/** Connections held at once; more are dropped by the listener (the world's proxy holds 256). */
const MAX_CONNECTIONS = 256;
/** `host:port`, `[v6]:port`: what a CONNECT names, with nothing that could end a header line. */
const AUTHORITY = /^(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]):[0-9]{1,5}$/;
const PROC_NET_TCP = '/proc/net/tcp';

/** A refusal in the world proxy's shape (docs/attach.md, Refusals), then the connection closed. */
function refuse(socket: Socket, status: number, reason: string, code: string, message: string): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ error: { code, message } });
  socket.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  socket.resume();
  setTimeout(() => socket.destroy(), 2_000).unref();
}

/** Ends `socket` once what is written to it is flushed (at once when its peer failed). */
function closeAfter(socket: Socket, hadError: boolean): void {
  if (hadError || socket.destroyed) socket.destroy();
  else socket.end(() => socket.destroy());
}

/** A 32-bit word of an address as /proc/net/tcp{,6} prints it (the host's native byte order). */
function procWord(bytes: number[]): string {
  const buffer = Buffer.from(bytes);
  const word = endianness() === 'LE' ? buffer.readUInt32LE(0) : buffer.readUInt32BE(0);
  return word.toString(16).toUpperCase().padStart(8, '0');
}

/**
 * An IPv4 address and port as /proc/net/tcp prints them, and as /proc/net/tcp6 prints the
 * same address mapped (`::ffff:127.0.0.1`): Java's sockets are IPv6 ones, listed there.
 */
function procAddresses(ip: string, port: number): { v4: string; v6: string } {
  const bytes = ip.replace(/^::ffff:/i, '').split('.').map(Number);
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return { v4: `${procWord(bytes)}:${hexPort}`, v6: `${'0'.repeat(16)}${procWord([0, 0, 0xff, 0xff])}${procWord(bytes)}:${hexPort}` };
}

/** The uid owning the client end of an accepted loopback connection, or null when /proc/net/tcp{,6} does not list it. */
export async function peerUid(socket: Socket): Promise<number | null> {
  const client = procAddresses(socket.remoteAddress ?? '', socket.remotePort ?? 0);
  const relay = procAddresses(socket.localAddress ?? '', socket.localPort ?? 0);
  // tcp6 first: Java's sockets are listed there, and it is the shorter table (reading
  // /proc/net/tcp took 5-11 ms with 360 sockets open on a busy machine).
  for (const [file, local, remote] of [
    [`${PROC_NET_TCP}6`, client.v6, relay.v6],
    [PROC_NET_TCP, client.v4, relay.v4],
  ] as const) {
    const table = await readFile(file, 'utf8').catch(() => '');
    for (const line of table.split('\n')) {
      const fields = line.trim().split(/\s+/);
      if (fields[1] === local && fields[2] === remote) return Number(fields[7]);
    }
  }
  return null;
}

async function defaultOnlyUid(): Promise<number | null> {
  if (typeof process.getuid !== 'function') return null;
  try {
    await readFile(PROC_NET_TCP, 'utf8');
    return process.getuid();
  } catch {
    return null;
  }
}

/** Reads a client's head (up to the blank line); answers it and what came after it, or null when the client sent too much or went away. */
function readHead(socket: Socket, timeoutMs: number): Promise<{ head: string; rest: Buffer } | null> {
  return new Promise((resolve) => {
    let buffered = Buffer.alloc(0);
    const finish = (value: { head: string; rest: Buffer } | null): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.pause();
      resolve(value);
    };
    const onData = (chunk: Buffer): void => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end >= 0 && end <= MAX_HEAD_BYTES) finish({ head: buffered.subarray(0, end).toString('latin1'), rest: buffered.subarray(end + 4) });
      else if (buffered.length > MAX_HEAD_BYTES) {
        finish(null);
        refuse(socket, 431, 'Request Header Fields Too Large', 'bad_request', `the relay takes a CONNECT head of up to ${MAX_HEAD_BYTES} bytes`);
      }
    };
    const onClose = (): void => finish(null);
    const timer = setTimeout(() => {
      finish(null);
      socket.destroy();
    }, timeoutMs);
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.resume();
  });
}

/** Starts the relay on a free loopback port. */
export async function startProxyRelay(options: ProxyRelayOptions): Promise<ProxyRelay> {
  const upstream = new URL(options.upstream);
  if (upstream.protocol !== 'http:') throw new TypeError(`the relay sends to an http: proxy, not ${upstream.protocol}`);
  const credential = Buffer.from(`${decodeURIComponent(upstream.username)}:${decodeURIComponent(upstream.password)}`).toString('base64');
  const upstreamHost = upstream.hostname.replace(/^\[(.*)\]$/, '$1');
  const upstreamPort = Number(upstream.port || 80);
  const headTimeoutMs = options.headTimeoutMs ?? 10_000;
  const onlyUid = options.onlyUid === undefined ? await defaultOnlyUid() : options.onlyUid;
  const sockets = new Set<Socket>();

  const relay = async (client: Socket): Promise<void> => {
    client.pause();
    if (onlyUid !== null) {
      const uid = await peerUid(client).catch(() => null);
      if (uid !== onlyUid) {
        refuse(client, 403, 'Forbidden', 'forbidden', uid === null ? 'the relay cannot tell whose connection this is' : `the relay serves only the user who attached (uid ${onlyUid}), not uid ${uid}`);
        return;
      }
    }
    const got = await readHead(client, headTimeoutMs);
    if (got === null) return;
    const [method, target, version] = (got.head.split('\r\n')[0] as string).split(' ');
    if (method !== 'CONNECT') {
      refuse(client, 405, 'Method Not Allowed', 'method_not_allowed', 'the relay only tunnels (CONNECT): it carries https: requests, not http: ones');
      return;
    }
    if (target === undefined || !AUTHORITY.test(target) || version === undefined || !/^HTTP\/1\.[01]$/.test(version)) {
      refuse(client, 400, 'Bad Request', 'bad_request', 'the CONNECT target must be host:port over HTTP/1.x');
      return;
    }
    let connected = false;
    const world = connect({ host: upstreamHost, port: upstreamPort, noDelay: true });
    sockets.add(world);
    world.once('close', () => sockets.delete(world));
    world.on('error', (e: NodeJS.ErrnoException) => {
      if (!connected) refuse(client, 502, 'Bad Gateway', 'bad_gateway', `the world's proxy at ${upstream.host} cannot be reached (${e.code ?? e.message})`);
      else client.destroy();
    });
    world.once('connect', () => {
      connected = true;
      world.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\nProxy-Authorization: Basic ${credential}\r\n\r\n`);
      if (got.rest.length > 0) world.write(got.rest);
      // From here the world's proxy answers the client itself (its 200, or its refusal).
      world.pipe(client);
      client.pipe(world);
      client.resume();
    });
    // One side gone: the other gets what is still buffered for it, then goes too. A refused
    // connection (the world's proxy unreachable) keeps the client until its answer is out.
    client.once('close', (hadError) => closeAfter(world, hadError));
    world.once('close', (hadError) => {
      if (connected) closeAfter(client, hadError);
    });
  };

  const server: Server = createServer((client) => {
    // A TLS handshake is many small writes each way: without this, Nagle's algorithm against
    // the peer's delayed ACK can hold some of them back at each hop.
    client.setNoDelay(true);
    sockets.add(client);
    client.once('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    relay(client).catch(() => client.destroy());
  });
  server.maxConnections = MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    host: LOOPBACK,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
