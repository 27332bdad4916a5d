/**
 * Realms from modules written at build time (`trustedModuleSource`), as workerd runs the built-in
 * twins: several worlds in one isolate, each with its own clock `Date` and seeded `Math.random`.
 * The modules are imported from temp files, as the edge build's are from its bundle.
 */
import { describe, expect, it } from 'vitest';
import { TrustedContexts } from './trusted.js';
import { edgeTrustedRealms } from './trusted-edge.js';
import { trustedModuleSource } from './trusted-module.js';
import { importModuleText, importTrustedRealms } from './fixtures/edge-modules.js';
import type { CallResult } from './sandbox.js';
import type { TrustedRealmLoader } from './trusted-edge.js';

function ok(r: CallResult): string {
  if ('error' in r) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.ok;
}

/**
 * What the twin SDK's guest runtime does (sdk/twin/guest/runtime.ts `install`): on the first call,
 * the world's clock as `Date` and its generator as `Math.random`, set on the realm's globals; the
 * twin's code then reads them as free `Date` and `Math`.
 */
const WORLD = `
  var g = globalThis;
  var clock = 0;
  var seed = 0;
  g.__kit_install = function (input) {
    var o = JSON.parse(input);
    clock = o.nowMs;
    seed = o.seed;
    var RealDate = g.Date;
    var WorldDate = function () { return new.target === undefined ? new RealDate(clock).toString() : Reflect.construct(RealDate, arguments.length === 0 ? [clock] : Array.from(arguments), new.target); };
    Object.defineProperty(WorldDate, 'prototype', { value: RealDate.prototype });
    WorldDate.now = function () { return clock; };
    g.Date = WorldDate;
    g.Math.random = function () { seed = (seed * 16807) % 2147483647; return seed / 2147483647; };
    return 'installed';
  };
  g.__kit_read = function () {
    return JSON.stringify({ now: Date.now(), iso: new Date().toISOString(), random: Math.random(), max: Math.max(1, 2) });
  };
  g.__kit_draw = function () { return String(Math.random()); };
`;

describe('trusted realms from modules written at build time', () => {
  it('keep each world its own Date and Math.random, whatever order their calls come in', async () => {
    const loaders = await importTrustedRealms([WORLD]);
    // Two worlds running the same twin: the same module makes both realms.
    using a = new TrustedContexts(edgeTrustedRealms(loaders));
    using b = new TrustedContexts(edgeTrustedRealms(loaders));
    ok(a.load('twin', WORLD));
    ok(b.load('twin', WORLD));
    const hostRandom = Math.random;
    const hostNow = Date.now;

    // Before installing, each realm draws from its own copy of the prelude's seeded generator.
    const firstA = ok(a.call('twin', '__kit_draw', ''));
    const firstB = ok(b.call('twin', '__kit_draw', ''));
    const secondA = ok(a.call('twin', '__kit_draw', ''));
    expect(firstB).toBe(firstA);
    expect(secondA).not.toBe(firstA);

    ok(a.call('twin', '__kit_install', JSON.stringify({ nowMs: Date.parse('2030-01-01T00:00:00.000Z'), seed: 7 })));
    ok(b.call('twin', '__kit_install', JSON.stringify({ nowMs: Date.parse('1999-12-31T00:00:00.000Z'), seed: 1234 })));
    const reads: Record<string, unknown>[] = [];
    for (const engine of [a, b, a, b, b, a]) reads.push(JSON.parse(ok(engine.call('twin', '__kit_read', ''))) as Record<string, unknown>);
    const [a1, b1, a2, b2, b3, a3] = reads;
    for (const r of [a1, a2, a3]) expect(r).toMatchObject({ now: Date.parse('2030-01-01T00:00:00.000Z'), iso: '2030-01-01T00:00:00.000Z', max: 2 });
    for (const r of [b1, b2, b3]) expect(r).toMatchObject({ now: Date.parse('1999-12-31T00:00:00.000Z'), iso: '1999-12-31T00:00:00.000Z', max: 2 });
    // Each generator goes on from its own seed, untouched by the other's draws in between.
    const lehmer = (seed: number, n: number): number[] => Array.from({ length: n }, () => (seed = (seed * 16807) % 2147483647) / 2147483647);
    expect([a1, a2, a3].map((r) => r?.['random'])).toEqual(lehmer(7, 3));
    expect([b1, b2, b3].map((r) => r?.['random'])).toEqual(lehmer(1234, 3));

    // Nothing of either reached the host's own globals.
    expect(Math.random).toBe(hostRandom);
    expect(Date.now).toBe(hostNow);
    expect(Math.abs(Date.now() - new Date().getTime())).toBeLessThan(1000);
    expect(new Date().getFullYear()).toBeGreaterThanOrEqual(2025);
  });

  it('read the globals a script set, the host functions and intrinsics, through free names as a vm context does', async () => {
    const source = `
      globalThis.counter = 0;
      globalThis.bump = function () { counter = counter + 1; return String(counter) + ':' + __host_call('echo', 'x') + ':' + typeof Array.isArray + ':' + typeof notDefinedAnywhere; };`;
    using engine = new TrustedContexts(edgeTrustedRealms(await importTrustedRealms([source])));
    ok(engine.load('s', source, { hostCall: true }));
    expect(ok(engine.call('s', 'bump', '', (op, arg) => `${op}(${arg})`))).toBe('1:echo(x):function:undefined');
    expect(ok(engine.call('s', 'bump', '', (op, arg) => `${op}(${arg})`))).toBe('2:echo(x):function:undefined');
    // The realm's own global, not the host's.
    expect((globalThis as { counter?: unknown }).counter).toBeUndefined();
  });

  it('make a realm per call of the default export, the script run once in it', async () => {
    const source = 'globalThis.made = (globalThis.made ?? 0) + 1; globalThis.count = () => String(globalThis.made);';
    const module = await importModuleText<{ default: TrustedRealmLoader }>(await trustedModuleSource(source));
    const first = module.default();
    first.runScript();
    expect(() => first.runScript()).toThrow(/already run/);
    const second = module.default();
    second.runScript();
    expect([(first.global['count'] as () => string)(), (second.global['count'] as () => string)()]).toEqual(['1', '1']);
    expect(first.global['Math']).not.toBe(second.global['Math']);
    expect(first.global['Date']).not.toBe(second.global['Date']);
  });

  it('refuse at build time a script that does not parse, and at load one no module was built for', async () => {
    await expect(trustedModuleSource('this is not javascript')).rejects.toThrow(/does not parse/);
    using engine = new TrustedContexts(edgeTrustedRealms(new Map()));
    expect(engine.load('twin', 'globalThis.x = 1;')).toMatchObject({ error: { code: 'load_error', message: expect.stringContaining("no trusted module was built for the script loaded as 'twin'") } });
    expect(() => edgeTrustedRealms(new Map([['x', 'not a function' as never]]))).toThrow(TypeError);
  });
});
