/**
 * Git's wire formats for smart HTTP: pkt-lines, packfiles (read, with ofs- and ref-deltas; and
 * written, undeltified with stored zlib streams), and the raw object encodings.
 */
import { base64Encode, concat, hex, utf8Decode, utf8Encode } from './bytes.js';
import { sha1 } from '../../../../sdk/twin/codec.js';
import { InflateError, adler32, inflate, storedInto, storedSize } from './zlib.js';

export class PackError extends Error {}

// ------------------------------------------------------------------ pkt-lines

export function pkt(text: string | Uint8Array): Uint8Array {
  const body = typeof text === 'string' ? utf8Encode(text) : text;
  if (body.length > 65516) throw new PackError('pkt-line too long');
  return concat([utf8Encode((body.length + 4).toString(16).padStart(4, '0')), body]);
}

export const FLUSH = utf8Encode('0000');

/** Reads pkt-lines from `start` until a flush (or the end); `null` stands for a flush. */
export function readPktLines(data: Uint8Array, start = 0, stopAtFlush = true): { lines: (string | null)[]; end: number } {
  const lines: (string | null)[] = [];
  let pos = start;
  while (pos + 4 <= data.length) {
    const lenText = utf8Decode(data.subarray(pos, pos + 4));
    if (!/^[0-9a-f]{4}$/.test(lenText)) throw new PackError('bad pkt-line length');
    const len = parseInt(lenText, 16);
    if (len === 0) {
      pos += 4;
      lines.push(null);
      if (stopAtFlush) break;
      continue;
    }
    if (len < 4 || pos + len > data.length) throw new PackError('truncated pkt-line');
    lines.push(utf8Decode(data.subarray(pos + 4, pos + len)));
    pos += len;
  }
  return { lines, end: pos };
}

// ------------------------------------------------------------------ packs

export type RawType = 'commit' | 'tree' | 'blob' | 'tag';
const TYPE_CODE: Record<RawType, number> = { commit: 1, tree: 2, blob: 3, tag: 4 };
const CODE_TYPE: Record<number, RawType> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };

export interface RawObject { type: RawType; content: Uint8Array; sha: string }

export function rawId(type: RawType, content: Uint8Array): string {
  return hex(sha1(utf8Encode(`${type} ${content.length}\0`), content));
}

/** An object for a pack; a blob may bring `b64`, its content's base64 as stored (no whitespace). */
export interface PackObject { type: RawType; content: Uint8Array; b64?: string }

/** A piece of a written pack: bytes, and for a run of a blob given with `b64`, those bytes' base64. */
interface PackPiece { bytes: Uint8Array; b64?: string }

/** Blobs smaller than this are written out whole: a piece of their own would cost more than it saves. */
const SPLICE_MIN = 1024;
/** A non-final stored block of no bytes: inflate skips it, and it moves what follows by 5 bytes. */
const EMPTY_BLOCK = [0, 0, 0, 0xff, 0xff];

function objectHeader(type: RawType, size: number): Uint8Array {
  const header: number[] = [];
  let byte = (TYPE_CODE[type] << 4) | (size & 15);
  size = Math.floor(size / 16);
  while (size > 0) {
    header.push(byte | 0x80);
    byte = size & 0x7f;
    size = Math.floor(size / 128);
  }
  header.push(byte);
  return Uint8Array.from(header);
}

/**
 * A pack of `objects` (undeltified, each in stored zlib blocks) after the bytes `before`, as
 * pieces whose bytes, joined, are the answer. An upload-pack answer leaves the twin as base64,
 * and a blob is stored as base64: so each stored block of a blob given with `b64` is placed
 * where the answer's base64 is on a 3-byte boundary (empty stored blocks move it there), and its
 * base64 is then a slice of the stored text instead of megabytes encoded again. The bytes are
 * still read once, for the adler-32 of each stream and the pack's SHA-1.
 */
function packPieces(objects: PackObject[], before: Uint8Array): PackPiece[] {
  const spliced = (o: PackObject): o is PackObject & { b64: string } => o.b64 !== undefined && o.content.length >= SPLICE_MIN;
  const headers = objects.map((o) => objectHeader(o.type, o.content.length));
  // Everything but the blob runs goes through `frame`: per spliced block at most two empty
  // blocks, its header and two bytes of the blob that are not a whole base64 group.
  let bound = before.length + 12 + 20;
  objects.forEach((o, i) => {
    const blocks = Math.max(1, Math.ceil(o.content.length / 65535));
    bound += (headers[i] as Uint8Array).length + (spliced(o) ? 2 + blocks * 17 + 4 : storedSize(o.content.length));
  });
  const frame = new Uint8Array(bound);
  const pieces: PackPiece[] = [];
  let f = 0, from = 0, done = 0;
  /** Ends the bytes framed so far as a piece (before a run, and at the end). */
  const close = (): void => {
    if (f > from) pieces.push({ bytes: frame.subarray(from, f) });
    done += f - from;
    from = f;
  };
  frame.set(before);
  f = before.length;
  frame.set(utf8Encode('PACK'), f);
  const dv = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  dv.setUint32(f + 4, 2);
  dv.setUint32(f + 8, objects.length);
  f += 12;
  objects.forEach((o, i) => {
    const header = headers[i] as Uint8Array;
    frame.set(header, f);
    f += header.length;
    if (!spliced(o)) {
      f = storedInto(frame, f, o.content);
      return;
    }
    const data = o.content;
    frame[f++] = 0x78;
    frame[f++] = 0x01;
    const blocks = Math.max(1, Math.ceil(data.length / 65535));
    for (let b = 0; b < blocks; b++) {
      // 65535 is a multiple of 3: every block starts on a whole base64 group of the blob.
      const at = b * 65535, size = Math.min(data.length - at, 65535);
      while ((done + f - from + 5) % 3 !== 0) {
        frame.set(EMPTY_BLOCK, f);
        f += 5;
      }
      frame[f++] = b === blocks - 1 ? 1 : 0;
      frame[f++] = size & 0xff;
      frame[f++] = size >> 8;
      frame[f++] = ~size & 0xff;
      frame[f++] = (~size >> 8) & 0xff;
      const run = size - (size % 3);
      if (run > 0) {
        close();
        pieces.push({ bytes: data.subarray(at, at + run), b64: o.b64.slice((at / 3) * 4, ((at + run) / 3) * 4) });
        done += run;
      }
      frame.set(data.subarray(at + run, at + size), f);
      f += size - run;
    }
    const a = adler32(data);
    frame[f++] = a >>> 24;
    frame[f++] = (a >>> 16) & 0xff;
    frame[f++] = (a >>> 8) & 0xff;
    frame[f++] = a & 0xff;
  });
  // The pack's checksum covers the pack, not `before` (which opens the first piece, framed).
  const hashed = [...pieces.map((p) => p.bytes), frame.subarray(from, f)];
  hashed[0] = (hashed[0] as Uint8Array).subarray(before.length);
  frame.set(sha1(...hashed), f);
  f += 20;
  close();
  return pieces;
}

/** A pack of `objects` (undeltified, stored zlib streams) after the bytes `before`. */
export function writePack(objects: PackObject[], before: Uint8Array = new Uint8Array(0)): Uint8Array {
  return concat(packPieces(objects, before).map((p) => p.bytes));
}

/**
 * `writePack`'s bytes as base64, as an upload-pack answer leaves the twin: the runs of blobs
 * given with `b64` are copied from it (a clone's megabytes are not encoded again).
 */
export function writePackBase64(objects: PackObject[], before: Uint8Array = new Uint8Array(0)): string {
  return packPieces(objects, before).map((p) => p.b64 ?? base64Encode(p.bytes)).join('');
}

/**
 * What one push may make the twin inflate. The world ends a handler that runs past 5 s, so a
 * pack of a few kilobytes that inflates to gigabytes (a decompression bomb) must be refused
 * before the work is done, not after: a base object is refused on the size its header declares
 * (and may not inflate past it), a delta's result on the size the delta declares.
 *
 * Measured in V8 (the engine built-in twins run in), when the twin inflated and hashed in
 * JavaScript: a push inflated, hashed and stored about 25 ms per MiB (zeros) to 40 ms per MiB
 * (incompressible, counting its wire bytes' checksum), so the worst push these limits allow
 * took about a quarter of a second. Inflating and hashing are now the SDK's codec, which the
 * host runs natively (bench/README.md, "Codecs": 2.2× faster in V8, 16–47× in QuickJS on a
 * clone's pack); the limits stay, as they also bound what is stored. The object count stays
 * under the world's 10 000 writes per request. twins/github/README.md has the numbers.
 */
export const PACK_LIMITS: PackLimits = Object.freeze({ objectBytes: 4 * 1024 * 1024, totalBytes: 8 * 1024 * 1024, objects: 8_000 });

export interface PackLimits {
  /** Inflated bytes of one object (a blob, a tree, a commit, or a delta's result or data). */
  readonly objectBytes: number;
  /** Inflated bytes of every object and delta of one pack together. */
  readonly totalBytes: number;
  /** Objects in one pack. */
  readonly objects: number;
}

/** Applies a git delta to its base; a result declared over `maxSize` is refused before it is built. */
export function applyDelta(base: Uint8Array, delta: Uint8Array, maxSize = PACK_LIMITS.objectBytes): Uint8Array {
  let pos = 0;
  const varint = (): number => {
    let result = 0, shift = 0, b: number;
    do {
      if (pos >= delta.length) throw new PackError('truncated delta');
      b = delta[pos++] as number;
      result += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b & 0x80);
    return result;
  };
  if (varint() !== base.length) throw new PackError('delta base size mismatch');
  const size = varint();
  if (size > maxSize) throw new PackError(`an object of ${size} bytes (from a delta) is over the limit of ${maxSize} bytes`);
  const out = new Uint8Array(size);
  let o = 0;
  while (pos < delta.length) {
    const op = delta[pos++] as number;
    if (op & 0x80) {
      let off = 0, len = 0;
      for (let i = 0; i < 4; i++) if (op & (1 << i)) off += (delta[pos++] as number) * 2 ** (8 * i);
      for (let i = 0; i < 3; i++) if (op & (16 << i)) len += (delta[pos++] as number) * 2 ** (8 * i);
      if (len === 0) len = 0x10000;
      if (off + len > base.length || o + len > size) throw new PackError('delta copy out of range');
      out.set(base.subarray(off, off + len), o);
      o += len;
    } else if (op > 0) {
      if (pos + op > delta.length || o + op > size) throw new PackError('delta insert out of range');
      out.set(delta.subarray(pos, pos + op), o);
      o += op;
      pos += op;
    } else throw new PackError('reserved delta opcode');
  }
  if (o !== size) throw new PackError('delta result size mismatch');
  return out;
}

/**
 * Reads a pack. `lookup` finds a ref-delta base that is not in the pack (a thin pack).
 * Checks the trailing checksum; answers every object with its id. Over `limits` is a PackError
 * before the inflating, with nothing built.
 */
export function readPack(data: Uint8Array, lookup: (sha: string) => { type: RawType; content: Uint8Array } | undefined, limits: PackLimits = PACK_LIMITS): RawObject[] {
  if (data.length < 32 || utf8Decode(data.subarray(0, 4)) !== 'PACK') throw new PackError('not a pack');
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const version = dv.getUint32(4);
  if (version !== 2 && version !== 3) throw new PackError(`unsupported pack version ${version}`);
  const count = dv.getUint32(8);
  if (count > limits.objects) throw new PackError(`the pack has ${count} objects, over the limit of ${limits.objects}`);
  if (hex(sha1(data.subarray(0, data.length - 20))) !== hex(data.subarray(data.length - 20))) throw new PackError('pack checksum mismatch');
  let budget = limits.totalBytes;
  /** Takes `size` inflated bytes from the push's budget, or refuses the pack. */
  const take = (size: number, what: string): void => {
    if (size > limits.objectBytes) throw new PackError(`${what} of ${size} bytes is over the limit of ${limits.objectBytes} bytes per object`);
    if (size > budget) throw new PackError(`the pack inflates to more than ${limits.totalBytes} bytes, the limit per push`);
    budget -= size;
  };
  const byOffset = new Map<number, RawObject>();
  interface Pending { offset: number; delta: Uint8Array }
  /** Deltas by what they wait for: `o<offset>` (ofs-delta) or `r<sha>` (ref-delta). */
  const waiting = new Map<string, Pending[]>();
  const wait = (key: string, p: Pending): void => {
    const list = waiting.get(key);
    if (list === undefined) waiting.set(key, [p]);
    else list.push(p);
  };
  let pendingCount = 0;
  const ready: { offset: number; o: RawObject }[] = [];
  let pos = 12;
  const end = data.length - 20;
  try {
    for (let i = 0; i < count; i++) {
      const offset = pos;
      if (pos >= end) throw new PackError('truncated pack');
      let b = data[pos++] as number;
      const code = (b >> 4) & 7;
      let size = b & 15, shift = 4;
      while (b & 0x80) {
        if (pos >= end) throw new PackError('truncated pack');
        b = data[pos++] as number;
        size += (b & 0x7f) * 2 ** shift;
        shift += 7;
      }
      if (code === 6 || code === 7) {
        let key: string;
        if (code === 6) {
          b = data[pos++] as number;
          let rel = b & 0x7f;
          while (b & 0x80) {
            b = data[pos++] as number;
            rel = (rel + 1) * 128 + (b & 0x7f);
          }
          if (rel <= 0 || rel > offset) throw new PackError('bad delta base offset');
          key = `o${offset - rel}`;
        } else {
          if (pos + 20 > end) throw new PackError('truncated pack');
          key = `r${hex(data.subarray(pos, pos + 20))}`;
          pos += 20;
        }
        take(size, 'a delta');
        const z = inflate(data, pos, Math.max(size, 1));
        pos = z.end;
        if (z.data.length !== size) throw new PackError('delta size mismatch');
        wait(key, { offset, delta: z.data });
        pendingCount++;
      } else {
        const type = CODE_TYPE[code];
        if (type === undefined) throw new PackError(`bad object type ${code}`);
        take(size, `a ${type}`);
        const z = inflate(data, pos, Math.max(size, 1));
        pos = z.end;
        if (z.data.length !== size) throw new PackError('object size mismatch');
        const o: RawObject = { type, content: z.data, sha: rawId(type, z.data) };
        byOffset.set(offset, o);
        ready.push({ offset, o });
      }
    }
  } catch (e) {
    if (e instanceof InflateError) throw new PackError(`bad compressed data: ${e.message}`);
    throw e;
  }
  if (pos !== end) throw new PackError('trailing data in pack');
  // Deltas resolve from their bases outwards: each object made releases what waits for it, so
  // the work is linear in the deltas whatever their order. A ref-delta's base missing from the
  // pack is looked up once among the stored objects (a thin pack).
  const resolve = (base: RawObject, list: Pending[] | undefined): void => {
    for (const p of list ?? []) {
      const declared = resultSize(p.delta);
      take(declared, `a ${base.type}`);
      const content = applyDelta(base.content, p.delta, declared);
      const o: RawObject = { type: base.type, content, sha: rawId(base.type, content) };
      byOffset.set(p.offset, o);
      ready.push({ offset: p.offset, o });
      pendingCount--;
    }
  };
  const drain = (): void => {
    while (ready.length > 0) {
      const { offset, o } = ready.pop() as { offset: number; o: RawObject };
      const byOfs = waiting.get(`o${offset}`), byRef = waiting.get(`r${o.sha}`);
      waiting.delete(`o${offset}`);
      waiting.delete(`r${o.sha}`);
      resolve(o, byOfs);
      resolve(o, byRef);
    }
  };
  drain();
  if (pendingCount > 0) {
    // What still waits needs a base from outside the pack: each is looked up once.
    for (const key of [...waiting.keys()]) {
      const stored = key.startsWith('r') && waiting.has(key) ? lookup(key.slice(1)) : undefined;
      if (stored === undefined) continue;
      const list = waiting.get(key);
      waiting.delete(key);
      resolve({ ...stored, sha: key.slice(1) }, list);
    }
    drain();
  }
  if (pendingCount > 0) throw new PackError('delta base missing');
  return [...byOffset.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]);
}

/** The result size a git delta declares (its second varint), read before anything is built. */
function resultSize(delta: Uint8Array): number {
  let pos = 0;
  const varint = (): number => {
    let result = 0, shift = 0, b: number;
    do {
      if (pos >= delta.length || shift > 49) throw new PackError('truncated delta');
      b = delta[pos++] as number;
      result += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b & 0x80);
    return result;
  };
  varint();
  return varint();
}
