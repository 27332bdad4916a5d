import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { deflateSync } from 'node:zlib';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copy, delta, pack, type Entry } from '../../test/helpers.js';
import { PACK_LIMITS, PackError, applyDelta, pkt, readPack, readPktLines, rawId, writePack, writePackBase64, type PackObject, type RawType } from './pack.js';
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

  it('writePackBase64 copies stored base64 into a pack git accepts, at every block size and alignment (empty stored blocks realign it)', () => {
    let seed = 7;
    const bytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24)));
    // Sizes about the 64 KiB stored block, the 3-byte base64 group and the spliced minimum.
    const sizes = [0, 1, 2, 3, 1023, 1024, 1025, 65534, 65535, 65536, 65537, 131070, 131071, 131072, 200_003];
    const objects: PackObject[] = sizes.map((n) => {
      const content = bytes(n);
      return { type: 'blob', content, b64: content.toString('base64') };
    });
    objects.push({ type: 'tree', content: toRaw({ t: 'tree', entries: [{ mode: '100644', type: 'blob', sha: rawId('blob', bytes(5)), name: 'a' }] }).content });
    // All of them; none spliced (under 1024 bytes); one spliced and nothing after it; the last two.
    const cases = [objects, objects.slice(0, 4), objects.slice(5, 6), objects.slice(-2)];
    for (const [c, before] of cases.flatMap((c) => [Buffer.alloc(0), Buffer.from('0008NAK\n'), Buffer.from('x')].map((b) => [c, b] as const))) {
      const objects = c;
      const b64 = writePackBase64(objects, before);
      const answer = Buffer.from(b64, 'base64');
      expect(answer.toString('base64')).toBe(b64);
      // The same bytes as writePack, whichever way they are made.
      expect(answer.equals(Buffer.from(writePack(objects, before)))).toBe(true);
      expect(answer.subarray(0, before.length).equals(before)).toBe(true);
      const path = join(dir, `spliced-${objects.length}-${before.length}.pack`);
      writeFileSync(path, answer.subarray(before.length));
      expect(git('index-pack', path).toString().trim()).toMatch(/^[0-9a-f]{40}$/);
      const listed = git('verify-pack', '-v', path.replace(/\.pack$/, '.idx')).toString();
      for (const o of objects) expect(listed).toContain(rawId(o.type, o.content));
      expect(readPack(answer.subarray(before.length), () => undefined).map((o) => Buffer.from(o.content).toString('base64'))).toEqual(objects.map((o) => Buffer.from(o.content).toString('base64')));
    }
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

  it('limits: an object, a delta\'s result or a pack over its limit is refused before it is inflated; at the limit it is read', () => {
    const limits = { objectBytes: 1000, totalBytes: 2500, objects: 10 };
    const blob = (n: number, fill = 0): Entry => ({ type: 3, content: Buffer.alloc(n, fill) });
    expect(readPack(pack([blob(1000)]), () => undefined, limits)).toHaveLength(1);
    expect(() => readPack(pack([blob(1001)]), () => undefined, limits)).toThrow(/a blob of 1001 bytes is over the limit of 1000 bytes per object/);
    expect(() => readPack(pack([blob(900, 1), blob(900, 2), blob(900, 3)]), () => undefined, limits)).toThrow(/more than 2500 bytes, the limit per push/);
    expect(() => readPack(pack(Array.from({ length: 11 }, (_, i) => blob(1, i))), () => undefined, limits)).toThrow(/11 objects, over the limit of 10/);
    // A header that understates the size: inflating stops at the size declared.
    expect(() => readPack(pack([{ ...blob(10), z: deflateSync(Buffer.alloc(5000)) }]), () => undefined, limits)).toThrow(PackError);
    // A delta that makes 100 bytes into 5000: refused on the size it declares, before it is applied.
    const base = Buffer.alloc(100);
    const bomb = delta(100, 5000, Array.from({ length: 50 }, () => copy(0, 100)));
    expect(() => readPack(pack([blob(100), { type: 6, rel: 0, content: bomb }]), () => undefined, limits)).toThrow(/5000 bytes is over the limit/);
    expect(() => applyDelta(base, bomb, 1000)).toThrow(PackError);
    // Deltas each within the object limit, together over the pack's.
    const grow = delta(100, 900, Array.from({ length: 9 }, () => copy(0, 100)));
    expect(() => readPack(pack([blob(100), { type: 6, rel: 0, content: grow }, { type: 6, rel: 1, content: grow }, { type: 6, rel: 2, content: grow }]), () => undefined, limits))
      .toThrow(/the limit per push/);
  });

  it('a decompression bomb (61 KB that inflates to 60 MiB) is refused at once with the default limits', () => {
    const bombPack = pack([{ type: 3, content: Buffer.alloc(60 * 2 ** 20) }]);
    expect(bombPack.length).toBeLessThan(70_000);
    const started = performance.now();
    expect(() => readPack(bombPack, () => undefined)).toThrow(/over the limit of 4194304 bytes per object/);
    expect(performance.now() - started).toBeLessThan(100);
    expect(PACK_LIMITS).toEqual({ objectBytes: 4 * 2 ** 20, totalBytes: 8 * 2 ** 20, objects: 8_000 });
  });

  it('ref-deltas resolve whatever their order (a chain given last-first)', () => {
    // Object k is object k-1 with its last byte changed; the pack lists the chain last-first,
    // the one whole object at the end.
    const n = 2000;
    const contents = [Buffer.from('a chain of deltas 00')];
    for (let k = 1; k <= n; k++) contents.push(Buffer.concat([(contents[k - 1] as Buffer).subarray(0, 19), Buffer.from([k & 0xff])]));
    const entries: Entry[] = [];
    for (let k = n; k >= 1; k--) entries.push({ type: 7, base: rawId('blob', contents[k - 1] as Buffer), content: delta(20, 20, [copy(0, 19), Buffer.from([1, k & 0xff])]) });
    entries.push({ type: 3, content: contents[0] as Buffer });
    const objects = readPack(pack(entries), () => undefined);
    expect(new Set(objects.map((o) => o.sha))).toEqual(new Set(contents.map((c) => rawId('blob', c))));
  });
});
