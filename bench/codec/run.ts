/**
 * Codecs a twin needs (zlib inflate, SHA-1, SHA-256, HMAC, a MIME parser), each three ways:
 * written by hand (the twins' own code before issue 37), a pure-JS library bundled into the
 * guest (pako, fflate, @noble/hashes, postal-mime), and the host's native capability reached
 * through `__host_bytes` (node:zlib, node:crypto; sdk/twin/codec.ts). Each runs in QuickJS
 * (runtime/sandbox, as an untrusted twin runs) and in a trusted V8 realm (node:vm, as built-in
 * twins run by default), on what a twin really meets:
 * - the pack a `git clone --no-local` of a locally made repository receives (bench/codec/repo.ts):
 *   every object inflated and, as the GitHub twin's readPack does, each whole object's git id
 *   and the pack's checksum hashed with SHA-1;
 * - a 3 MB mail (bench/codec/mail.ts): parsed; its bytes hashed with SHA-256 and HMAC-SHA256.
 * Also the crossing: `__host_bytes` sha1 of 20 bytes and of 1 MiB, against node:crypto called
 * directly.
 *
 * Run (from the repository root, after `npx tsc -p tsconfig.json`):
 *   node dist/bench/codec/run.js [files=3000] [commits=3000] [runs=3]
 */
import { build, type Plugin } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateSync } from 'node:zlib';
import { loadSandboxModule, WorldSandbox, nodeTrustedRealms, TrustedContexts } from '../../runtime/sandbox/index.js';
import type { CallResult, GuestEngine } from '../../runtime/sandbox/index.js';
import { nodeHostBytes } from '../../runtime/sandbox/host-bytes-node.js';
import { makeClonePack } from './repo.js';
import { makeMail } from './mail.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const [files = 3000, commits = 3000, runs = 3] = process.argv.slice(2).map(Number);

/** The commit whose twins still carried their hand-written zlib and hashes. */
const HANDWRITTEN_AT = '36229f2';

/** Writes the hand-written zlib.ts, hash.ts (and the bytes.ts they import) from git history; resolves `handwritten:<name>` to them. */
function handwritten(): Plugin {
  const dir = join(tmpdir(), 'kit-codec-handwritten');
  mkdirSync(dir, { recursive: true });
  for (const name of ['zlib', 'hash', 'bytes']) {
    const text = execFileSync('git', ['-C', root, 'show', `${HANDWRITTEN_AT}:twins/github/twin/lib/${name}.ts`]);
    writeFileSync(join(dir, `${name}.ts`), text);
  }
  return {
    name: 'handwritten',
    setup(b) {
      b.onResolve({ filter: /^handwritten:/ }, (args) => ({ path: join(dir, `${args.path.slice('handwritten:'.length)}.ts`) }));
    },
  };
}

async function guestSource(file = 'codecs.guest.ts'): Promise<string> {
  const out = await build({
    plugins: [handwritten()],
    entryPoints: [join(root, 'bench/codec', file)],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    target: 'es2022',
    logLevel: 'error',
  });
  return out.outputFiles[0]!.text;
}

function ok(r: CallResult, what: string): string {
  if ('error' in r) throw new Error(`${what}: ${r.error.code} ${r.error.message}`);
  return r.ok;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

/** Median ms of `n` calls (with their answer), or the error the engine answered. */
function time(engine: GuestEngine, fn: string, input: string, n: number, context = 'codecs'): { ms: number; answer: string } | { error: string } {
  const ms: number[] = [];
  let answer = '';
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const r = engine.call(context, fn, input, () => 'null');
    ms.push(performance.now() - t);
    if ('error' in r) return { error: `${r.error.code}: ${r.error.message.slice(0, 120)}` };
    answer = r.ok;
  }
  return { ms: median(ms), answer };
}

const rows: string[] = [];
function row(engine: string, what: string, variant: string, r: { ms: number; answer: string } | { error: string }): void {
  const cell = 'error' in r ? `fails: ${r.error}` : `${r.ms.toFixed(1)} ms`;
  rows.push(`| ${engine} | ${what} | ${variant} | ${cell} |`);
  console.log(engine.padEnd(8), what.padEnd(22), variant.padEnd(8), cell, 'error' in r ? '' : r.answer.slice(0, 90));
}

async function main(): Promise<void> {
  const dir = join(tmpdir(), 'kit-codec-bench');
  let t = performance.now();
  const packPath = makeClonePack(dir, { files, commits });
  const pack = readFileSync(packPath);
  console.log(`repository: ${files} files, ${commits} commits; clone's pack ${(pack.length / 1048576).toFixed(2)} MiB (made in ${((performance.now() - t) / 1000).toFixed(1)} s)`);
  const mail = makeMail();
  console.log(`mail: ${(mail.length / 1048576).toFixed(2)} MiB`);
  const source = await guestSource();
  const postalSource = await guestSource('postal.guest.ts');
  console.log(`guest bundle: ${(source.length / 1024).toFixed(0)} KiB`);

  // Native reference: node:zlib and node:crypto called directly in the host, no crossing.
  t = performance.now();
  let nativeInflated = 0;
  {
    const count = pack.readUInt32BE(8);
    let pos = 12;
    for (let i = 0; i < count; i++) {
      let b = pack[pos++] as number;
      const code = (b >> 4) & 7;
      while (b & 0x80) b = pack[pos++] as number;
      if (code === 6) { b = pack[pos++] as number; while (b & 0x80) b = pack[pos++] as number; } else if (code === 7) pos += 20;
      const r = inflateSync(pack.subarray(pos), { info: true }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
      nativeInflated += r.buffer.length;
      if (code !== 6 && code !== 7) createHash('sha1').update(`x ${r.buffer.length}\0`).update(r.buffer).digest();
      pos += r.engine.bytesWritten;
    }
    createHash('sha1').update(pack.subarray(0, pack.length - 20)).digest();
  }
  const nativeMs = performance.now() - t;
  console.log(`native in the host (inflate + ids + pack sha1, one pass): ${nativeMs.toFixed(1)} ms for ${(nativeInflated / 1048576).toFixed(2)} MiB inflated`);

  const module = await loadSandboxModule();
  const engines: [string, GuestEngine][] = [
    ['V8', new TrustedContexts(nodeTrustedRealms, nodeHostBytes)],
    ['QuickJS', WorldSandbox.create(module, { memoryBytes: 1024 * 1024 * 1024, callMs: 3_600_000, callSteps: 1e12 }, nodeHostBytes)],
  ];
  for (const [name, engine] of engines) {
    ok(engine.load('codecs', source, { hostCall: true }), `${name} load`);
    ok(engine.call('codecs', 'loadPack', pack.toString('base64'), () => 'null'), `${name} loadPack`);
    ok(engine.call('codecs', 'loadMail', mail, () => 'null'), `${name} loadMail`);
    console.log(name, 'codec on host:', ok(engine.call('codecs', 'onHost', '', () => 'null'), 'onHost'));
    const n = name === 'V8' ? Math.max(runs, 5) : runs;
    // 'host' first: its walk finds the stream ends fflate is given.
    for (const variant of ['host', 'hand', 'pako', 'fflate']) row(name, 'inflate every object', variant, time(engine, 'inflateAll', variant, n));
    for (const variant of ['host', 'hand', 'noble']) row(name, 'sha1 ids + pack', variant, time(engine, 'hashAll', variant, n));
    for (const variant of ['host', 'hand', 'noble']) row(name, 'sha256 + hmac of mail', variant, time(engine, 'macMail', variant, n));
    row(name, 'parse 3 MB mail', 'hand', time(engine, 'parseMailHand', '', n));
    const postal = engine.load('postal', postalSource, { hostCall: true });
    if ('error' in postal) row(name, 'parse 3 MB mail', 'postal-mime', { error: `does not load: ${postal.error.message.slice(0, 80)}` });
    else {
      ok(engine.call('postal', 'loadMail', mail, () => 'null'), 'postal loadMail');
      row(name, 'parse 3 MB mail', 'postal-mime', time(engine, 'parseMailPostal', '', n, 'postal'));
    }
    row(name, 'cross: sha1 20 B ×10000', 'host', time(engine, 'cross', '20,10000', n));
    row(name, 'cross: sha1 1 MiB ×20', 'host', time(engine, 'cross', '1048576,20', n));
    engine.dispose();
  }
  // postal-mime where TextDecoder exists (Node's own realm), for reference.
  {
    const PostalMime = (await import('postal-mime')).default;
    const bytes = Buffer.from(mail, 'latin1');
    const ms: number[] = [];
    let answer = '';
    for (let i = 0; i < 5; i++) {
      const s = performance.now();
      const m = await PostalMime.parse(bytes, { attachmentEncoding: 'base64' });
      ms.push(performance.now() - s);
      answer = `${m.attachments.length} attachments, text ${m.text?.length ?? 0}, html ${m.html?.length ?? 0}, subject ${m.subject}`;
    }
    row('Node', 'parse 3 MB mail', 'postal-mime', { ms: median(ms), answer });
  }
  const tiny = Buffer.alloc(20), big = pack.subarray(0, 1048576);
  for (const [label, data, times] of [['sha1 20 B ×10000', tiny, 10000], ['sha1 1 MiB ×20', big, 20]] as const) {
    const s = performance.now();
    for (let i = 0; i < times; i++) createHash('sha1').update(data).digest();
    row('Node', `direct: ${label}`, 'node:crypto', { ms: performance.now() - s, answer: '' });
  }
  console.log('\n| engine | work | way | median |\n|---|---|---|---|\n' + rows.join('\n'));
}

await main();
