import { describe, expect, it, beforeAll, afterEach } from 'vitest';
import { loadSandboxModule, WorldSandbox, runtimeMemoryLimit } from './index.js';
import type { SandboxModule, CallResult, HostCall } from './index.js';
import { sandboxStats } from './sandbox.js';
import { GlueDate, makeSyncGlue, sandboxModuleOf, SandboxGlueError, syncGlueSource } from './wasm.js';
import { importEdgeSandboxModule } from './fixtures/edge-modules.js';
import { KitError } from '../errors.js';

let mod: SandboxModule;
beforeAll(async () => {
  mod = await loadSandboxModule();
});
afterEach(() => {
  // Every test disposes what it made, and QuickJS found no leaked handle while freeing it.
  expect(sandboxStats()).toEqual({ live: 0, disposeFailures: 0 });
});

function ok(r: CallResult): string {
  if ('error' in r) throw new Error(`expected ok, got ${r.error.code}: ${r.error.message}`);
  return r.ok;
}
function err(r: CallResult): { code: string; message: string } {
  if ('ok' in r) throw new Error(`expected an error, got ok: ${r.ok.slice(0, 200)}`);
  return r.error;
}

describe('loadSandboxModule', () => {
  it('compiles once per process', async () => {
    expect(await loadSandboxModule()).toBe(mod);
  });

  it('refuses a glue its edits no longer fit, naming the edit', () => {
    expect(() => makeSyncGlue('async function QuickJSRaw(moduleArg={}){}')).toThrow(SandboxGlueError);
    expect(() => makeSyncGlue('nothing like the glue')).toThrow(/applies 0 times/);
  });
});

describe('a sandbox module made as the edge makes it', () => {
  it('runs calls with the glue of a module written from syncGlueSource and a wasm module compiled elsewhere', async () => {
    const edge = await importEdgeSandboxModule();
    expect(edge).not.toBe(mod);
    using sb = WorldSandbox.create(edge);
    ok(sb.load('x', 'globalThis.f = (s) => JSON.stringify({ got: __host_call("get", s), now: Date.now(), tz: new Date(86400000).getTimezoneOffset() });', { hostCall: true }));
    // The glue's Date is the deterministic one (GlueDate): QuickJS's clock reads 0, its zone is UTC.
    expect(JSON.parse(ok(sb.call('x', 'f', 'k', (op, arg) => `${op}:${arg}`)))).toEqual({ got: 'get:k', now: 0, tz: 0 });
    // A second world from the same module has its own memory.
    using other = WorldSandbox.create(edge, { memoryBytes: 32 * 1024 * 1024 });
    ok(other.load('y', 'globalThis.g = () => typeof globalThis.f;'));
    expect(ok(other.call('y', 'g', ''))).toBe('undefined');
  });

  it('refuses a glue its edits no longer fit, a glue function that makes no factory, and what is not a module', async () => {
    expect(() => syncGlueSource('async function QuickJSRaw(moduleArg={}){}')).toThrow(SandboxGlueError);
    const { wasm } = await importEdgeSandboxModule();
    expect(() => sandboxModuleOf(wasm, (() => undefined) as never)).toThrow(/did not return the QuickJS factory/);
    expect(() => sandboxModuleOf({} as WebAssembly.Module, () => (() => undefined) as never)).toThrow(TypeError);
    expect(new GlueDate().getTimezoneOffset()).toBe(0);
    expect(GlueDate.now()).toBe(0);
  });
});

describe('WorldSandbox calls', () => {
  it('loads a script and calls its global function with one string in and one out', () => {
    using sb = WorldSandbox.create(mod);
    ok(sb.load('echo', 'function handle(s) { const o = JSON.parse(s); return JSON.stringify({ got: o.n * 2 }); }'));
    expect(ok(sb.call('echo', 'handle', '{"n":21}'))).toBe('{"got":42}');
    expect(ok(sb.call('echo', 'handle', '{"n":1}'))).toBe('{"got":2}');
  });

  it('carries strings holding NUL, lone surrogates and astral characters intact both ways', () => {
    using sb = WorldSandbox.create(mod);
    ok(sb.load('s', `
      function echo(s) { return s; }
      function codes(s) { return Array.from({ length: s.length }, (_, i) => s.charCodeAt(i)).join(','); }
      function make() { return 'a\\u0000b\\uD800c\\uDC00d😀'; }
      function viaHost(s) { return __host_call(s, s + '!'); }
    `, { hostCall: true }));
    const tricky = 'a\u0000b\uD800c\uDC00d😀';
    expect(ok(sb.call('s', 'echo', tricky))).toBe(tricky);
    // The mark of an encoded string, at the start of a plain one, is not mistaken for it.
    for (const marked of ['\u0001"x"', '\u0001', '\u0001\u0000']) {
      expect(ok(sb.call('s', 'echo', marked))).toBe(marked);
      expect(ok(sb.call('s', 'viaHost', marked, (_op, arg) => arg))).toBe(`${marked}!`);
    }
    // Each kind alone (the check for each is separate): a lone high or low surrogate, a NUL.
    for (const alone of ['x\uD800', '\uDC00y', 'x\u0000']) {
      expect(ok(sb.call('s', 'echo', alone))).toBe(alone);
      expect(ok(sb.call('s', 'viaHost', alone, (_op, arg) => arg))).toBe(`${alone}!`);
    }
    expect(ok(sb.call('s', 'codes', tricky))).toBe([...Array(tricky.length).keys()].map((i) => tricky.charCodeAt(i)).join(','));
    expect(ok(sb.call('s', 'make', ''))).toBe(tricky);
    const seen: [string, string][] = [];
    const host: HostCall = (op, arg) => {
      seen.push([op, arg]);
      return `${arg}\u0000`;
    };
    expect(ok(sb.call('s', 'viaHost', tricky, host))).toBe(`${tricky}!\u0000`);
    expect(seen).toEqual([[tricky, `${tricky}!`]]);
  });

  it('settles an async function before answering, and reports a rejection as a guest error', () => {
    using sb = WorldSandbox.create(mod);
    ok(sb.load('a', `
      async function good(s) { await null; const x = await Promise.resolve(s + '1'); return x + '2'; }
      async function bad() { await null; throw new TypeError('nope'); }
      function never() { return new Promise(() => {}); }
      async function notString() { return 5; }
    `));
    expect(ok(sb.call('a', 'good', 'x'))).toBe('x12');
    expect(err(sb.call('a', 'bad', ''))).toEqual({ code: 'guest_error', message: 'TypeError: nope' });
    expect(err(sb.call('a', 'never', '')).code).toBe('guest_error');
    expect(err(sb.call('a', 'notString', '')).message).toMatch(/not a string/);
  });

  it('runs the jobs a call left queued before it answers, with its host function', () => {
    using sb = WorldSandbox.create(mod);
    ok(sb.load('j', `
      let log = [];
      function fire(s) { Promise.resolve().then(() => log.push(__host_call('late', s))); return 'answered'; }
      function read() { return JSON.stringify(log); }
      function failLater() { Promise.reject(new Error('nobody listens')); return 'fine'; }
    `, { hostCall: true }));
    const ops: string[] = [];
    expect(ok(sb.call('j', 'fire', 'a', (op, arg) => (ops.push(op), `${op}:${arg}`)))).toBe('answered');
    expect(ops).toEqual(['late']); // ran inside that call, not the next one
    expect(ok(sb.call('j', 'read', ''))).toBe('["late:a"]');
    expect(ok(sb.call('j', 'failLater', ''))).toBe('fine');
  });

  it('answers errors as values: guest throws, missing functions, non-string results, unknown names', () => {
    using sb = WorldSandbox.create(mod);
    ok(sb.load('w', 'function boom() { throw new RangeError("bad range"); } function num() { return 42; } var notFn = 1;'));
    expect(err(sb.call('w', 'boom', ''))).toEqual({ code: 'guest_error', message: 'RangeError: bad range' });
    expect(err(sb.call('w', 'num', ''))).toEqual({ code: 'guest_error', message: 'TypeError: the function returned a number, not a string' });
    expect(err(sb.call('w', 'missing', '')).message).toMatch(/'missing' is not a function/);
    expect(err(sb.call('w', 'notFn', '')).code).toBe('guest_error');
    expect(err(sb.call('nothing', 'boom', '')).code).toBe('load_error');
  });

  it('refuses a script that does not evaluate, and keeps nothing under its name', () => {
    using sb = WorldSandbox.create(mod);
    ok(sb.load('t', 'function f() { return "old"; }'));
    const syntax = err(sb.load('t', 'function ( {'));
    expect(syntax.code).toBe('load_error');
    expect(syntax.message).toMatch(/SyntaxError/);
    expect(err(sb.call('t', 'f', '')).code).toBe('load_error');
    expect(err(sb.load('t', 'throw new Error("at load")'))).toEqual({ code: 'load_error', message: 'Error: at load' });
  });

  it('gives each loaded name its own context with its own globals', () => {
    using sb = WorldSandbox.create(mod);
    ok(sb.load('one', 'var shared = "one"; function get() { return String(globalThis.shared); }'));
    ok(sb.load('two', 'function get() { return String(globalThis.shared); }'));
    expect(ok(sb.call('one', 'get', ''))).toBe('one');
    expect(ok(sb.call('two', 'get', ''))).toBe('undefined');
    sb.unload('one');
    expect(err(sb.call('one', 'get', '')).code).toBe('load_error');
    expect(ok(sb.call('two', 'get', ''))).toBe('undefined');
  });

  it('resets the step budget on every call', () => {
    using sb = WorldSandbox.create(mod, { callSteps: 200 });
    // About 60 % of the budget per call: three calls in a row all finish.
    ok(sb.load('b', 'function spin(n) { let x = 0; for (let i = 0; i < Number(n); i++) x += i; return String(x); }'));
    let perStep = 0;
    for (let n = 100_000; n < 1e8; n *= 2) {
      if ('error' in sb.call('b', 'spin', String(n))) break;
      perStep = n;
    }
    expect(perStep).toBeGreaterThan(0);
    const n = String(Math.floor(perStep * 0.6));
    for (let i = 0; i < 3; i++) expect('ok' in sb.call('b', 'spin', n)).toBe(true);
    expect(err(sb.call('b', 'spin', String(perStep * 4))).code).toBe('timeout');
  });

  it('ends a call that runs past its wall time in builtins, which the step budget barely counts', () => {
    // With steps enough for minutes of this loop, the time limit ends it.
    using sb = WorldSandbox.create(mod, { callSteps: 10_000_000, callMs: 300 });
    ok(sb.load('n', 'function sorts() { for (;;) Array(200).fill(0).sort(); } function quick() { return "ok"; }'));
    const started = performance.now();
    const e = err(sb.call('n', 'sorts', ''));
    expect(e.code).toBe('timeout');
    expect(e.message).toMatch(/time limit of 300 ms/);
    // Well before the 5 s watchdog a worker would be ended by.
    expect(performance.now() - started).toBeLessThan(3000);
    // The next call gets a fresh deadline.
    expect(ok(sb.call('n', 'quick', ''))).toBe('ok');
  });
});

describe('contexts with a runtime of their own', () => {
  it("count what they keep against their own limit, not the sandbox's nor each other's", () => {
    using world = WorldSandbox.create(mod, { memoryBytes: 64 * 1024 * 1024 });
    // 30 MB kept by one script: past its own 8 MiB, refused, and it leaves nothing behind.
    const big = err(world.load('big', 'globalThis.t = Array(3e6).fill(0).map((_, i) => i * 1.5);', { memoryBytes: 8 * 1024 * 1024 }));
    expect(big.code).toBe('out_of_memory');
    expect(big.message).toContain("context's own limit is 8388608 bytes");
    // Ten scripts keeping ~1.6 MB each all load, and each says what it keeps.
    for (let i = 0; i < 10; i++) {
      ok(world.load(`keep${i}`, "globalThis.t = Array(50000).fill(0).map((_, i) => 'k' + i); globalThis.n = () => String(t.length);", { memoryBytes: 8 * 1024 * 1024 }));
    }
    const kept = world.memoryUsed('keep9');
    expect(kept).toBeGreaterThan(1_000_000);
    expect(kept).toBeLessThan(4_000_000);
    expect(ok(world.call('keep0', 'n', ''))).toBe('50000');
    // A context in the shared runtime has no figure of its own.
    ok(world.load('shared', 'globalThis.x = 1;'));
    expect(world.memoryUsed('shared')).toBeNull();
    // A call may use its context's limit while it runs, and gives it back.
    ok(world.load('burst', "globalThis.f = () => String(Array(2e5).fill(0).map((_, i) => 'v' + i).length);", { memoryBytes: 16 * 1024 * 1024 }));
    expect(ok(world.call('burst', 'f', ''))).toBe('200000');
    expect(world.memoryUsed('burst')).toBeLessThan(1_000_000);
  });
});

describe('host calls', () => {
  it('offers __host_call only to contexts loaded with hostCall, and only during a call given one', () => {
    using sb = WorldSandbox.create(mod);
    ok(sb.load('with', 'function kind() { return typeof __host_call; } function use(s) { return __host_call("get", s); }', { hostCall: true }));
    ok(sb.load('without', 'function kind() { return typeof __host_call; }'));
    expect(ok(sb.call('with', 'kind', ''))).toBe('function');
    expect(ok(sb.call('without', 'kind', ''))).toBe('undefined');
    expect(ok(sb.call('with', 'use', '{"id":1}', (op, arg) => `${op}:${arg}`))).toBe('get:{"id":1}');
    expect(err(sb.call('with', 'use', '{}')).message).toMatch(/no host function/);
  });

  it('turns a throwing host call into a guest exception the guest may catch, code included', () => {
    using sb = WorldSandbox.create(mod);
    ok(sb.load('h', `
      function caught(s) { try { __host_call('get', s); return 'no'; } catch (e) { return e.name + '|' + e.message + '|' + e.code; } }
      function uncaught(s) { return __host_call('get', s); }
      function badArgs() { return __host_call(1, {}); }
    `, { hostCall: true }));
    const host: HostCall = () => {
      throw new KitError('not_found', 'no such record');
    };
    expect(ok(sb.call('h', 'caught', '{}', host))).toBe('HostError|no such record|not_found');
    expect(err(sb.call('h', 'uncaught', '{}', host))).toEqual({ code: 'guest_error', message: 'HostError: no such record' });
    expect(err(sb.call('h', 'badArgs', '', host)).message).toMatch(/takes two strings/);
    expect(err(sb.call('h', 'uncaught', '{}', (() => 5) as unknown as HostCall)).message).toMatch(/not a string/);
  });

  it('refuses a re-entrant call from inside a host call, as a guest exception', () => {
    using sb = WorldSandbox.create(mod);
    ok(sb.load('r', 'function f(s) { return __host_call("x", s); } function g() { return "g"; }', { hostCall: true }));
    const r = sb.call('r', 'f', '', () => {
      const inner = sb.call('r', 'g', '');
      return 'ok' in inner ? inner.ok : 'err';
    });
    expect(err(r).message).toMatch(/inside a host call/);
    expect(ok(sb.call('r', 'g', ''))).toBe('g');
  });
});

describe('determinism', () => {
  const probe = `
    function clock() { return JSON.stringify([Date.now(), new Date().toISOString(), new Date(0).getTimezoneOffset(), new Date(86400000).toString()]); }
    function randoms() { return JSON.stringify([Math.random(), Math.random(), Math.random()]); }
    function replace() { Date.now = () => 1234; Math.random = () => 0.5; return JSON.stringify([Date.now(), Math.random()]); }
    function replaceDate() { const D = Date; globalThis.Date = class extends D { static now() { return 99; } }; return String(Date.now()); }
  `;

  it('reads epoch 0 in UTC whatever the host clock and time zone', () => {
    const tz = process.env['TZ'];
    process.env['TZ'] = 'America/New_York';
    try {
      using sb = WorldSandbox.create(mod);
      ok(sb.load('p', probe));
      expect(JSON.parse(ok(sb.call('p', 'clock', '')))).toEqual([0, '1970-01-01T00:00:00.000Z', 0, expect.stringMatching(/^Fri Jan 02 1970 00:00:00 GMT\+0000/)]);
    } finally {
      if (tz === undefined) delete process.env['TZ'];
      else process.env['TZ'] = tz;
    }
  });

  it('starts Math.random from the same fixed seed in every new context and world', () => {
    using a = WorldSandbox.create(mod);
    using b = WorldSandbox.create(mod);
    ok(a.load('p', probe));
    ok(b.load('p', probe));
    const first = ok(a.call('p', 'randoms', ''));
    expect(ok(b.call('p', 'randoms', ''))).toBe(first);
    const values = JSON.parse(first) as number[];
    expect(new Set(values).size).toBe(3);
    for (const v of values) expect(v >= 0 && v < 1).toBe(true);
    ok(a.load('p', probe)); // a fresh context starts over
    expect(ok(a.call('p', 'randoms', ''))).toBe(first);
  });

  it('lets a guest runtime replace Date and Math.random', () => {
    using sb = WorldSandbox.create(mod);
    ok(sb.load('p', probe));
    expect(ok(sb.call('p', 'replace', ''))).toBe('[1234,0.5]');
    expect(ok(sb.call('p', 'replaceDate', ''))).toBe('99');
  });
});

describe('lifetime', () => {
  it('answers disposed after dispose, and dispose is idempotent', () => {
    const sb = WorldSandbox.create(mod);
    ok(sb.load('x', 'function f() { return "f"; }'));
    expect(sb.alive).toBe(true);
    expect(sandboxStats().live).toBe(1);
    sb.dispose();
    sb.dispose();
    expect(sb.alive).toBe(false);
    expect(err(sb.call('x', 'f', '')).code).toBe('disposed');
    expect(err(sb.load('y', '1')).code).toBe('disposed');
  });

  it('defers a dispose asked for inside a host call until the call returns', () => {
    const sb = WorldSandbox.create(mod);
    ok(sb.load('x', 'function f() { return __host_call("bye", "") + "!"; }', { hostCall: true }));
    const r = sb.call('x', 'f', '', () => {
      sb.dispose();
      return 'done';
    });
    expect(ok(r)).toBe('done!');
    expect(sb.alive).toBe(false);
  });

  it('reports the size of its own wasm memory', () => {
    using sb = WorldSandbox.create(mod, { memoryBytes: 32 * 2 ** 20 });
    expect(sb.memoryUsage().wasmBytes).toBe(16 * 2 ** 20);
    ok(sb.load('m', 'var keep; function grow() { keep = new Uint8Array(12 * 1024 * 1024); return "ok"; }'));
    ok(sb.call('m', 'grow', ''));
    const grown = sb.memoryUsage().wasmBytes;
    expect(grown).toBeGreaterThan(16 * 2 ** 20);
    expect(grown).toBeLessThanOrEqual(32 * 2 ** 20);
  });

  it('refuses limits it cannot honour', () => {
    expect(() => WorldSandbox.create(mod, { memoryBytes: 8 * 2 ** 20 })).toThrow(TypeError);
    expect(() => WorldSandbox.create(mod, { stackBytes: 10 })).toThrow(TypeError);
    expect(() => WorldSandbox.create(mod, { callSteps: 0 })).toThrow(TypeError);
    expect(() => WorldSandbox.create(mod, { callMs: 0 })).toThrow(TypeError);
    expect(runtimeMemoryLimit(64 * 2 ** 20)).toBeLessThan(64 * 2 ** 20 - 6 * 2 ** 20);
  });
});
