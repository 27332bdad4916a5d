/**
 * `nodeHostBytes`: the hashing and compression a guest reaches through `__host_bytes`, run by
 * `node:crypto` and `node:zlib` (workerd's `nodejs_compat` has both). The twin SDK's codec
 * (sdk/twin/codec.ts) calls it and falls back to JavaScript where no host offers it. Measured
 * (bench/codec, bench/README.md "Codecs"): QuickJS inflates and hashes a clone's objects one to
 * two orders of magnitude slower than this, and V8 several times slower.
 *
 * Ops (`arg`, inputs → answer):
 * - `sha1`, `sha256` (0, ...parts → digest of their concatenation)
 * - `hmac-sha256` (0, key, message → MAC)
 * - `inflate` (maxBytes, data → [bytes, bytes of `data` read]): one zlib stream at the start of
 *   `data`, which may go on past it (a pack's streams are back to back)
 * - `inflate-raw`, `gunzip` (maxBytes, data → bytes)
 * - `deflate` (level 0–9, data → a zlib stream)
 *
 * Errors carry a `code` the SDK maps to its CodecError: `bad_data` (corrupt or truncated input),
 * `too_large` (the output would pass maxBytes), `bad_op` (an op or arg this host does not take).
 */
import { createHash, createHmac } from 'node:crypto';
import { deflateSync, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import type { HostBytes } from './sandbox.js';

/** The most a guest may ask one call to inflate: the guest's own memory is smaller than this anyway. */
const MAX_INFLATE_BYTES = 256 * 1024 * 1024;

function codecError(code: 'bad_data' | 'too_large' | 'bad_op', message: string): Error {
  return Object.assign(new Error(message), { code });
}

function maxBytesOf(arg: number): number {
  if (!Number.isSafeInteger(arg) || arg < 1 || arg > MAX_INFLATE_BYTES) throw codecError('bad_op', `maxBytes must be an integer from 1 to ${MAX_INFLATE_BYTES}, got ${arg}`);
  return arg;
}

/** A zlib failure as the guest sees it; an output over the cap is `too_large`. */
function zlibFailure(e: unknown, maxBytes: number): Error {
  const code = (e as { code?: unknown } | null)?.code;
  if (code === 'ERR_BUFFER_TOO_LARGE') return codecError('too_large', `the data inflates to more than ${maxBytes} bytes`);
  return codecError('bad_data', `bad compressed data: ${e instanceof Error ? e.message : String(e)}`);
}

function one(inputs: Uint8Array[], op: string): Uint8Array {
  if (inputs.length !== 1) throw codecError('bad_op', `${op} takes one input, got ${inputs.length}`);
  return inputs[0] as Uint8Array;
}

/** A Buffer as a plain Uint8Array over the same memory (a guest realm wraps it again). */
function plain(b: Buffer): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

export const nodeHostBytes: HostBytes = (op, arg, inputs) => {
  switch (op) {
    case 'sha1':
    case 'sha256': {
      const hash = createHash(op);
      for (const part of inputs) hash.update(part);
      return plain(hash.digest());
    }
    case 'hmac-sha256': {
      if (inputs.length !== 2) throw codecError('bad_op', `hmac-sha256 takes a key and a message, got ${inputs.length} inputs`);
      return plain(createHmac('sha256', inputs[0] as Uint8Array).update(inputs[1] as Uint8Array).digest());
    }
    case 'inflate': {
      const maxBytes = maxBytesOf(arg);
      const data = one(inputs, op);
      let result: { buffer: Buffer; engine: { bytesWritten: number } };
      try {
        result = inflateSync(data, { info: true, maxOutputLength: maxBytes }) as unknown as typeof result;
      } catch (e) {
        throw zlibFailure(e, maxBytes);
      }
      return [plain(result.buffer), result.engine.bytesWritten];
    }
    case 'inflate-raw':
    case 'gunzip': {
      const maxBytes = maxBytesOf(arg);
      const data = one(inputs, op);
      try {
        return plain(op === 'gunzip' ? gunzipSync(data, { maxOutputLength: maxBytes }) : inflateRawSync(data, { maxOutputLength: maxBytes }));
      } catch (e) {
        throw zlibFailure(e, maxBytes);
      }
    }
    case 'deflate': {
      if (!Number.isInteger(arg) || arg < 0 || arg > 9) throw codecError('bad_op', `deflate's level must be 0 to 9, got ${arg}`);
      return plain(deflateSync(one(inputs, op), { level: arg }));
    }
    default:
      throw codecError('bad_op', `unknown op '${op.slice(0, 100)}'`);
  }
};
