import { describe, expect, it } from 'vitest';
import { capDefinedMemories } from './core-memory.js';

/** A module exporting one memory of `min` pages (and `max`, when given) as `mem`. */
function memoryModule(min: number, max?: number): Uint8Array {
  const limits = max === undefined ? [0x00, min] : [0x01, min, max];
  const memory = [0x05, limits.length + 1, 0x01, ...limits];
  const exports = [0x07, 0x07, 0x01, 0x03, 0x6d, 0x65, 0x6d, 0x02, 0x00];
  return Uint8Array.of(0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, ...memory, ...exports);
}

function grownTo(bytes: Uint8Array, pages: number): boolean {
  const mem = new WebAssembly.Instance(new WebAssembly.Module(bytes as Uint8Array<ArrayBuffer>)).exports['mem'] as WebAssembly.Memory;
  try {
    mem.grow(pages - mem.buffer.byteLength / 65536);
    return true;
  } catch {
    return false;
  }
}

describe('capDefinedMemories', () => {
  it('gives a memory without a maximum one at the cap: growing past it fails inside the module', () => {
    const plain = memoryModule(1);
    expect(grownTo(plain, 100)).toBe(true);
    const capped = capDefinedMemories(plain, 4 * 65536, 'test');
    expect(grownTo(capped, 4)).toBe(true);
    expect(grownTo(capped, 5)).toBe(false);
  });

  it('keeps a smaller maximum, and lowers a larger one', () => {
    expect(grownTo(capDefinedMemories(memoryModule(1, 2), 4 * 65536, 'test'), 3)).toBe(false);
    expect(grownTo(capDefinedMemories(memoryModule(1, 100), 4 * 65536, 'test'), 5)).toBe(false);
  });

  it('refuses a memory that starts above the cap, naming the component', () => {
    expect(() => capDefinedMemories(memoryModule(10), 4 * 65536, 'notes.wasm')).toThrow(/^notes\.wasm: the component's memory starts at 655360 bytes, above its cap of 262144 bytes/);
  });
});
