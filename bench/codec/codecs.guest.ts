/**
 * The codec bench's guest script (bundled by run.ts with esbuild, loaded into QuickJS and into a
 * trusted V8 realm as twins are). It walks a clone's pack as the GitHub twin's `readPack` does —
 * each object's header, its zlib stream inflated, each whole object's git id hashed — with each
 * way of doing it, and parses a mail with each parser. The host times the calls.
 */
/// <reference path="./handwritten.d.ts" />
// The twins' own inflater and hashes before issue 37, from git history (run.ts, handwritten.d.ts).
import { inflate as handInflate } from 'handwritten:zlib';
import { sha1 as handSha1, sha256 as handSha256, hmacSha256 as handHmac } from 'handwritten:hash';
import { base64Decode, utf8Encode } from '../../twins/github/twin/lib/bytes.js';
import { parseMail as handParseMail } from '../../twins/smtp/twin/lib/mime.js';
import { Inflate } from 'pako';
import { unzlibSync } from 'fflate';
import { sha1 as nobleSha1 } from '@noble/hashes/legacy.js';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { hmac as nobleHmac } from '@noble/hashes/hmac.js';
import * as codec from '../../sdk/twin/codec.js';

type Variant = 'hand' | 'pako' | 'fflate' | 'host';
const g = globalThis as Record<string, unknown>;
let pack = new Uint8Array(0);
let mailBytes = new Uint8Array(0);
let mailText = '';
/** Each object's stream: where it starts, its inflated size, whether a delta; ends found by the first walk. */
let streams: { at: number; size: number; base: string | null }[] = [];
let ends: number[] = [];
let inflated: { type: string | null; data: Uint8Array }[] = [];

const TYPES: Record<number, string> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };

g.loadPack = (b64: string): string => {
  pack = base64Decode(b64) as Uint8Array<ArrayBuffer>;
  streams = [];
  let pos = 12;
  const count = new DataView(pack.buffer).getUint32(8);
  // Headers only; the stream lengths come from the first inflating walk.
  g.__count = count;
  return String(pack.length);
};

function pakoAt(data: Uint8Array, start: number, size: number): { data: Uint8Array; end: number } {
  const inf = new Inflate({ windowBits: 15, chunkSize: Math.max(64, size) });
  const chunks: Uint8Array[] = [];
  inf.onData = (c: Uint8Array) => { chunks.push(c); };
  inf.push(data.subarray(start), true);
  if (!inf.ended) throw new Error('pako: stream did not end');
  const left = (inf as unknown as { strm: { avail_in: number } }).strm.avail_in;
  const out = chunks.length === 1 ? chunks[0] as Uint8Array : (() => { let n = 0; for (const c of chunks) n += c.length; const o = new Uint8Array(n); let k = 0; for (const c of chunks) { o.set(c, k); k += c.length; } return o; })();
  return { data: out, end: data.length - left };
}

/** Inflates every object of the pack with `variant` (stage 1 of readPack). */
g.inflateAll = (variant: Variant): string => {
  const count = g.__count as number;
  inflated = [];
  let pos = 12, total = 0;
  const found: number[] = [];
  for (let i = 0; i < count; i++) {
    let b = pack[pos++] as number;
    const code = (b >> 4) & 7;
    let size = b & 15, shift = 4;
    while (b & 0x80) { b = pack[pos++] as number; size += (b & 0x7f) * 2 ** shift; shift += 7; }
    if (code === 6) { b = pack[pos++] as number; while (b & 0x80) b = pack[pos++] as number; }
    else if (code === 7) pos += 20;
    let r: { data: Uint8Array; end: number };
    if (variant === 'hand') r = handInflate(pack, pos, Math.max(size, 1));
    else if (variant === 'pako') r = pakoAt(pack, pos, Math.max(size, 1));
    else if (variant === 'fflate') {
      // fflate cannot say where a stream ends: it is given the end the other walks found.
      const end = ends[i] as number;
      r = { data: unzlibSync(pack.subarray(pos, end)), end };
    } else r = codec.inflateAt(pack, pos, { maxBytes: Math.max(size, 1) });
    if (r.data.length !== size) throw new Error(`object ${i}: ${r.data.length} bytes, expected ${size}`);
    total += size;
    inflated.push({ type: TYPES[code] ?? null, data: r.data });
    pos = r.end;
    found.push(pos);
  }
  if (variant !== 'fflate') ends = found;
  return `${count} objects, ${total} bytes inflated, ${pack.length - pos} bytes after`;
};

/** Hashes what `inflateAll` made as git ids (`<type> <size>\0` + content), and the whole pack once, with `variant`. */
g.hashAll = (variant: Variant): string => {
  const sha1 = variant === 'hand' ? handSha1 : variant === 'host' ? codec.sha1 : (...parts: Uint8Array[]) => {
    const h = nobleSha1.create();
    for (const p of parts) h.update(p);
    return h.digest();
  };
  let x = 0, hashed = 0;
  for (const o of inflated) {
    if (o.type === null) continue;
    const id = sha1(utf8Encode(`${o.type} ${o.data.length}\0`), o.data);
    x ^= id[0] as number;
    hashed += o.data.length;
  }
  const whole = sha1(pack.subarray(0, pack.length - 20));
  return `${hashed} bytes in objects, pack ${Array.from(whole.subarray(0, 4), (b: number) => b.toString(16).padStart(2, '0')).join('')} ${x}`;
};

g.loadMail = (latin1: string): string => {
  mailText = latin1;
  mailBytes = new Uint8Array(latin1.length);
  for (let i = 0; i < latin1.length; i++) mailBytes[i] = latin1.charCodeAt(i);
  return String(mailBytes.length);
};

/** SHA-256 and HMAC-SHA256 of the mail's bytes, `n` times. */
g.macMail = (variant: Variant): string => {
  const key = utf8Encode('whsec_a-webhook-secret');
  const s256 = variant === 'hand' ? handSha256 : variant === 'host' ? codec.sha256 : nobleSha256;
  const mac = variant === 'hand' ? handHmac : variant === 'host' ? codec.hmacSha256 : (k: Uint8Array, m: Uint8Array) => nobleHmac(nobleSha256, k, m);
  return `${s256(mailBytes)[0]} ${mac(key, mailBytes)[0]}`;
};

g.parseMailHand = (): string => {
  const m = handParseMail(mailText);
  return `${m.attachments.length} attachments, text ${m.text?.length ?? 0}, html ${m.html?.length ?? 0}, subject ${m.subject}`;
};

/** The cost of a crossing: `__host_bytes` sha1 of `n` bytes, `times` times (the host's own hashing is timed apart). */
g.cross = (arg: string): string => {
  const [n, times] = arg.split(',').map(Number) as [number, number];
  const data = pack.subarray(0, n);
  let x = 0;
  for (let i = 0; i < times; i++) x ^= codec.sha1(data)[0] as number;
  return String(x);
};
g.onHost = (): string => String(codec.codecOnHost);
