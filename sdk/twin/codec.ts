/**
 * Hashing and compression for twin code: `sha1`, `sha256`, `hmacSha256`, `inflate`, `inflateAt`,
 * `gunzip`, `deflate`. Where the host offers them (`__host_bytes`: the runner's QuickJS lanes and
 * trusted V8 realms on Node, runtime/sandbox/host-bytes-node.ts) they run natively in the host;
 * elsewhere (the `node:vm` guest harness, an engine given no host bytes) in JavaScript bundled
 * with the twin: @noble/hashes and pako. Both give the same bytes and the same errors. Measured
 * in bench/codec (bench/README.md, "Codecs"): the host's is far faster in QuickJS and faster in V8
 * for everything but the tiniest inputs.
 *
 * Runs inside the sandbox: no Node API.
 */
import { sha1 as nobleSha1 } from '@noble/hashes/legacy.js';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { hmac as nobleHmac } from '@noble/hashes/hmac.js';
import { Inflate, deflate as pakoDeflate } from 'pako';

/** `bad_data`: corrupt, truncated or not the format; `too_large`: the output would pass `maxBytes`. */
export type CodecErrorCode = 'bad_data' | 'too_large';

export class CodecError extends Error {
  readonly code: CodecErrorCode;
  constructor(code: CodecErrorCode, message: string) {
    super(message);
    this.name = 'CodecError';
    this.code = code;
  }
}

export interface InflateOptions {
  /** The most bytes the data may inflate to; past it a CodecError `too_large` (default 64 MiB). */
  maxBytes?: number;
}

type HostBytes = (op: string, arg: number, ...inputs: Uint8Array[]) => Uint8Array | { bytes: Uint8Array; n: number };

const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
/** The host refuses more per call; a guest's own memory is smaller anyway. */
const MAX_BYTES_CAP = 256 * 1024 * 1024;

/** The host's byte functions, read once: they are installed before a twin's bundle runs. */
const host = (globalThis as { __host_bytes?: HostBytes }).__host_bytes;

/** True where the host runs these natively (else they run in JavaScript in this context). */
export const codecOnHost: boolean = typeof host === 'function';

/** A host failure as the SDK's error: the host names it with a `code`. */
function hostCall(op: string, arg: number, inputs: Uint8Array[]): Uint8Array | { bytes: Uint8Array; n: number } {
  try {
    return (host as HostBytes)(op, arg, ...inputs);
  } catch (e) {
    const code = (e as { code?: unknown } | null)?.code;
    const message = e instanceof Error ? e.message : String(e);
    if (code === 'too_large' || code === 'bad_data') throw new CodecError(code, message);
    throw e;
  }
}

function bytesOf(answer: Uint8Array | { bytes: Uint8Array; n: number }): Uint8Array {
  return answer instanceof Uint8Array ? answer : answer.bytes;
}

function checkBytes(value: unknown, what: string): asserts value is Uint8Array {
  // Any realm's Uint8Array: a trusted realm's host answers are of the host's.
  if (!ArrayBuffer.isView(value) || Object.prototype.toString.call(value) !== '[object Uint8Array]') throw new TypeError(`${what} must be a Uint8Array`);
}

function maxBytesOf(options: InflateOptions | undefined): number {
  const max = options?.maxBytes ?? DEFAULT_MAX_BYTES;
  if (!Number.isSafeInteger(max) || max < 1 || max > MAX_BYTES_CAP) throw new TypeError(`maxBytes must be an integer from 1 to ${MAX_BYTES_CAP}`);
  return max;
}

/** One buffer of `parts` for the JavaScript hashes (no copy for one part). */
function joined(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0] as Uint8Array;
  let size = 0;
  for (const p of parts) size += p.length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Parts as they go to the host: each is an argument of one call, so many small ones (a pack's
 * pieces) are joined first rather than spread past an engine's argument limit.
 */
const MAX_PARTS_PER_CALL = 64;
function crossing(parts: Uint8Array[]): Uint8Array[] {
  return parts.length > MAX_PARTS_PER_CALL ? [joined(parts)] : parts;
}

/** SHA-1 of the concatenation of `parts` (a git object id hashes its header and content), 20 bytes. */
export function sha1(...parts: Uint8Array[]): Uint8Array {
  parts.forEach((p, i) => checkBytes(p, `sha1: part ${i}`));
  if (host !== undefined) return bytesOf(hostCall('sha1', 0, crossing(parts)));
  if (parts.length === 1) return nobleSha1(parts[0] as Uint8Array);
  const h = nobleSha1.create();
  for (const p of parts) h.update(p);
  return h.digest();
}

/** SHA-256 of the concatenation of `parts`, 32 bytes. */
export function sha256(...parts: Uint8Array[]): Uint8Array {
  parts.forEach((p, i) => checkBytes(p, `sha256: part ${i}`));
  if (host !== undefined) return bytesOf(hostCall('sha256', 0, crossing(parts)));
  return nobleSha256(joined(parts));
}

/** HMAC-SHA256 of `message` under `key`, 32 bytes. */
export function hmacSha256(key: Uint8Array, message: Uint8Array): Uint8Array {
  checkBytes(key, 'hmacSha256: key');
  checkBytes(message, 'hmacSha256: message');
  if (host !== undefined) return bytesOf(hostCall('hmac-sha256', 0, [key, message]));
  return nobleHmac(nobleSha256, key, message);
}

/**
 * How many bytes a zlib stream of `size` inflated bytes takes at most as zlib writes it
 * (`deflateBound`), with room for other writers' framing: the window `inflateAt` first hands
 * the host, so a pack's megabytes do not cross for each of its objects.
 */
function likelyBound(size: number): number {
  return size + (size >>> 12) + (size >>> 14) + (size >>> 25) + 64;
}

/** pako's window bits for a zlib stream and for a gzip member. */
const ZLIB_BITS = 15;
const GZIP_BITS = 16 + 15;

/**
 * The JavaScript inflater: pako, whose stream says where the data ended. Output is counted as it
 * comes, so a bomb stops at `maxBytes`; a first chunk of about `maxBytes` (a pack's declared
 * size) makes one allocation for most objects.
 */
function pakoInflate(data: Uint8Array, windowBits: number, maxBytes: number): { data: Uint8Array; end: number } {
  const inflater = new Inflate({ windowBits, chunkSize: Math.max(64, Math.min(maxBytes, 1 << 20)) });
  let total = 0;
  const chunks: Uint8Array[] = [];
  inflater.onData = (chunk: Uint8Array) => {
    total += chunk.length;
    if (total > maxBytes) throw new CodecError('too_large', `the data inflates to more than ${maxBytes} bytes`);
    chunks.push(chunk);
  };
  inflater.push(data, true);
  if (inflater.err !== 0) throw new CodecError('bad_data', `bad compressed data: ${inflater.msg || 'error ' + String(inflater.err)}`);
  if (!inflater.ended) throw new CodecError('bad_data', 'bad compressed data: unexpected end of file');
  const left = (inflater as unknown as { strm: { avail_in: number } }).strm.avail_in;
  return { data: chunks.length === 0 ? new Uint8Array(0) : joined(chunks), end: data.length - left };
}

/** Inflates a whole zlib stream (what follows its end is ignored). */
export function inflate(data: Uint8Array, options?: InflateOptions): Uint8Array {
  return inflateAt(data, 0, options).data;
}

/**
 * Inflates the zlib stream that starts at `start` of `data` and answers its bytes and the offset
 * just after it (its checksum included): a git pack puts streams back to back and says only
 * how large each one inflates. Pass that size as `maxBytes`: the host is then handed a window
 * of about that many bytes rather than the rest of the pack (and the whole rest only when a
 * stream is framed more loosely than zlib writes it).
 */
export function inflateAt(data: Uint8Array, start: number, options?: InflateOptions): { data: Uint8Array; end: number } {
  checkBytes(data, 'inflateAt: data');
  if (!Number.isSafeInteger(start) || start < 0 || start > data.length) throw new TypeError(`inflateAt: start must be an offset in the data, got ${start}`);
  const maxBytes = maxBytesOf(options);
  if (host === undefined) {
    const r = pakoInflate(data.subarray(start), ZLIB_BITS, maxBytes);
    return { data: r.data, end: start + r.end };
  }
  const window = Math.min(data.length, start + likelyBound(maxBytes));
  let answer: { bytes: Uint8Array; n: number };
  try {
    answer = hostCall('inflate', maxBytes, [data.subarray(start, window)]) as { bytes: Uint8Array; n: number };
  } catch (e) {
    // A stream longer than the window: once more with everything after `start`.
    if (!(e instanceof CodecError) || e.code !== 'bad_data' || window === data.length) throw e;
    answer = hostCall('inflate', maxBytes, [data.subarray(start)]) as { bytes: Uint8Array; n: number };
  }
  return { data: answer.bytes, end: start + answer.n };
}

/** Inflates a gzip member (as git sends a large request with `Content-Encoding: gzip`). */
export function gunzip(data: Uint8Array, options?: InflateOptions): Uint8Array {
  checkBytes(data, 'gunzip: data');
  const maxBytes = maxBytesOf(options);
  if (host !== undefined) return bytesOf(hostCall('gunzip', maxBytes, [data]));
  return pakoInflate(data, GZIP_BITS, maxBytes).data;
}

/** A zlib stream of `data` at `level` (0, stored, to 9; default 6). */
export function deflate(data: Uint8Array, options?: { level?: number }): Uint8Array {
  checkBytes(data, 'deflate: data');
  const level = options?.level ?? 6;
  if (!Number.isInteger(level) || level < 0 || level > 9) throw new TypeError(`deflate: level must be 0 to 9, got ${level}`);
  if (host !== undefined) return bytesOf(hostCall('deflate', level, [data]));
  return pakoDeflate(data, { level: level as 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 });
}
