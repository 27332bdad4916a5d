/**
 * A world's streams on the edge (`{world_api}/streams/<id>`, spec: World attach and vendor wire):
 * WebSockets accepted with workerd's hibernation API, so the object may be evicted while its
 * connections stay open. Each connection is a `StreamBridge` (host/core/streams.ts), as on Node;
 * an open connection's state and framing hint are kept in storage after each answer, so an
 * object woken by a message takes the connection up where it was (`resume`). A connection whose
 * token had not yet been read when the object went away is closed (1011), to be opened again.
 */
import type { DurableObjectState } from 'cloudflare:workers';
import type { Scope, StreamCall, StreamResult } from '../../runtime/runner/types.js';
import type { Storage } from '../../runtime/store/types.js';
import { STREAM_CLOSE, StreamBridge, type StreamResume, type StreamSocket } from '../core/streams.js';

/** What a hibernatable WebSocket offers beside the standard ones. */
interface EdgeSocket {
  send(data: ArrayBuffer | Uint8Array | string): void;
  close(code?: number, reason?: string): void;
  serializeAttachment(value: unknown): void;
  deserializeAttachment(): unknown;
}

interface Attachment {
  world: string;
  streamId: string;
  connId: string;
}

/** The world a stream names: its stream calls and what a token opens there. */
export interface StreamTarget {
  streamCall(call: StreamCall): Promise<StreamResult>;
  scopeOf(token: string): Scope | null;
}

const KEPT = ['#edge', 'stream'];

export class EdgeStreams {
  readonly #ctx: DurableObjectState;
  readonly #storage: () => Storage;
  readonly #target: (world: string) => StreamTarget | null;
  readonly #bridges = new Map<EdgeSocket, StreamBridge>();

  constructor(ctx: DurableObjectState, storage: () => Storage, target: (world: string) => StreamTarget | null) {
    this.#ctx = ctx;
    this.#storage = storage;
    this.#target = target;
  }

  /** Accepts the upgrade: the first message will be the world's token. */
  open(world: string, streamId: string): Response {
    const Pair = (globalThis as unknown as { WebSocketPair: new () => { 0: unknown; 1: unknown } }).WebSocketPair;
    const pair = new Pair();
    const client = pair[0];
    const server = pair[1] as EdgeSocket;
    this.#ctx.acceptWebSocket(server as unknown as WebSocket, [world]);
    const attachment: Attachment = { world, streamId, connId: `conn_${crypto.randomUUID().replace(/-/g, '')}` };
    server.serializeAttachment(attachment);
    this.#bridge(server, attachment, undefined);
    return new Response(null, { status: 101, webSocket: client } as ResponseInit);
  }

  message(ws: unknown, data: ArrayBuffer | string): void {
    const socket = ws as EdgeSocket;
    const bridge = this.#bridges.get(socket) ?? this.#revive(socket);
    if (bridge === null) return;
    bridge.message(typeof data === 'string' ? new TextEncoder().encode(data) : new Uint8Array(data));
  }

  closed(ws: unknown): void {
    const socket = ws as EdgeSocket;
    const bridge = this.#bridges.get(socket) ?? this.#revive(socket);
    bridge?.closed();
  }

  #bridge(socket: EdgeSocket, a: Attachment, resume: StreamResume | undefined): StreamBridge | null {
    const target = this.#target(a.world);
    if (target === null) {
      socket.close(STREAM_CLOSE.unauthenticated, 'unauthenticated: no such world');
      return null;
    }
    const key = [...KEPT, a.connId];
    const edgeSocket: StreamSocket = {
      send: (bytes) => socket.send(bytes),
      // A hibernatable socket says nothing of what it has not sent yet; workerd buffers it.
      bufferedAmount: () => 0,
      end: (code, reason) => {
        try {
          socket.close(code, reason);
        } catch {
          // Already closed by the client.
        }
      },
    };
    const bridge: StreamBridge = new StreamBridge(edgeSocket, a.streamId, a.connId, {
      world: { streamCall: (call) => target.streamCall(call) },
      scopeOf: (token) => target.scopeOf(token),
      ...(resume !== undefined ? { resume } : {}),
      onAnswered: () => {
        const now = bridge.resumable();
        if (now !== null) this.#storage().transact((tx) => tx.put(key, { state: now.state, until: now.until }));
      },
    });
    this.#bridges.set(socket, bridge);
    void bridge.settled.then(() => {
      this.#bridges.delete(socket);
      const storage = this.#storage();
      if (storage.alive) storage.transact((tx) => tx.remove(key));
    });
    return bridge;
  }

  /** A socket this object accepted before it was evicted: its connection taken up again, or closed. */
  #revive(socket: EdgeSocket): StreamBridge | null {
    const a = socket.deserializeAttachment() as Attachment | null;
    const kept = a === null ? undefined : this.#storage().get<StreamResume>([...KEPT, a.connId]);
    if (a === null || kept === undefined) {
      socket.close(STREAM_CLOSE.internal, 'the world restarted before this stream opened; open it again');
      return null;
    }
    return this.#bridge(socket, a, { state: kept.state, until: kept.until ?? null });
  }
}
