/**
 * The stream WebSocket on uWS: `{world_api}/streams/<id>`. The upgrade is accepted without
 * looking at credentials (a browser's WebSocket cannot send headers; the token is the first
 * message) and without `x-kit-world-code` (spec Versioning 2). Each connection is a
 * `StreamBridge` (./bridge.ts); this file only moves bytes and backpressure signals.
 */
import { randomBytes } from 'node:crypto';
import type * as uWS from 'uWebSockets.js';
import type { Scope, WorldHandle } from '../../../runtime/runner/types.js';
import { STREAM_CLOSE, StreamBridge, type StreamLimits } from '../../core/streams.js';

/** The world a stream's path names, as the bridge needs it. */
export interface StreamWorld {
  world: Pick<WorldHandle, 'streamCall'>;
  scopeOf(token: string): Scope | null;
}

export interface StreamRoutesOptions {
  /**
   * One world (the single-world server): its API's path prefix, `/-/<org>/<world>`, and the world.
   * Or many (the multi-world host): `worlds` finds the world a path names, `/-/<org>/<world>/streams/<id>`.
   */
  apiPrefix?: string;
  world?: WorldHandle;
  scopeOf?(token: string): Scope | null;
  worlds?(org: string, world: string): StreamWorld | null;
  limits?: Partial<StreamLimits>;
  /** How long `close()` lets the twins hear their connections' ends. Default 5 s. */
  closeTimeoutMs?: number;
}

export interface StreamRoutes {
  /** Registers the WebSocket route on a uWS app (pass as `listenHttp({ configure })`). */
  register(app: uWS.TemplatedApp): void;
  /** Live connections. */
  connections(): readonly StreamBridge[];
  /** Closes every stream (1001) and waits until their twins heard `close`. Later upgrades are refused. */
  close(): Promise<void>;
}

interface UserData {
  target: StreamWorld;
  streamId: string;
  connId: string;
  conn: StreamBridge | null;
}

/** A stream message bigger than this closes the socket (uWS refuses it): the attacher sends 64 KiB at most. */
export const MAX_STREAM_MESSAGE_BYTES = 1024 * 1024;
/**
 * uWS drops a send past `maxBackpressure`. The bridge stops calling the twin past its own high
 * water mark, so this is only a ceiling for one answer that is larger than that.
 */
const MAX_BACKPRESSURE_BYTES = 64 * 1024 * 1024;
const SEND_CHUNK_BYTES = 64 * 1024;

/** A world no path names: every token is refused (4401), as a wrong one is. */
const NO_WORLD: StreamWorld = { world: {}, scopeOf: () => null };

export function createStreamRoutes(options: StreamRoutesOptions): StreamRoutes {
  const many = options.worlds;
  if (many === undefined && (options.apiPrefix === undefined || options.world === undefined || options.scopeOf === undefined)) {
    throw new TypeError('createStreamRoutes needs apiPrefix, world and scopeOf, or worlds');
  }
  const one: StreamWorld | null = many === undefined ? { world: options.world!, scopeOf: options.scopeOf! } : null;
  const live = new Set<StreamBridge>();
  let stopping = false;
  const idPrefix = `conn_${randomBytes(4).toString('hex')}`;
  let counter = 0;

  const register = (app: uWS.TemplatedApp): void => {
    app.ws<UserData>(one !== null ? `${options.apiPrefix}/streams/:id` : '/-/:org/:world/streams/:id', {
      compression: 0,
      maxPayloadLength: MAX_STREAM_MESSAGE_BYTES,
      maxBackpressure: MAX_BACKPRESSURE_BYTES,
      closeOnBackpressureLimit: false,
      idleTimeout: 120,
      sendPingsAutomatically: true,
      upgrade(res, req, context) {
        // uWS's request object dies when this returns: read everything now.
        const key = req.getHeader('sec-websocket-key');
        const protocol = req.getHeader('sec-websocket-protocol');
        const extensions = req.getHeader('sec-websocket-extensions');
        const target = one ?? many!(req.getParameter(0) ?? '', req.getParameter(1) ?? '') ?? NO_WORLD;
        let streamId = req.getParameter(one !== null ? 0 : 2) ?? '';
        try {
          streamId = decodeURIComponent(streamId);
        } catch {
          // Left as sent: it names no stream, which the client hears after its token.
        }
        if (stopping) {
          res.cork(() => {
            res.writeStatus('503 Service Unavailable').writeHeader('content-type', 'application/json');
            res.end(JSON.stringify({ error: { code: 'shutting_down', message: 'the server is stopping' } }), true);
          });
          return;
        }
        const data: UserData = { target, streamId, connId: `${idPrefix}_${(counter++).toString(36)}`, conn: null };
        res.upgrade(data, key, protocol, extensions, context);
      },
      open(ws) {
        const data = ws.getUserData();
        let gone = false;
        const conn = new StreamBridge(
          {
            send(bytes) {
              if (gone) return;
              // Corked: sends come after an await (the world's answer), outside any uWS callback.
              // In messages of 64 KiB: one multi-MiB message that the socket takes only in part
              // was seen to stall in uWS's buffer until the next event on the socket (a test in
              // test/streams/websocket.test.ts caught it); smaller messages drain as the client reads.
              ws.cork(() => {
                for (let at = 0; at < bytes.byteLength; at += SEND_CHUNK_BYTES) ws.send(bytes.subarray(at, at + SEND_CHUNK_BYTES), true, false);
              });
            },
            bufferedAmount: () => (gone ? 0 : ws.getBufferedAmount()),
            end(code, reason) {
              if (gone) return;
              gone = true;
              ws.cork(() => ws.end(code, reason));
            },
          },
          data.streamId,
          data.connId,
          { world: data.target.world, scopeOf: data.target.scopeOf, ...(options.limits ? { limits: options.limits } : {}) },
        );
        data.conn = conn;
        live.add(conn);
        void conn.settled.then(() => live.delete(conn));
      },
      message(ws, message) {
        // The buffer is neutered when this returns: the connection keeps a copy.
        ws.getUserData().conn?.message(new Uint8Array(message.slice(0)));
      },
      drain(ws) {
        ws.getUserData().conn?.drain();
      },
      close(ws) {
        ws.getUserData().conn?.closed();
      },
    });
  };

  return {
    register,
    connections: () => [...live],
    async close(): Promise<void> {
      stopping = true;
      const all = [...live];
      for (const conn of all) conn.end(STREAM_CLOSE.goingAway, 'the server is stopping');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(all.map((c) => c.settled)),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, options.closeTimeoutMs ?? 5000);
          timer.unref?.();
        }),
      ]);
      clearTimeout(timer);
    },
  };
}
