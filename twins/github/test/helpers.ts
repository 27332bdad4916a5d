import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { RequestError } from '@octokit/request-error';

/** The RequestError a call fails with (the test fails if it succeeds). */
export async function failure(p: Promise<unknown>): Promise<RequestError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof RequestError) return e;
    throw e;
  }
  throw new Error('expected the request to fail');
}

export const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
export const unb64 = (text: string): string => Buffer.from(text, 'base64').toString('utf8');

// ------------------------------------------------------------------ packs, as git writes them (and as an attacker might)

/** A pack entry: a whole object (type 1–3), an ofs-delta on the entry `rel` entries back (6) or a ref-delta on `base` (7). */
export type Entry = { type: number; content: Buffer; z?: Buffer; rel?: number; base?: string };

/** A pack of `entries`, written the way git writes one (level-9 zlib), with its checksum. */
export function pack(entries: Entry[]): Buffer {
  const head = Buffer.alloc(12);
  head.write('PACK');
  head.writeUInt32BE(2, 4);
  head.writeUInt32BE(entries.length, 8);
  const parts: Buffer[] = [head];
  const offsets: number[] = [];
  let at = 12;
  entries.forEach((e, i) => {
    offsets.push(at);
    let size = e.content.length;
    const h: number[] = [];
    let byte = (e.type << 4) | (size & 15);
    size = Math.floor(size / 16);
    while (size > 0) {
      h.push(byte | 0x80);
      byte = size & 0x7f;
      size = Math.floor(size / 128);
    }
    h.push(byte);
    if (e.type === 6) {
      // The base is the entry before this one unless `rel` says how many back (0 = the previous).
      let rel = at - (offsets[i - 1 - (e.rel ?? 0)] as number);
      const bytes = [rel & 0x7f];
      while ((rel >>= 7) > 0) bytes.unshift(0x80 | (--rel & 0x7f));
      h.push(...bytes);
    } else if (e.type === 7) h.push(...Buffer.from(e.base as string, 'hex'));
    const chunk = Buffer.concat([Buffer.from(h), e.z ?? deflateSync(e.content, { level: 9 })]);
    parts.push(chunk);
    at += chunk.length;
  });
  const body = Buffer.concat(parts);
  return Buffer.concat([body, createHash('sha1').update(body).digest()]);
}

function varint(n: number): number[] {
  const out: number[] = [];
  do {
    out.push((n & 0x7f) | (n >= 0x80 ? 0x80 : 0));
    n = Math.floor(n / 128);
  } while (n > 0);
  return out;
}

/** A git delta: base size, result size, then copy and insert ops. */
export function delta(baseSize: number, resultSize: number, ops: Buffer[]): Buffer {
  return Buffer.concat([Buffer.from([...varint(baseSize), ...varint(resultSize)]), ...ops]);
}

/** A delta copy op (offset and length under 64 KiB). */
export function copy(offset: number, length: number): Buffer {
  return Buffer.from([0x80 | 0x01 | 0x02 | 0x10 | 0x20, offset & 0xff, offset >> 8, length & 0xff, length >> 8]);
}
