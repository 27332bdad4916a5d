/**
 * One stream connection between a WebSocket and a world (`{world_api}/streams/<id>`), with no
 * socket library in it: the uWS adapter (host/node/streams/uws.ts) and the edge's WebSockets feeds it messages and drains, and it
 * answers through a `StreamSocket`. It owns what the twin must not: the token check, the
 * connection's bytes and state between calls, the twin's framing hint, and backpressure.
 *
 * Order of a connection: the first message is the world's token; a wrong one, the read
 * token, or a stream the world does not have closes the socket with a 44xx code and reason.
 * Then `open` runs (its bytes are the server's greeting), and each arrival runs `data`, one
 * call at a time; what arrives during a call waits and goes with the next one. When either
 * side closes, so does the other, and the twin hears `close` once.
 */
import { Buffer } from 'node:buffer';
import { isKitError } from '../../runtime/errors.js';
import { unrefTimer } from '../../runtime/timers.js';
import type { Scope, StreamResult, StreamUntilBytes, WorldHandle } from '../../runtime/runner/types.js';

/** Close codes of a stream's WebSocket (4xxx: the application's range, RFC 6455 7.4.2). */
export const STREAM_CLOSE = {
  /** Either side ended the connection. */
  normal: 1000,
  /** The server is stopping. */
  goingAway: 1001,
  /** More bytes waited than the stream buffer holds. */
  tooBig: 1009,
  /** The twin's stream handler failed, or the world did. */
  internal: 1011,
  unauthenticated: 4401,
  /** The read token opens no stream (spec: World attach and vendor wire). */
  readToken: 4403,
  unknownStream: 4404,
  /** No token arrived in time. */
  tokenTimeout: 4408,
} as const;

export interface StreamSocket {
  /** Sends bytes as one binary message. */
  send(bytes: Uint8Array): void;
  /** Bytes sent but not yet written to the network. */
  bufferedAmount(): number;
  /** Closes with a code and a reason (at most 123 bytes); the adapter then calls `closed()`. */
  end(code: number, reason: string): void;
}

export interface StreamLimits {
  /** Past this many unsent bytes toward the client, the twin is not called again until they drain. Default 1 MiB. */
  highWaterBytes: number;
  /** Bytes from the client waiting for the twin; more closes the stream (1009). Default 20 MiB. */
  maxBufferBytes: number;
  /** How long the first message (the token) may take. Default 10 s. */
  tokenTimeoutMs: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = { highWaterBytes: 1024 * 1024, maxBufferBytes: 20 * 1024 * 1024, tokenTimeoutMs: 10_000 };

const MAX_TOKEN_BYTES = 1024;
const EMPTY = new Uint8Array(0);

/** A close reason fits a control frame: 123 bytes of UTF-8. */
export function closeReason(text: string): string {
  let out = text.length > 123 ? text.slice(0, 123) : text;
  while (Buffer.byteLength(out) > 123) out = out.slice(0, -1);
  return out;
}

type Phase = 'token' | 'opening' | 'open' | 'ended';

export interface StreamBridgeOptions {
  /** The world's stream calls (absent: it serves no streams). */
  world: Pick<WorldHandle, 'streamCall'>;
  /** What a token opens, or null. */
  scopeOf(token: string): Scope | null;
  limits?: Partial<StreamLimits>;
  /**
   * An open connection taken up again where another bridge left it (`resumable()`): its token was
   * checked and `open` ran then. The edge's object, evicted while its WebSockets stayed open
   * (hibernation), goes on this way.
   */
  resume?: StreamResume;
  /** Called each time the twin answered and the connection goes on: what `resumable()` says changed. */
  onAnswered?(): void;
}

/** What an open connection needs to go on in another bridge: the twin's state and framing hint. */
export interface StreamResume {
  state: unknown;
  until: StreamUntilBytes | null;
}

/** One stream connection: a WebSocket on one side, the world's stream calls on the other. */
export class StreamBridge {
  readonly streamId: string;
  readonly connId: string;
  private readonly socket: StreamSocket;
  private readonly world: Pick<WorldHandle, 'streamCall'>;
  private readonly scopeOf: (token: string) => Scope | null;
  private readonly limits: StreamLimits;
  private phase: Phase = 'token';
  /** The socket is gone (closed by either side): nothing more is sent. */
  private socketGone = false;
  /** The twin saw `open` and must hear `close`. */
  private opened = false;
  private closeSent = false;
  private busy = false;
  private state: unknown = null;
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private until: StreamUntilBytes | null = null;
  private untilFound = false;
  /** The last `delimiter.length - 1` bytes looked at, so a delimiter split across arrivals is seen. */
  private window: Uint8Array = EMPTY;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly onAnswered: (() => void) | undefined;
  private settle!: () => void;
  /** Resolves once the twin has heard everything it will hear of this connection. */
  readonly settled: Promise<void>;

  constructor(socket: StreamSocket, streamId: string, connId: string, options: StreamBridgeOptions) {
    this.socket = socket;
    this.streamId = streamId;
    this.connId = connId;
    this.world = options.world;
    this.scopeOf = options.scopeOf;
    this.limits = { ...DEFAULT_STREAM_LIMITS, ...options.limits };
    this.onAnswered = options.onAnswered;
    this.settled = new Promise((resolve) => (this.settle = resolve));
    if (options.resume !== undefined) {
      this.phase = 'open';
      this.opened = true;
      this.state = options.resume.state;
      this.setUntil(options.resume.until);
      return;
    }
    this.timer = setTimeout(() => this.end(STREAM_CLOSE.tokenTimeout, `no token within ${this.limits.tokenTimeoutMs} ms`), this.limits.tokenTimeoutMs);
    unrefTimer(this.timer);
  }

  /**
   * What another bridge needs to take this connection up (its state and framing hint), once it is
   * open with no call running and no bytes waiting; null otherwise.
   */
  resumable(): StreamResume | null {
    if (this.phase !== 'open' || this.busy || this.pendingBytes > 0 || this.socketGone) return null;
    return { state: this.state, until: this.until };
  }

  /** A message arrived. `bytes` must be the connection's own copy (uWS neuters its buffer). */
  message(bytes: Uint8Array): void {
    if (this.socketGone || this.phase === 'ended') return;
    if (this.phase === 'token') {
      this.token(bytes);
      return;
    }
    if (bytes.byteLength === 0) return;
    this.pending.push(bytes);
    this.pendingBytes += bytes.byteLength;
    if (this.pendingBytes > this.limits.maxBufferBytes) {
      this.end(STREAM_CLOSE.tooBig, `stream buffer over ${this.limits.maxBufferBytes} bytes`);
      return;
    }
    if (this.until !== null && !this.untilFound) this.look(bytes);
    this.pump();
  }

  /** The socket can take more: calls held back by backpressure go on. */
  drain(): void {
    this.pump();
  }

  /** The socket closed (either side). The twin hears what was still waiting, then `close`. */
  closed(): void {
    if (this.socketGone) return;
    this.socketGone = true;
    clearTimeout(this.timer);
    // Bytes a client sent before it closed still reach the twin, as a TCP server reads them
    // before the FIN; a connection this side ended drops them.
    if (this.phase !== 'open' && this.phase !== 'opening') {
      this.pending = [];
      this.pendingBytes = 0;
    }
    this.phase = 'ended';
    this.finish();
  }

  /** Ends the connection from this side (server stop, a failure). */
  end(code: number, reason: string): void {
    if (this.socketGone) return;
    this.phase = 'ended';
    clearTimeout(this.timer);
    this.socket.end(code, closeReason(reason));
    // The adapter calls closed(); if it did not (a socket already gone), do it here.
    this.closed();
  }

  private token(bytes: Uint8Array): void {
    clearTimeout(this.timer);
    const token = bytes.byteLength > MAX_TOKEN_BYTES ? '' : Buffer.from(bytes).toString('utf8').trim();
    const scope = token === '' ? null : this.scopeOf(token);
    if (scope === null) return this.end(STREAM_CLOSE.unauthenticated, 'unauthenticated: the first message must be the world token');
    if (scope === 'read') return this.end(STREAM_CLOSE.readToken, 'read token opens no stream');
    if (typeof this.world.streamCall !== 'function') return this.end(STREAM_CLOSE.unknownStream, `unknown stream '${this.streamId}': this world serves no streams`);
    this.phase = 'opening';
    this.call('open');
  }

  private look(chunk: Uint8Array): void {
    const until = this.until!;
    const joined = this.window.byteLength === 0 ? chunk : Buffer.concat([this.window, chunk]);
    if (Buffer.from(joined.buffer, joined.byteOffset, joined.byteLength).indexOf(until.delimiter) >= 0) this.untilFound = true;
    this.window = keepLast(joined, until.delimiter.byteLength - 1);
  }

  private setUntil(until: StreamUntilBytes | null): void {
    this.until = until;
    this.untilFound = false;
    this.window = EMPTY;
    if (until === null) return;
    const all = Buffer.concat([until.tail, ...this.pending]);
    this.untilFound = all.indexOf(until.delimiter) >= 0;
    this.window = keepLast(all, until.delimiter.byteLength - 1);
  }

  private ready(): boolean {
    if (this.until === null || this.untilFound) return true;
    const max = Math.min(this.until.max ?? Infinity, this.limits.maxBufferBytes);
    return this.pendingBytes >= max;
  }

  /**
   * What waits, as one array with a buffer of its own: it is cloned to the world's worker,
   * and a view into Node's shared Buffer pool would carry other bytes along.
   */
  private take(): Uint8Array {
    let bytes: Uint8Array;
    if (this.pending.length === 1) bytes = this.pending[0]!;
    else {
      bytes = new Uint8Array(this.pendingBytes);
      let at = 0;
      for (const part of this.pending) {
        bytes.set(part, at);
        at += part.byteLength;
      }
    }
    this.pending = [];
    this.pendingBytes = 0;
    return bytes;
  }

  private pump(): void {
    if (this.busy || this.phase !== 'open' || this.pendingBytes === 0) return;
    // Backpressure toward the client: a twin's answers wait until the client reads.
    if (this.socket.bufferedAmount() > this.limits.highWaterBytes) return;
    if (!this.ready()) return;
    this.call('data', this.take());
  }

  private call(event: 'open' | 'data' | 'close', bytes?: Uint8Array): void {
    this.busy = true;
    if (event === 'open') this.opened = true;
    if (event === 'close') this.closeSent = true;
    const call = { twin: this.streamId, connId: this.connId, event, state: this.state, ...(bytes === undefined ? {} : { bytes }) };
    let answer: Promise<StreamResult>;
    try {
      answer = this.world.streamCall!(call);
    } catch (e) {
      answer = Promise.reject(e);
    }
    answer.then(
      (r) => this.answered(event, r),
      (e: unknown) => this.failed(event, e),
    );
  }

  private answered(event: 'open' | 'data' | 'close', r: StreamResult): void {
    this.busy = false;
    this.state = r.state;
    if (this.socketGone) {
      this.finish();
      return;
    }
    if (r.send.byteLength > 0) this.socket.send(r.send);
    if (r.close) {
      this.pending = [];
      this.pendingBytes = 0;
      this.end(STREAM_CLOSE.normal, 'closed by the twin');
      return;
    }
    if (event === 'open') this.phase = 'open';
    this.setUntil(r.until);
    this.pump();
    this.onAnswered?.();
  }

  private failed(event: 'open' | 'data' | 'close', e: unknown): void {
    this.busy = false;
    const code = isKitError(e) ? e.code : 'internal';
    // After a failure the twin hears nothing more of this connection.
    this.closeSent = true;
    this.pending = [];
    this.pendingBytes = 0;
    if (!this.socketGone) {
      if (event === 'open' && code === 'unknown_stream') this.end(STREAM_CLOSE.unknownStream, `unknown stream '${this.streamId}'`);
      else {
        if (!isKitError(e)) console.error(`kit: stream ${this.streamId} failed:`, e);
        this.end(STREAM_CLOSE.internal, `${code}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    this.finish();
  }

  /** After the socket is gone: the bytes still waiting, then `close`, then settled. */
  private finish(): void {
    if (this.busy) return;
    if (this.opened && this.pendingBytes > 0 && !this.closeSent) {
      this.call('data', this.take());
      return;
    }
    if (this.opened && !this.closeSent) {
      this.call('close');
      return;
    }
    this.settle();
  }
}

function keepLast(bytes: Uint8Array, n: number): Uint8Array {
  if (n <= 0) return EMPTY;
  // A copy (Buffer#slice would be a view, keeping the whole buffer alive).
  return Uint8Array.prototype.slice.call(bytes, Math.max(0, bytes.byteLength - n));
}
