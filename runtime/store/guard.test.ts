import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KitError } from '../errors.js';
import { openLmdbStorage } from './lmdb.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'kit-guard-'));
  dirs.push(d);
  return d;
}
function codeOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    return e instanceof KitError ? e.code : `not a KitError: ${String(e)}`;
  }
  return undefined;
}
/** A store holding one key, closed. */
async function filledStore(): Promise<string> {
  const dir = tempDir();
  const s = openLmdbStorage(dir);
  s.transact((w) => {
    for (let i = 0; i < 200; i++) w.put(['k', i], { i, text: 'x'.repeat(200) });
  });
  await s.close();
  return dir;
}

describe('one process per store', () => {
  it('refuses a store another live process holds, naming it, and takes over once that process is gone', async () => {
    const dir = tempDir();
    const holder = spawn('sleep', ['30']);
    try {
      writeFileSync(join(dir, 'twinkit.lock'), `${holder.pid}\n${hostname()}\n`);
      let error: unknown;
      try {
        openLmdbStorage(dir);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(KitError);
      expect((error as KitError).code).toBe('storage_locked');
      expect((error as KitError).message).toContain(`process ${holder.pid}`);
    } finally {
      holder.kill('SIGKILL');
      await new Promise((resolve) => holder.once('exit', resolve));
    }
    // The holder died without releasing (as after kill -9): its lock is stale.
    const s = openLmdbStorage(dir);
    expect(readFileSync(join(dir, 'twinkit.lock'), 'utf8')).toBe(`${process.pid}\n${hostname()}\n`);
    await s.close();
    expect(() => statSync(join(dir, 'twinkit.lock'))).toThrow();
  });

  it("takes a lock this process holds as its own (a world's worker thread started again)", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'twinkit.lock'), `${process.pid}\n${hostname()}\n`);
    const s = openLmdbStorage(dir);
    await s.close();
  });

  it("takes over a lock from another host, which it cannot check, with a warning", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'twinkit.lock'), `1\nsome-other-host.example\n`);
    const warn = console.warn;
    const warned: string[] = [];
    console.warn = (m: string) => warned.push(m);
    try {
      const s = openLmdbStorage(dir);
      await s.close();
    } finally {
      console.warn = warn;
    }
    expect(warned.join('\n')).toContain('some-other-host.example');
  });
});

describe('a damaged data file is refused before LMDB maps it', () => {
  it('opens a healthy store again with what it holds', async () => {
    const dir = await filledStore();
    const s = openLmdbStorage(dir);
    expect(s.get(['k', 199])).toMatchObject({ i: 199 });
    await s.close();
  });

  it('refuses a truncated, a garbage and an empty data.mdb with storage_corrupt, leaving the file as it is', async () => {
    const cases: [string, (file: string) => void][] = [
      ['truncated', (f) => truncateSync(f, 8192)],
      ['garbage', (f) => writeFileSync(f, 'hello world\n')],
      ['empty', (f) => writeFileSync(f, '')],
    ];
    for (const [name, damage] of cases) {
      const dir = await filledStore();
      const file = join(dir, 'data.mdb');
      damage(file);
      const before = readFileSync(file);
      expect([name, codeOf(() => openLmdbStorage(dir))]).toEqual([name, 'storage_corrupt']);
      expect(readFileSync(file).equals(before)).toBe(true);
      // Refused before the lock was taken: nothing left behind.
      expect(() => statSync(join(dir, 'twinkit.lock'))).toThrow();
    }
  });
});
