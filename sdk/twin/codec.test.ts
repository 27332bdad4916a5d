/**
 * The SDK's codec (codec.ts) gives the same bytes and errors wherever it runs: in QuickJS with
 * the host's `__host_bytes` (node:crypto, node:zlib), in a trusted V8 realm with it, and in a
 * context without it (the JavaScript fallback: @noble/hashes, pako), against node:crypto and
 * node:zlib computed here.
 */
import { build } from 'esbuild';
import { createHash, createHmac } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSandboxModule, nodeHostBytes, nodeTrustedContexts, WorldSandbox } from '../../runtime/sandbox/index.js';
import type { GuestEngine } from '../../runtime/sandbox/index.js';

const PROBE = fileURLToPath(new URL('./fixtures/codec-probe.ts', import.meta.url));

type Answer = { ok?: string | boolean; end?: number; error?: string };
type Probe = (op: string, args: Uint8Array[], options?: Record<string, number>) => Answer;

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const engines: GuestEngine[] = [];
const places: [string, boolean, () => Probe][] = [];
let quickjs: Probe, trusted: Probe, fallback: Probe;

beforeAll(async () => {
  const out = await build({ entryPoints: [PROBE], bundle: true, write: false, format: 'iife', target: 'es2020', platform: 'neutral', mainFields: ['module', 'main'], logLevel: 'silent' });
  const source = out.outputFiles[0]!.text;
  const viaEngine = (engine: GuestEngine): Probe => {
    const loaded = engine.load('probe', source, { hostCall: true });
    if ('error' in loaded) throw new Error(loaded.error.message);
    engines.push(engine);
    return (op, args, options) => {
      const r = engine.call('probe', 'probe', JSON.stringify({ op, args: args.map(hex), options }), () => 'null');
      if ('error' in r) throw new Error(`${r.error.code}: ${r.error.message}`);
      return JSON.parse(r.ok) as Answer;
    };
  };
  // Time is not what this checks: hex through JSON is slow in the interpreter on a busy machine.
  quickjs = viaEngine(WorldSandbox.create(await loadSandboxModule(), { callMs: 30_000, callSteps: 1e9 }, nodeHostBytes));
  trusted = viaEngine(nodeTrustedContexts());
  const context = vm.createContext({});
  vm.runInContext(source, context);
  const fn = vm.runInContext('probe', context) as (s: string) => string;
  fallback = (op, args, options) => JSON.parse(fn(JSON.stringify({ op, args: args.map(hex), options }))) as Answer;
});

afterAll(() => {
  for (const e of engines) e.dispose();
});

const text = (s: string): Uint8Array => new Uint8Array(Buffer.from(s));
/** Bytes that compress poorly and well, deterministic. */
function sample(n: number): Uint8Array {
  const out = new Uint8Array(n);
  let s = 1;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1103515245) + 12345) | 0;
    out[i] = i % 3 === 0 ? (s >>> 16) & 0xff : 97 + (i % 7);
  }
  return out;
}

describe.each([
  ['QuickJS with the host', true, () => quickjs],
  ['a trusted V8 realm with the host', true, () => trusted],
  ['a context without a host (JavaScript)', false, () => fallback],
] as const)('codec in %s', (_name, onHost, probeOf) => {
  const probe = (op: string, args: Uint8Array[], options?: Record<string, number>): Answer => probeOf()(op, args, options);

  it('says where it runs', () => {
    expect(probe('onHost', []).ok).toBe(onHost);
  });

  it('hashes as node:crypto does, parts joined, views by their own bytes', () => {
    const big = sample(70_000);
    expect(probe('sha1', [text('blob 5\0'), text('hello')]).ok).toBe(createHash('sha1').update('blob 5\0hello').digest('hex'));
    expect(probe('sha1', [big]).ok).toBe(createHash('sha1').update(big).digest('hex'));
    expect(probe('sha1', [new Uint8Array(0)]).ok).toBe('da39a3ee5e6b4b0d3255bfef95601890afd80709');
    expect(probe('sha1-many', [text('abc')]).ok).toBe(createHash('sha1').update('abc'.repeat(5000 / 3 + 1).slice(0, 5000)).digest('hex'));
    expect(probe('sha1-view', [text('xabcx')]).ok).toBe(createHash('sha1').update('abc').digest('hex'));
    expect(probe('sha256', [text('a'), big]).ok).toBe(createHash('sha256').update('a').update(big).digest('hex'));
    const longKey = sample(100);
    expect(probe('hmac', [text('whsec'), text('{"a":1}')]).ok).toBe(createHmac('sha256', 'whsec').update('{"a":1}').digest('hex'));
    expect(probe('hmac', [longKey, big]).ok).toBe(createHmac('sha256', longKey).update(big).digest('hex'));
  });

  it('answers Uint8Arrays of the guest realm', () => {
    const d = createHash('sha1').update('x').digest();
    expect(probe('realm', [text('x')]).ok).toBe(`true|20|${createHash('sha1').update(d).digest('hex')}`);
  });

  it('inflates zlib and gzip streams, and deflates what inflates back', () => {
    const data = sample(70_000);
    expect(probe('inflate', [deflateSync(data)]).ok).toBe(hex(data));
    expect(probe('inflate', [deflateSync(new Uint8Array(0))]).ok).toBe('');
    expect(probe('gunzip', [gzipSync(data)]).ok).toBe(hex(data));
    for (const level of [0, 1, 9]) expect(probe('deflate', [data], { level }).ok).toBe(hex(data));
  });

  it('finds where a stream ends among streams put back to back, as in a git pack', () => {
    const a = text('tree 1234\n'.repeat(50)), b = sample(70_000), c = text('x');
    const za = deflateSync(a), zb = deflateSync(b, { level: 0 }), zc = deflateSync(c);
    const pack = Buffer.concat([Buffer.from('PACK....'), za, zb, zc, Buffer.alloc(20)]);
    let at = 8;
    for (const [want, z] of [[a, za], [b, zb], [c, zc]] as const) {
      const r = probe('inflateAt', [pack], { start: at, maxBytes: want.length });
      expect(r.ok).toBe(hex(want));
      expect(r.end).toBe(at + z.length);
      at = r.end as number;
    }
  });

  it('inflates a stream framed more loosely than zlib writes it (empty stored blocks)', () => {
    const data = text('abc');
    const empty = Buffer.from([0, 0, 0, 0xff, 0xff]);
    const raw = deflateRawSync(data);
    const adler = Buffer.alloc(4);
    adler.writeUInt32BE(createAdler(data));
    const loose = Buffer.concat([Buffer.from([0x78, 0x01]), ...Array(40).fill(empty), raw, adler]);
    const r = probe('inflateAt', [Buffer.concat([loose, text('next')])], { start: 0, maxBytes: 3 });
    expect(r).toEqual({ ok: hex(data), end: loose.length });
  });

  it('refuses corrupt, truncated and oversized data with its own codes', () => {
    const z = deflateSync(sample(10_000));
    expect(probe('inflate', [text('not zlib at all')]).error).toBe('bad_data');
    expect(probe('inflate', [z.subarray(0, z.length - 10)]).error).toBe('bad_data');
    expect(probe('inflate', [z], { maxBytes: 9_999 }).error).toBe('too_large');
    expect(probe('gunzip', [gzipSync(sample(10_000))], { maxBytes: 100 }).error).toBe('too_large');
    expect(probe('gunzip', [z]).error).toBe('bad_data');
    // A bomb: 64 MiB of zeros in ~64 KiB, stopped at the limit.
    expect(probe('inflate', [deflateSync(new Uint8Array(64 * 1024 * 1024))], { maxBytes: 1024 * 1024 }).error).toBe('too_large');
  });
});

function createAdler(data: Uint8Array): number {
  let a = 1, b = 0;
  for (const x of data) {
    a = (a + x) % 65521;
    b = (b + a) % 65521;
  }
  return ((b << 16) | a) >>> 0;
}
