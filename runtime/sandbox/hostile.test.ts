/**
 * Hostile guests. Each case runs in world A; world B, created at the same time in the same
 * process, serves a call before and after every case and must answer normally throughout, with
 * its state intact. No case may throw in the host, and none may leak a handle.
 */
import { describe, expect, it, beforeAll, afterAll, afterEach } from 'vitest';
import { loadSandboxModule, WorldSandbox } from './index.js';
import type { SandboxModule, CallResult, SandboxLimits } from './index.js';
import { sandboxStats } from './sandbox.js';

let mod: SandboxModule;
let bystander: WorldSandbox;
let served = 0;

beforeAll(async () => {
  mod = await loadSandboxModule();
  bystander = WorldSandbox.create(mod);
  const r = bystander.load('counter', 'let n = 0; function next(s) { n++; return JSON.stringify({ n, echo: JSON.parse(s) }); }');
  expect(r).toEqual({ ok: '' });
});
afterAll(() => {
  bystander.dispose();
  expect(sandboxStats()).toEqual({ live: 0, disposeFailures: 0 });
});

/** World B answers, and its counter shows every earlier call (its state survived). */
function bystanderAnswers(): void {
  served++;
  const r = bystander.call('counter', 'next', '{"ping":true}');
  expect(r).toEqual({ ok: JSON.stringify({ n: served, echo: { ping: true } }) });
}

afterEach(() => {
  bystanderAnswers();
});

/** Runs `body` as the function `go` in a fresh world A; returns what the call answered. */
function hostile(body: string, limits?: Partial<SandboxLimits>): { result: CallResult; alive: boolean; afterwards: CallResult } {
  bystanderAnswers();
  const world = WorldSandbox.create(mod, limits);
  try {
    const loaded = world.load('evil', `function go(input) { ${body} } function fine() { return 'still here'; }`);
    expect(loaded).toEqual({ ok: '' });
    const result = world.call('evil', 'go', '');
    bystanderAnswers();
    // The world that ran the hostile code still serves, unless the case ended it.
    const afterwards = world.call('evil', 'fine', '');
    return { result, alive: world.alive, afterwards };
  } finally {
    world.dispose();
  }
}

function codeOf(r: CallResult): string {
  return 'error' in r ? r.error.code : 'ok';
}

describe('hostile guests', () => {
  it('infinite loop: stopped by the default step budget', () => {
    const { result, afterwards } = hostile('for (;;) {}');
    expect(codeOf(result)).toBe('timeout');
    expect(afterwards).toEqual({ ok: 'still here' });
  });

  it('infinite loop that catches everything: the interrupt cannot be caught', () => {
    const { result, afterwards } = hostile('for (;;) { try { for (;;) {} } catch (e) {} finally { continue; } }', { callSteps: 500 });
    expect(codeOf(result)).toBe('timeout');
    expect(afterwards).toEqual({ ok: 'still here' });
  });

  it('endless microtasks: stopped by the budget, or by memory when each turn keeps a promise', () => {
    const loose = hostile('function spin() { Promise.resolve().then(spin); } spin(); return new Promise(() => {});', { callSteps: 500 });
    expect(codeOf(loose.result)).toBe('timeout');
    expect(loose.afterwards).toEqual({ ok: 'still here' });
    // Each turn here keeps its promise alive: memory runs out before the budget does, and
    // QuickJS, unable to queue the next job, strands the promise the call waits on.
    const chained = hostile('function spin() { return Promise.resolve().then(spin); } return spin();', { callSteps: 500, memoryBytes: 32 * 2 ** 20 });
    expect(codeOf(chained.result)).toBe('out_of_memory');
    expect(chained.afterwards).toEqual({ ok: 'still here' });
  });

  it('catastrophic regex: stopped by the budget', () => {
    const { result, afterwards } = hostile("return String(/(a+)+$/.test('a'.repeat(30) + 'b'));", { callSteps: 1000 });
    expect(codeOf(result)).toBe('timeout');
    expect(afterwards).toEqual({ ok: 'still here' });
  });

  it('memory bomb by string doubling: out_of_memory, and the world serves on', () => {
    const { result, afterwards } = hostile("let s = 'x'; for (;;) { s = s + s; s.indexOf('y'); }", { memoryBytes: 32 * 2 ** 20 });
    expect(codeOf(result)).toBe('out_of_memory');
    expect(afterwards).toEqual({ ok: 'still here' });
  });

  it('memory bomb by array growth: out_of_memory, and the world serves on', () => {
    const { result, afterwards } = hostile("const a = []; for (;;) a.push({ i: a.length, s: 'abc' + a.length });", { memoryBytes: 32 * 2 ** 20 });
    expect(codeOf(result)).toBe('out_of_memory');
    expect(afterwards).toEqual({ ok: 'still here' });
  });

  it('memory bomb of small objects in a Map (exhausts memory so far QuickJS throws null): out_of_memory', () => {
    const world = WorldSandbox.create(mod, { memoryBytes: 32 * 2 ** 20 });
    try {
      world.load('m', 'function go() { const m = new Map(); for (let i = 0; ; i++) m.set(i, { i }); } function nul() { throw null; }');
      expect(codeOf(world.call('m', 'go', ''))).toBe('out_of_memory');
      // The memory stays grown, yet a guest's own `throw null` afterwards is its own error.
      expect(world.call('m', 'nul', '')).toEqual({ error: { code: 'guest_error', message: 'null' } });
      expect(codeOf(world.call('m', 'go', ''))).toBe('out_of_memory');
    } finally {
      world.dispose();
    }
  });

  it('memory bomb of buffers: out_of_memory, never past the cap', () => {
    const world = WorldSandbox.create(mod, { memoryBytes: 32 * 2 ** 20 });
    try {
      world.load('b', 'const keep = []; function go() { for (;;) keep.push(new ArrayBuffer(4e6)); }');
      expect(codeOf(world.call('b', 'go', ''))).toBe('out_of_memory');
      expect(world.memoryUsage().wasmBytes).toBeLessThanOrEqual(32 * 2 ** 20);
    } finally {
      world.dispose();
    }
  });

  it('deep recursion: stack_overflow', () => {
    const { result, afterwards } = hostile('function f(n) { return f(n + 1) + 1; } return String(f(0));');
    expect(codeOf(result)).toBe('stack_overflow');
    expect(afterwards).toEqual({ ok: 'still here' });
  });

  it('deep recursion through getters, Proxy traps and toString: stack_overflow', () => {
    for (const body of [
      'const o = { get x() { return this.x; } }; return String(o.x);',
      'const p = new Proxy({}, { get(t, k, r) { return r[k]; } }); return String(p.x);',
      "const o = { toString() { return '' + o; } }; return '' + o;",
      'function f() { return [1].map(f); } return String(f());',
    ]) {
      const { result, afterwards } = hostile(body);
      expect(codeOf(result)).toBe('stack_overflow');
      expect(afterwards).toEqual({ ok: 'still here' });
    }
  });

  it('deep nesting in JSON: stack_overflow, and the world serves on', () => {
    for (const body of [
      "return String(JSON.parse('['.repeat(200000) + ']'.repeat(200000)));",
      'let o = {}; let c = o; for (let i = 0; i < 200000; i++) { c.a = {}; c = c.a; } return JSON.stringify(o);',
    ]) {
      const { result, alive, afterwards } = hostile(body);
      expect(codeOf(result)).toBe('stack_overflow');
      expect(alive).toBe(true);
      expect(afterwards).toEqual({ ok: 'still here' });
    }
  });

  it('deep nesting in the parser: stack_overflow; on a main thread it may end the world, never the host', () => {
    // The parser uses 21–32 bytes of native stack per byte of QuickJS stack. With a stack limit
    // that fits the thread (worker threads: see runtime/worker tests) it is a clean guest error;
    // on a main thread the default 64 KiB does not fit and the world is ended instead.
    const { result, alive, afterwards } = hostile("return String(eval('['.repeat(100000) + ']'.repeat(100000)));");
    expect(codeOf(result)).toBe('stack_overflow');
    expect(codeOf(afterwards)).toBe(alive ? 'ok' : 'disposed');
    const fitted = hostile("return String(eval('['.repeat(100000) + ']'.repeat(100000)));", { stackBytes: 24 * 1024 });
    expect(codeOf(fitted.result)).toBe('stack_overflow');
    expect(fitted.alive).toBe(true);
    expect(fitted.afterwards).toEqual({ ok: 'still here' });
  });

  it('a QuickJS stack too large for the thread: the host stack overflows, the world is ended, the host is not', () => {
    const { result, alive, afterwards } = hostile("return String(eval('['.repeat(100000) + ']'.repeat(100000)));", { stackBytes: 4 * 1024 * 1024 });
    expect(codeOf(result)).toBe('stack_overflow');
    expect(alive).toBe(false);
    expect(codeOf(afterwards)).toBe('disposed');
  });

  it('huge strings returned: delivered whole when they fit, refused when they do not', () => {
    const big = hostile("return 'x'.repeat(10e6);");
    expect('ok' in big.result && big.result.ok.length).toBe(10e6);
    const tooBig = hostile("return 'x'.repeat(2 ** 30);");
    expect(codeOf(tooBig.result)).toBe('guest_error');
    const overLimit = hostile("return 'y'.repeat(30e6);", { memoryBytes: 32 * 2 ** 20 });
    expect(codeOf(overLimit.result)).toBe('out_of_memory');
    expect(overLimit.afterwards).toEqual({ ok: 'still here' });
  });

  it('prototype poisoning stays in its own context: not in another context, another world or the host', () => {
    const world = WorldSandbox.create(mod);
    try {
      world.load('poison', `function go() {
        Object.prototype.polluted = 'yes';
        Array.prototype.push = function () { throw new Error('poisoned push'); };
        JSON.stringify = function () { return 'pwned'; };
        String.prototype.toString = function () { return 'pwned'; };
        Object.defineProperty(Object.prototype, 'name', { get() { throw new Error('poisoned name'); }, configurable: true });
        return 'poisoned';
      } function after() { return JSON.stringify({ a: 1 }) + '|' + ({}).polluted; }
      function throws() { throw new Error('still described'); }`);
      world.load('clean', `function go() { const a = []; a.push(1); return JSON.stringify({ polluted: ({}).polluted, a, s: 'x'.toString() }); }`);
      expect(world.call('poison', 'go', '')).toEqual({ ok: 'poisoned' });
      // The poisoned context hurts only itself; the host still reads its answers and errors.
      expect(world.call('poison', 'after', '')).toEqual({ ok: 'pwned|yes' });
      expect(codeOf(world.call('poison', 'throws', ''))).toBe('guest_error');
      expect(world.call('clean', 'go', '')).toEqual({ ok: '{"a":[1],"s":"x"}' });
      expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
      expect(JSON.stringify({ a: 1 })).toBe('{"a":1}');
    } finally {
      world.dispose();
    }
  });

  it('poisoned Promise.prototype.then and Proxy results: the host reads only strings, never a guest object', () => {
    const world = WorldSandbox.create(mod);
    try {
      world.load('p', `
        async function asyncAnswer() { return 'x'; }
        function proxyAnswer() { return new Proxy({}, { get() { throw new Error('trap'); } }); }
        function poison() {
          Promise.prototype.then = function () { return new Proxy({}, { get() { throw new Error('trap'); }, getPrototypeOf() { throw 1; } }); };
          return 'ok';
        }`);
      expect(world.call('p', 'asyncAnswer', '')).toEqual({ ok: 'x' });
      expect(codeOf(world.call('p', 'proxyAnswer', ''))).toBe('guest_error');
      expect(world.call('p', 'poison', '')).toEqual({ ok: 'ok' });
      expect(codeOf(world.call('p', 'asyncAnswer', ''))).toBe('guest_error');
      expect(world.call('p', 'poison', '')).toEqual({ ok: 'ok' });
    } finally {
      world.dispose();
    }
  });

  it('Function, eval and constructor.constructor reach only the guest global', () => {
    const probe = `
      const viaFunction = Function('return this')();
      const viaCtor = (() => {}).constructor.constructor('return globalThis')();
      const viaEval = (0, eval)('this');
      const viaHost = __host_call.constructor('return this')();
      const names = ['process', 'require', 'module', 'global', 'console', 'setTimeout', 'setInterval', 'queueMicrotask', 'fetch', 'WebAssembly', 'Buffer', 'std', 'os', '__host_raw'];
      const seen = [];
      for (const g of [viaFunction, viaCtor, viaEval, viaHost]) {
        if (g !== globalThis) seen.push('other global');
        for (const n of names) if (typeof g[n] !== 'undefined') seen.push(n);
      }
      return JSON.stringify(seen);`;
    const world = WorldSandbox.create(mod);
    try {
      world.load('p', `function go() { ${probe} }`, { hostCall: true });
      expect(world.call('p', 'go', '', () => '')).toEqual({ ok: '[]' });
    } finally {
      world.dispose();
    }
  });

  it('no module loading: import() is refused inside the guest', () => {
    const world = WorldSandbox.create(mod);
    try {
      world.load('i', "async function go() { try { await import('node:fs'); return 'loaded'; } catch (e) { return 'refused'; } }");
      expect(world.call('i', 'go', '')).toEqual({ ok: 'refused' });
      expect(codeOf(world.load('m', "import fs from 'node:fs';"))).toBe('load_error');
    } finally {
      world.dispose();
    }
  });

  it("reaching for another world's objects: each world has its own global", () => {
    const a = WorldSandbox.create(mod);
    const b = WorldSandbox.create(mod);
    try {
      a.load('x', "globalThis.secret = 'a-secret'; function go() { return String(globalThis.secret); }");
      b.load('x', 'function go() { return String(globalThis.secret) + String(Object.getOwnPropertyNames(globalThis).includes("secret")); }');
      expect(a.call('x', 'go', '')).toEqual({ ok: 'a-secret' });
      expect(b.call('x', 'go', '')).toEqual({ ok: 'undefinedfalse' });
    } finally {
      a.dispose();
      b.dispose();
    }
  });

  it('throwing non-Error values: each a guest_error with a readable message', () => {
    const cases: [string, string][] = [
      ['throw 1;', '1'],
      ['throw null;', 'null'],
      ['throw undefined;', 'undefined'],
      ["throw 'plain';", 'plain'],
      ["throw Symbol('s');", 'Symbol(s)'],
      ['throw { toString() { throw 1; } };', 'a thrown value that cannot be described'],
      ['throw new Proxy({}, { get() { throw 1; } });', 'a thrown value that cannot be described'],
      ['throw { get name() { for (;;) {} } };', 'a thrown value that cannot be described'],
      ["throw { name: 'Custom', message: 'shaped like an error' };", 'Custom: shaped like an error'],
    ];
    for (const [body, message] of cases) {
      const { result, afterwards } = hostile(body);
      expect(result).toEqual({ error: { code: 'guest_error', message } });
      expect(afterwards).toEqual({ ok: 'still here' });
    }
  });
});
