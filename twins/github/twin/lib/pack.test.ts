import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PackError, applyDelta, pkt, readPack, readPktLines, writePack, type RawType } from './pack.js';
import { fromRaw, objectId, toRaw } from './git.js';

describe('git packs', () => {
  let dir: string;
  const git = (...args: string[]): Buffer => execFileSync('git', args, {
    cwd: dir, env: { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'A', GIT_AUTHOR_EMAIL: 'a@x', GIT_COMMITTER_NAME: 'A', GIT_COMMITTER_EMAIL: 'a@x', GIT_AUTHOR_DATE: '1767225600 +0530', GIT_COMMITTER_DATE: '1767225600 -0700' },
    maxBuffer: 64 * 1024 * 1024,
  });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'twin-pack-'));
    git('init', '-q');
    // Similar versions of a big file, so git stores deltas (ofs-delta) between them.
    let text = '';
    for (let i = 0; i < 400; i++) text += `line ${i} of a file that changes a little each commit\n`;
    for (let v = 0; v < 6; v++) {
      writeFileSync(join(dir, 'big.txt'), text + `version ${v}\n`);
      writeFileSync(join(dir, `small${v}.txt`), `small ${v}\n`);
      git('add', '-A');
      git('commit', '-q', '-m', `version ${v}`);
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a pack git made (with deltas): every object, with git\'s ids, and each converts to the stored form and back', () => {
    const listed = git('rev-list', '--objects', '--all').toString().trim().split('\n').map((l) => l.slice(0, 40));
    const packBytes = execFileSync('git', ['pack-objects', '--stdout', '-q', '--delta-base-offset'], { cwd: dir, input: listed.join('\n') + '\n', env: { PATH: process.env.PATH, HOME: dir }, maxBuffer: 64 * 1024 * 1024 });
    // The pack really holds deltas (else this test would prove less than it says).
    const packPath = join(dir, 'theirs.pack');
    writeFileSync(packPath, packBytes);
    git('index-pack', packPath);
    expect(git('verify-pack', '-v', packPath.replace(/\.pack$/, '.idx')).toString()).toMatch(/chain length = [1-9]/);
    const objects = readPack(packBytes, () => undefined);
    expect(objects.map((o) => o.sha).sort()).toEqual([...listed].sort());
    for (const o of objects) {
      const stored = fromRaw(o.type, o.content, o.sha);
      expect(stored, `${o.type} ${o.sha}`).toBeDefined();
      expect(objectId(stored!)).toBe(o.sha);
      expect(Buffer.from(toRaw(stored!).content).equals(Buffer.from(o.content))).toBe(true);
    }
  });

  it('writes packs git accepts (index-pack verifies every object)', () => {
    const objects: { type: RawType; content: Uint8Array }[] = [
      { type: 'blob', content: Buffer.from('hello\n') },
      { type: 'blob', content: Buffer.alloc(70_000, 'z') },
    ];
    const path = join(dir, 'ours.pack');
    writeFileSync(path, writePack(objects));
    const out = git('index-pack', path).toString().trim();
    expect(out).toMatch(/^[0-9a-f]{40}$/);
    const shown = git('verify-pack', '-v', path.replace(/\.pack$/, '.idx')).toString();
    expect(shown).toContain('ce013625030ba8dba906f756967f9e9ca394464a');
  });

  it('refuses broken packs and deltas with PackError', () => {
    const good = writePack([{ type: 'blob', content: Buffer.from('x') }]);
    const bad = Buffer.from(good);
    bad[bad.length - 1] = (bad[bad.length - 1] as number) ^ 1;
    expect(() => readPack(bad, () => undefined)).toThrow(PackError);
    expect(() => readPack(Buffer.from('PACK'), () => undefined)).toThrow(PackError);
    expect(() => applyDelta(Buffer.from('abc'), Uint8Array.from([3, 10, 0x90, 50]))).toThrow(PackError);
    expect(() => readPktLines(Buffer.from('zzzz'))).toThrow(PackError);
    expect(readPktLines(Buffer.concat([pkt('want x\n'), Buffer.from('0000')])).lines).toEqual(['want x\n', null]);
  });
});
