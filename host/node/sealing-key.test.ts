import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadOrCreateSealingKey } from './sealing-key.js';

describe('the sealing key', () => {
  it('is made once (mode 0600) and read back after; SEALING_KEY overrides the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kit-sealing-'));
    const path = join(dir, '.kit', 'sealing-key');
    const made = await loadOrCreateSealingKey(path, {});
    expect(made.from).toBe(path);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await loadOrCreateSealingKey(path, {})).key).toBe(made.key);
    const env = { SEALING_KEY: 'a'.repeat(64) };
    expect(await loadOrCreateSealingKey(path, env)).toEqual({ key: 'a'.repeat(64), from: 'SEALING_KEY' });
    expect((await readFile(path, 'utf8')).trim()).toBe(made.key);
  });

  it('refuses a file or a variable that holds no key, and never replaces the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kit-sealing-'));
    const path = join(dir, 'sealing-key');
    await writeFile(path, 'not a key\n');
    await expect(loadOrCreateSealingKey(path, {})).rejects.toMatchObject({ code: 'sealing_key_corrupt' });
    expect(await readFile(path, 'utf8')).toBe('not a key\n');
    await expect(loadOrCreateSealingKey(path, { SEALING_KEY: 'short' })).rejects.toMatchObject({ code: 'sealing_key_corrupt' });
  });
});
