/**
 * Caps the linear memories a core WebAssembly module defines, by rewriting its memory section
 * before it is compiled: each memory gets a maximum of at most `maxBytes`, so `memory.grow`
 * past it fails inside the guest (its allocator sees no memory) instead of taking the host's.
 * Imported memories are another module's, capped where they are defined. Pure (no Node API).
 */
import { KitError } from '../errors.js';

const PAGE = 65536;
const MEMORY_SECTION = 5;

function readU32(bytes: Uint8Array, at: number): { value: number; next: number } {
  let value = 0;
  let shift = 0;
  for (let i = at; i < bytes.length && i < at + 5; i++) {
    const b = bytes[i]!;
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if ((b & 0x80) === 0) return { value, next: i + 1 };
  }
  throw new KitError('invalid_twin', 'The component holds a core module that is not valid WebAssembly (a LEB128 number runs past its end).');
}

function writeU32(value: number): number[] {
  const out: number[] = [];
  do {
    let b = value & 0x7f;
    value = Math.floor(value / 128);
    if (value !== 0) b |= 0x80;
    out.push(b);
  } while (value !== 0);
  return out;
}

/**
 * `bytes` with every defined memory's maximum set to at most `maxBytes` (rounded down to pages).
 * A memory whose initial size is already above the cap is refused (KitError `invalid_twin`
 * naming `label`), as is a 64-bit memory.
 */
export function capDefinedMemories(bytes: Uint8Array, maxBytes: number, label: string): Uint8Array<ArrayBuffer> {
  const maxPages = Math.floor(maxBytes / PAGE);
  if (bytes.length < 8 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) {
    throw new KitError('invalid_twin', `${label}: a core module of the component is not WebAssembly.`);
  }
  const parts: Uint8Array[] = [bytes.subarray(0, 8)];
  let at = 8;
  while (at < bytes.length) {
    const id = bytes[at]!;
    const size = readU32(bytes, at + 1);
    const end = size.next + size.value;
    if (end > bytes.length) throw new KitError('invalid_twin', `${label}: a core module's section runs past its end.`);
    if (id !== MEMORY_SECTION) {
      parts.push(bytes.subarray(at, end));
      at = end;
      continue;
    }
    const count = readU32(bytes, size.next);
    const payload: number[] = [...writeU32(count.value)];
    let p = count.next;
    for (let i = 0; i < count.value; i++) {
      const flags = bytes[p]!;
      if ((flags & ~0x03) !== 0) throw new KitError('invalid_twin', `${label}: the component defines a memory kind the host does not cap (flags ${flags}: 64-bit or custom pages).`);
      const min = readU32(bytes, p + 1);
      p = min.next;
      let max = maxPages;
      if ((flags & 0x01) !== 0) {
        const declared = readU32(bytes, p);
        p = declared.next;
        max = Math.min(declared.value, maxPages);
      }
      if (min.value > maxPages) {
        throw new KitError('invalid_twin', `${label}: the component's memory starts at ${min.value * PAGE} bytes, above its cap of ${maxPages * PAGE} bytes.`);
      }
      payload.push(flags | 0x01, ...writeU32(min.value), ...writeU32(max));
    }
    if (p !== end) throw new KitError('invalid_twin', `${label}: a core module's memory section has bytes the host does not understand.`);
    parts.push(Uint8Array.of(MEMORY_SECTION, ...writeU32(payload.length), ...payload));
    at = end;
  }
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let o = 0;
  for (const part of parts) {
    out.set(part, o);
    o += part.length;
  }
  return out;
}
