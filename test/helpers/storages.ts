/**
 * Both storages the world engine runs on, for suites that run the same cases against
 * each (the memory storage is the model): LMDB in a temporary folder removed after each
 * test, plus a shared list of clean-ups a test may add to. Call at the top of a test file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { openLmdbStorage } from '../../runtime/store/lmdb.js';
import { MemoryStorage } from '../../runtime/store/memory.js';
import type { Storage } from '../../runtime/store/types.js';

export function storageBackends(tmpPrefix: string): { backends: [string, () => Storage][]; cleanups: (() => Promise<void> | void)[] } {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const backends: [string, () => Storage][] = [
    ['memory', () => new MemoryStorage()],
    [
      'lmdb',
      () => {
        const dir = mkdtempSync(join(tmpdir(), tmpPrefix));
        const s = openLmdbStorage(dir);
        cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
        return s;
      },
    ],
  ];
  return { backends, cleanups };
}

/** The stable `code` of what `f` throws (`plain <Name>` for an error without one), or `no error`. */
export function codeOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    return (e as { code?: string }).code ?? `plain ${(e as Error).name}`;
  }
  return 'no error';
}
