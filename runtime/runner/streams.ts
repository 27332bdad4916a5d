/**
 * Driving one connection of a stream twin: the host holds the socket, the bytes and the
 * connection's state; each event runs the twin's stream handler in the sandbox like a route
 * (timed moves caught up first, writes committed as one entry before the answer goes out).
 * The guest keeps nothing between calls, so a restarted world loses only live connections.
 */
import { KitError } from '../errors.js';
import type { EntryDraft } from '../world/types.js';
import type { GuestOutput, ServedTwin } from './twins.js';
import type { StreamCall, StreamResult, StreamUntilBytes } from './types.js';

/** A connection's state crosses into the sandbox on every call: kept well under its memory cap. */
export const MAX_STREAM_STATE_BYTES = 16 * 1024 * 1024;
const CONN_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const EVENTS = new Set(['open', 'data', 'close']);

/** What the runner lends the stream module (kept narrow so the module cannot reach more). */
export interface StreamHost {
  readonly name: string;
  twin(vendor: string): ServedTwin;
  catchUp(twin: ServedTwin): number | Promise<number>;
  invoke(twin: ServedTwin, input: Record<string, unknown>): GuestOutput | Promise<GuestOutput>;
  append(twin: string, draft: EntryDraft): void;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const EMPTY = new Uint8Array(0);

function latin1(v: unknown, what: string): Uint8Array {
  if (v === undefined) return EMPTY;
  if (typeof v !== 'string') throw new KitError('handler_error', `The stream handler answered ${what} that is not a string.`);
  return new Uint8Array(Buffer.from(v, 'latin1'));
}

/** Checks a call from the host: the connection id and event are host-made, the rest is data. */
function checkCall(call: StreamCall): void {
  if (!isRecord(call)) throw new TypeError('streamCall: the call must be an object');
  if (typeof call.twin !== 'string' || call.twin === '') throw new TypeError('streamCall: twin must be a non-empty string');
  if (typeof call.connId !== 'string' || !CONN_ID.test(call.connId)) throw new TypeError(`streamCall: connId must match ${CONN_ID}`);
  if (!EVENTS.has(call.event)) throw new TypeError("streamCall: event must be 'open', 'data' or 'close'");
  if (call.bytes !== undefined && !(call.bytes instanceof Uint8Array)) throw new TypeError('streamCall: bytes must be a Uint8Array');
}

/**
 * Runs one stream event for a twin, up to the commit; answers whether it appended (the caller
 * waits for durability before the client hears anything).
 */
export async function runStreamCall(host: StreamHost, call: StreamCall): Promise<{ result: StreamResult; appended: boolean }> {
  checkCall(call);
  let twin: ServedTwin;
  try {
    twin = host.twin(call.twin);
  } catch {
    throw new KitError('unknown_stream', `This world has no stream '${call.twin}'.`);
  }
  if (twin.manifest.stream !== true) throw new KitError('unknown_stream', `Twin '${call.twin}' is not reached through a stream (its protocol is ${twin.manifest.protocol}).`);
  const stateJson = JSON.stringify(call.state ?? null);
  if (stateJson === undefined || stateJson.length > MAX_STREAM_STATE_BYTES) {
    throw new KitError('handler_error', `The connection's state is over ${MAX_STREAM_STATE_BYTES} bytes.`);
  }

  await host.catchUp(twin);
  const input: Record<string, unknown> = { kind: 'stream', event: call.event, connection: call.connId, state: call.state ?? null };
  if (call.event === 'data') input['bytes'] = call.bytes ? Buffer.from(call.bytes.buffer, call.bytes.byteOffset, call.bytes.byteLength).toString('latin1') : '';
  const out = await host.invoke(twin, input);
  if (out.thrown) {
    console.error(`twinkit: ${twin.vendor} stream.${call.event} threw: ${out.thrown.message}`);
    throw new KitError('handler_error', `The twin's stream handler failed: ${out.thrown.message}`);
  }

  // The guest runtime checked this shape, but twin code could have replaced `__kit_invoke`.
  const body = out.response?.body;
  if (!isRecord(body)) throw new KitError('handler_error', 'The stream handler answered no { send, close, state }.');
  if (body['close'] !== undefined && typeof body['close'] !== 'boolean') throw new KitError('handler_error', 'The stream handler answered a close that is not a boolean.');
  let until: StreamUntilBytes | null = null;
  const u = body['until'];
  if (u !== undefined && u !== null) {
    if (!isRecord(u)) throw new KitError('handler_error', 'The stream handler answered an until that is not an object.');
    const delimiter = latin1(u['delimiter'], 'an until.delimiter');
    if (delimiter.byteLength === 0 || delimiter.byteLength > 64) throw new KitError('handler_error', 'until.delimiter must be 1 to 64 bytes.');
    const tail = latin1(u['tail'], 'an until.tail');
    const max = u['max'];
    if (max !== undefined && (typeof max !== 'number' || !Number.isInteger(max) || max < 1)) throw new KitError('handler_error', 'until.max must be a positive integer.');
    until = { delimiter, tail: tail.byteLength > 64 ? tail.slice(-64) : tail, max: typeof max === 'number' ? max : null };
  }
  const state = body['state'] === undefined ? null : body['state'];
  const result: StreamResult = { send: latin1(body['send'], 'a send'), close: body['close'] === true, state, until };

  let appended = false;
  if (out.writes.length > 0 || out.events.length > 0) {
    const draft: EntryDraft = {
      cause: { kind: 'request', method: 'STREAM', route: `stream.${call.event}`, path: `/streams/${twin.vendor}`, status: 200, requestId: call.connId },
      writes: out.writes,
    };
    if (out.events.length > 0) draft.events = out.events;
    host.append(twin.vendor, draft);
    appended = true;
  }
  return { result, appended };
}
