/**
 * The attacher's side of streams (spec Authentication 4): for each stream of a world, a TCP
 * listener on loopback whose connections are each piped to a new WebSocket to the stream's
 * URL, the world's token first. The app is pointed at the listeners through the stream's
 * variables (`SMTP_HOST`, `SMTP_PORT`, …), so its unmodified client talks to the twin.
 *
 * Backpressure both ways: a socket whose WebSocket has too much unsent is paused until the
 * WebSocket drains; a WebSocket whose socket cannot take more is paused until the socket
 * drains. When one side closes, so does the other.
 */
import { createServer, type Server, type Socket } from 'node:net';
import WebSocket from 'ws';
import { fillStreamEnv, type AttachManifest } from './manifest.js';

/** Bytes per WebSocket message: the host takes up to 1 MiB; smaller keeps both sides responsive. */
const MAX_MESSAGE_BYTES = 64 * 1024;
/**
 * The largest message taken from the world: the host's own limit (it sends 64 KiB pieces).
 * `ws` would take 100 MiB per message, held whole in memory before the app sees a byte; a
 * bigger one closes the stream (1009).
 */
const MAX_RECEIVE_BYTES = 1024 * 1024;
/** Unsent WebSocket bytes past which the TCP side is paused. */
const HIGH_WATER_BYTES = 1024 * 1024;
const LOOPBACK = '127.0.0.1';

export interface StreamListenerOptions {
  /** Told when a stream's WebSocket closes with a refusal (4xxx) or an error (1011): the app sees only a closed socket. Default: a line on stderr. */
  onRefused?: (streamId: string, code: number, reason: string) => void;
}

export interface StreamListeners {
  /** Each stream's variables pointed at its listener, e.g. `{ SMTP_HOST: '127.0.0.1', SMTP_PORT: '50123' }`. */
  env: Record<string, string>;
  /** Each stream id → its listener's port. */
  ports: Record<string, number>;
  /** Stops listening and ends every connection. */
  close(): Promise<void>;
}

function splitChunks(chunk: Buffer): Buffer[] {
  if (chunk.byteLength <= MAX_MESSAGE_BYTES) return [chunk];
  const out: Buffer[] = [];
  for (let at = 0; at < chunk.byteLength; at += MAX_MESSAGE_BYTES) out.push(chunk.subarray(at, at + MAX_MESSAGE_BYTES));
  return out;
}

/** Pipes one accepted connection to a new WebSocket of the stream. */
function pipe(socket: Socket, streamId: string, url: string, token: string, sockets: Set<Socket>, options: StreamListenerOptions): void {
  sockets.add(socket);
  socket.pause(); // nothing is read until the WebSocket is open and the token sent
  // No redirect is followed: the first message is the world's token, for this URL only.
  const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: MAX_RECEIVE_BYTES, followRedirects: false });
  let open = false;

  let reported = false;
  const report = (code: number, reason: string): void => {
    if (reported) return; // once per connection: an error is followed by its close
    reported = true;
    if (options.onRefused) options.onRefused(streamId, code, reason);
    else console.error(`kit attach: stream ${streamId} closed: ${code} ${reason}`);
  };

  ws.on('open', () => {
    open = true;
    ws.send(token);
    socket.resume();
  });
  socket.on('data', (chunk: Buffer) => {
    if (!open) return;
    for (const part of splitChunks(chunk)) {
      ws.send(part, { binary: true }, () => {
        // The send callback runs once the bytes are handed to the network: resume when drained.
        if (socket.isPaused() && ws.bufferedAmount < HIGH_WATER_BYTES / 2 && open) socket.resume();
      });
    }
    if (ws.bufferedAmount > HIGH_WATER_BYTES) socket.pause();
  });
  // Paused by us because the app does not read fast enough; resumed once what it has is flushed.
  let held = false;
  const release = (): void => {
    if (held && socket.writableLength === 0) {
      held = false;
      ws.resume();
    }
  };
  ws.on('message', (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => {
    if (!isBinary) return; // only binary messages carry the connection's bytes
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    // Released from the write callback as well as 'drain', whichever sees the buffer empty.
    if (!socket.write(bytes, release)) {
      held = true;
      ws.pause();
    }
  });
  socket.on('drain', release);

  socket.on('end', () => {
    // The app closed its side: the stream ends (the twin hears close).
    if (ws.readyState === WebSocket.OPEN) ws.close(1000, 'client closed');
    else if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
  });
  socket.on('error', () => {
    if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.terminate();
  });
  socket.on('close', () => {
    sockets.delete(socket);
    if (ws.readyState === WebSocket.OPEN) ws.close(1000, 'client closed');
    else if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
  });
  ws.on('close', (code: number, reason: Buffer) => {
    open = false;
    if (code >= 4000 || code === 1011 || code === 1009) report(code, reason.toString('utf8'));
    // What the twin sent before closing is written first; then the app sees the end.
    if (code === 1000 || code === 1001) socket.end();
    else socket.destroy();
  });
  ws.on('error', (e: Error & { code?: string }) => {
    open = false;
    if (e.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') report(1009, `the world sent a message over ${MAX_RECEIVE_BYTES} bytes`);
    else report(1006, e.message);
    socket.destroy();
  });
}

/**
 * Starts one loopback listener per stream of the manifest. Each accepted connection opens a
 * WebSocket to the stream's URL and sends `token` as its first message.
 *
 * ```ts
 * const { env, close } = await startStreamListeners(manifest, token);
 * spawn(cmd, args, { env: { ...process.env, ...env } });
 * ```
 */
export async function startStreamListeners(manifest: Pick<AttachManifest, 'streams'>, token: string, options: StreamListenerOptions = {}): Promise<StreamListeners> {
  if (typeof token !== 'string' || token === '') throw new TypeError('startStreamListeners: token must be a non-empty string');
  const servers: Server[] = [];
  const sockets = new Set<Socket>();
  const env: Record<string, string> = {};
  const ports: Record<string, number> = {};
  const closeAll = async (): Promise<void> => {
    for (const s of sockets) s.destroy();
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  };
  try {
    for (const [id, stream] of Object.entries(manifest.streams ?? {})) {
      const server = createServer({ noDelay: true }, (socket) => pipe(socket, id, stream.url, token, sockets, options));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, LOOPBACK, () => {
          server.off('error', reject);
          resolve();
        });
      });
      servers.push(server);
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      ports[id] = port;
      Object.assign(env, fillStreamEnv(stream, LOOPBACK, port));
    }
  } catch (e) {
    await closeAll();
    throw e;
  }
  let closing: Promise<void> | null = null;
  return {
    env,
    ports,
    close: () => (closing ??= closeAll()),
  };
}
