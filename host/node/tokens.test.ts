import { execFileSync } from 'node:child_process';
import { chmod, lstat, mkdtemp, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isCodedError } from '../../runtime/errors.js';
import { loadOrCreateTokens, mintTokens, tokenFilePath } from './tokens.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kit-tokens-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('world tokens', () => {
  it('mints tok_ and tok_r_ tokens of 32 random bytes, different each time', () => {
    const a = mintTokens();
    const b = mintTokens();
    expect(a.token).toMatch(/^tok_[A-Za-z0-9_-]{43}$/);
    expect(a.readToken).toMatch(/^tok_r_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.token.slice(4), 'base64url')).toHaveLength(32);
    expect(new Set([a.token, b.token, a.readToken, b.readToken]).size).toBe(4);
  });

  it('writes .kit/token as JSON with mode 0600 on first start and reuses it on restart', async () => {
    const first = await loadOrCreateTokens(dir, 'http://127.0.0.1:4440/local/w');
    expect(first.created).toBe(true);
    const path = tokenFilePath(dir);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ url: 'http://127.0.0.1:4440/local/w', token: first.token, readToken: first.readToken });
    const again = await loadOrCreateTokens(dir, 'http://127.0.0.1:4440/local/w');
    expect(again).toEqual({ ...first, created: false });
  });

  it('keeps the tokens and records the new URL when the server moves port', async () => {
    const first = await loadOrCreateTokens(dir, 'http://127.0.0.1:4440/local/w');
    const moved = await loadOrCreateTokens(dir, 'http://127.0.0.1:5555/local/w');
    expect([moved.token, moved.readToken]).toEqual([first.token, first.readToken]);
    expect(JSON.parse(await readFile(tokenFilePath(dir), 'utf8')).url).toBe('http://127.0.0.1:5555/local/w');
    expect((await stat(tokenFilePath(dir))).mode & 0o777).toBe(0o600);
  });

  it('writes through a token file that is a symlink, and keeps the link', async () => {
    const secrets = await mkdtemp(join(tmpdir(), 'kit-secrets-'));
    try {
      const target = join(secrets, 'world-token.json');
      const first = await loadOrCreateTokens(dir, 'http://127.0.0.1:4440/local/w');
      await rename(tokenFilePath(dir), target);
      await symlink(target, tokenFilePath(dir));
      const moved = await loadOrCreateTokens(dir, 'http://127.0.0.1:5555/local/w');
      expect(moved.token).toBe(first.token);
      expect((await lstat(tokenFilePath(dir))).isSymbolicLink()).toBe(true);
      expect(JSON.parse(await readFile(target, 'utf8')).url).toBe('http://127.0.0.1:5555/local/w');
      // A link to a file not there yet: the minted tokens land where it points.
      await rm(target);
      const minted = await loadOrCreateTokens(dir, 'u');
      expect(minted.created).toBe(true);
      expect((await lstat(tokenFilePath(dir))).isSymbolicLink()).toBe(true);
      expect(JSON.parse(await readFile(target, 'utf8')).token).toBe(minted.token);
      expect((await stat(target)).mode & 0o777).toBe(0o600);
    } finally {
      await rm(secrets, { recursive: true, force: true });
    }
  });

  it('tightens a loosened mode back to 0600', async () => {
    await loadOrCreateTokens(dir, 'u');
    await chmod(tokenFilePath(dir), 0o644);
    await loadOrCreateTokens(dir, 'u');
    expect((await stat(tokenFilePath(dir))).mode & 0o777).toBe(0o600);
  });

  it('refuses a corrupt file with token_file_corrupt and leaves it as it was', async () => {
    await loadOrCreateTokens(dir, 'u');
    const path = tokenFilePath(dir);
    const bad = [
      '{"url":"u","token":"tok_x"',
      '[]',
      '{"url":"u","token":"nope","readToken":"tok_r_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}',
      '{"url":"u","token":"tok_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}',
      '',
    ];
    for (const content of bad) {
      await writeFile(path, content);
      const error = await loadOrCreateTokens(dir, 'u').catch((e: unknown) => e);
      expect(isCodedError(error) && error.code).toBe('token_file_corrupt');
      expect(String((error as Error).message)).toContain(path);
      expect(await readFile(path, 'utf8')).toBe(content);
    }
    // A FIFO in its place would block a read for ever.
    await rm(path);
    execFileSync('mkfifo', [path]);
    const fifo = await loadOrCreateTokens(dir, 'u').catch((e: unknown) => e);
    expect(isCodedError(fifo) && fifo.code).toBe('token_file_corrupt');
  });
});
