/**
 * Git's wire formats for smart HTTP: pkt-lines, packfiles (read, with ofs- and ref-deltas; and
 * written, undeltified with stored zlib streams), and the raw object encodings.
 */
import { concat, hex, utf8Decode, utf8Encode } from './bytes.js';
import { sha1 } from './hash.js';
import { InflateError, deflateStored, inflate } from './zlib.js';

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

export function writePack(objects: { type: RawType; content: Uint8Array }[]): Uint8Array {
  const parts: Uint8Array[] = [];
  const head = new Uint8Array(12);
  head.set(utf8Encode('PACK'));
  const dv = new DataView(head.buffer);
  dv.setUint32(4, 2);
  dv.setUint32(8, objects.length);
  parts.push(head);
  for (const o of objects) {
    let size = o.content.length;
    const header: number[] = [];
    let byte = (TYPE_CODE[o.type] << 4) | (size & 15);
    size = Math.floor(size / 16);
    while (size > 0) {
      header.push(byte | 0x80);
      byte = size & 0x7f;
      size = Math.floor(size / 128);
    }
    header.push(byte);
    parts.push(Uint8Array.from(header), deflateStored(o.content));
  }
  const body = concat(parts);
  return concat([body, sha1(body)]);
}

/**
 * What one push may make the twin inflate. The world ends a handler that runs past 5 s, so a
 * pack of a few kilobytes that inflates to gigabytes (a decompression bomb) must be refused
 * before the work is done, not after: a base object is refused on the size its header declares
 * (and may not inflate past it), a delta's result on the size the delta declares.
 *
 * Measured in V8 (the engine built-in twins run in): a push inflates, hashes and stores about
 * 25 ms per MiB (zeros) to 40 ms per MiB (incompressible, counting its wire bytes' checksum), so
 * the worst push these limits allow takes about a quarter of a second. QuickJS runs the same
 * code about 20× slower (0.5–1 s per MiB); there the call's step budget stops a push past about
 * 4 MiB of zeros or 2 MiB of incompressible data first, with a 500 the world survives. The
 * object count stays under the world's 10 000 writes per request. twins/github/README.md has
 * the numbers.
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
