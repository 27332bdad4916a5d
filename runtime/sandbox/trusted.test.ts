import { describe, expect, it } from 'vitest';
import { TrustedContexts } from './trusted.js';
import { edgeTrustedRealms, type TrustedRealmLoader } from './trusted-edge.js';
import { nodeTrustedRealms } from './trusted-node.js';
import { importTrustedRealms } from './fixtures/edge-modules.js';
import type { CallResult, LoadOptions } from './sandbox.js';

function ok(r: CallResult): string {
  if ('error' in r) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.ok;
}

/**
 * The two ways a realm is made: a `node:vm` context (Node), and the module `trustedModuleSource`
 * wrote for the script, imported (workerd: no vm, no eval). For the second, each script's module
 * is built before it loads (`prepare`), as the edge build does before the Worker runs.
 */
const realmKinds = {
  'node:vm contexts': { engine: () => new TrustedContexts(nodeTrustedRealms), prepare: async (_source: string) => undefined },
  'modules written at build time': (() => {
    const loaders = new Map<string, TrustedRealmLoader>();
    return {
      engine: () => new TrustedContexts(edgeTrustedRealms(loaders)),
      prepare: async (source: string) => {
        for (const [s, l] of await importTrustedRealms([source])) loaders.set(s, l);
      },
    };
  })(),
};

for (const [kind, { engine: newEngine, prepare }] of Object.entries(realmKinds)) {
const load = async (engine: TrustedContexts, name: string, source: string, options?: Pick<LoadOptions, 'hostCall'>): Promise<CallResult> => {
  await prepare(source);
  return engine.load(name, source, options);
};

describe(`TrustedContexts (${kind})`, () => {
  it('loads a script and calls its globals, one string in and one out', async () => {
    using engine = newEngine();
    ok(await load(engine, 'a', 'globalThis.twice = (s) => s + s;'));
    expect(ok(engine.call('a', 'twice', 'ab'))).toBe('abab');
  });

  it('keeps contexts apart: globals are not shared (and, in vm contexts, nor are prototypes)', async () => {
    using engine = newEngine();
    ok(await load(engine, 'a', 'globalThis.x = 1; Array.prototype.poisoned = true; globalThis.read = () => String(globalThis.x);'));
    ok(await load(engine, 'b', 'globalThis.read = () => String(typeof globalThis.x) + String([].poisoned);'));
    try {
      expect(ok(engine.call('a', 'read', ''))).toBe('1');
      // Realms from modules share the isolate's intrinsics (trusted code changes none): only vm contexts have their own.
      expect(ok(engine.call('b', 'read', ''))).toBe(kind === 'node:vm contexts' ? 'undefinedundefined' : 'undefinedtrue');
    } finally {
      delete (Array.prototype as { poisoned?: boolean }).poisoned;
    }
  });

  it('offers the host function during a call only, and carries its failures as HostError with their code', async () => {
    using engine = newEngine();
    ok(
      await load(engine, 
        'a',
        `globalThis.ask = (s) => __host_call('echo', s);
         globalThis.fail = () => { try { __host_call('boom', '{}'); return 'no'; } catch (e) { return e.name + '|' + e.code + '|' + e.message; } };`,
        { hostCall: true },
      ),
    );
    const host = (op: string, arg: string): string => {
      if (op === 'boom') throw Object.assign(new Error('the tree is closed'), { code: 'storage_closed' });
      return `${op}:${arg}`;
    };
    expect(ok(engine.call('a', 'ask', '{"k":1}', host))).toBe('echo:{"k":1}');
    expect(ok(engine.call('a', 'fail', '', host))).toBe('HostError|storage_closed|the tree is closed');
    const without = engine.call('a', 'ask', 'x');
    expect('error' in without && without.error.message).toContain('no host function is offered');
  });

  it('callValue: the input itself, and __host_value answering values, during that call only', async () => {
    using engine = newEngine();
    ok(
      await load(engine, 
        'a',
        `globalThis.read = (input) => {
           const got = __host_value('get', { id: input.id });
           got.seen = true;
           let failure = '';
           try { __host_value('boom', {}); } catch (e) { failure = e.name + '|' + e.code; }
           return JSON.stringify({ isArray: Array.isArray(input.list), got, failure });
         };
         globalThis.later = () => { try { __host_value('get', { id: 'x' }); return 'offered'; } catch (e) { return e.message; } };`,
        { hostCall: true },
      ),
    );
    const record = { id: 'x', n: 1 };
    const hostValue = (op: string, arg: Record<string, unknown>): unknown => {
      if (op === 'boom') throw Object.assign(new Error('closed'), { code: 'storage_closed' });
      return { ...record, asked: arg['id'] };
    };
    const out = JSON.parse(ok(engine.callValue('a', 'read', { id: 'x', list: [1, 2] }, () => 'null', hostValue)));
    expect(out).toEqual({ isArray: true, got: { id: 'x', n: 1, asked: 'x', seen: true }, failure: 'HostError|storage_closed' });
    // What the host answered was a copy it made: its own record is untouched.
    expect(record).toEqual({ id: 'x', n: 1 });
    // A string call offers no value function.
    expect(ok(engine.call('a', 'later', ''))).toContain('no host function is offered');
  });

  it("keeps a call's clones in a write handed over during that call only", async () => {
    using engine = newEngine();
    ok(
      await load(engine, 
        'a',
        `globalThis.within = () => {
           globalThis.made = __host_clone({ a: [1, 'b'] });
           const adopted = __host_adopt({ record: made });
           return String(adopted.record === made) + '|' + String(__host_copy({ record: made }).record === made);
         };
         globalThis.after = () => String(__host_adopt({ record: made }).record === made) + '|' + JSON.stringify(__host_adopt({ record: made }));`,
        { hostCall: true },
      ),
    );
    expect(ok(engine.call('a', 'within', ''))).toBe('true|false');
    // The next call may have changed it: it is copied.
    expect(ok(engine.call('a', 'after', ''))).toBe('false|{"record":{"a":[1,"b"]}}');
  });

  it('passes strings with NUL, lone surrogates and a leading U+0001 through whole, both ways', async () => {
    using engine = newEngine();
    ok(await load(engine, 'a', `globalThis.echo = (s) => s; globalThis.viaHost = (s) => __host_call(s, s);`, { hostCall: true }));
    for (const s of ['a\u0000b', '\ud800x', '\u0001{"not":"json"}', '\u0001"x"', '']) {
      expect(ok(engine.call('a', 'echo', s))).toBe(s);
      expect(ok(engine.call('a', 'viaHost', s, (op, arg) => (op === arg ? arg : 'mismatch')))).toBe(s);
    }
  });

  it('names guest failures as the QuickJS sandbox does', async () => {
    using engine = newEngine();
    ok(
      await load(engine, 
        'a',
        `globalThis.throws = () => { throw new TypeError('bad input'); };
         globalThis.throwsString = () => { throw 'plain'; };
         globalThis.deep = () => { const f = (n) => f(n + 1) + 1; return String(f(0)); };
         globalThis.notString = () => 42;
         globalThis.promise = async () => 'later';`,
      ),
    );
    expect(engine.call('a', 'throws', '')).toEqual({ error: { code: 'guest_error', message: 'TypeError: bad input' } });
    expect(engine.call('a', 'throwsString', '')).toEqual({ error: { code: 'guest_error', message: 'plain' } });
    expect(engine.call('a', 'deep', '')).toMatchObject({ error: { code: 'stack_overflow' } });
    expect(engine.call('a', 'notString', '')).toMatchObject({ error: { code: 'guest_error', message: expect.stringContaining('not a string') } });
    expect(engine.call('a', 'promise', '')).toMatchObject({ error: { code: 'guest_error', message: expect.stringContaining('synchronous') } });
    expect(engine.call('a', 'missing', '')).toMatchObject({ error: { code: 'guest_error', message: expect.stringContaining("'missing' is not a function") } });
  });

  it('answers load_error for a script that fails and for a name never loaded, and disposed after dispose', async () => {
    const engine = newEngine();
    // A script that does not parse: a SyntaxError in a vm context; on the edge its module cannot be built, and it cannot load.
    if (kind === 'node:vm contexts') expect(await load(engine, 'a', 'this is not javascript')).toMatchObject({ error: { code: 'load_error', message: expect.stringContaining('SyntaxError') } });
    else {
      await expect(prepare('this is not javascript')).rejects.toThrow(/does not parse/);
      expect(engine.load('a', 'this is not javascript')).toMatchObject({ error: { code: 'load_error', message: expect.stringContaining("no trusted module was built for the script loaded as 'a'") } });
    }
    expect(await load(engine, 'b', 'throw new Error("at load")')).toMatchObject({ error: { code: 'load_error', message: 'Error: at load' } });
    expect(engine.call('a', 'f', '')).toMatchObject({ error: { code: 'load_error' } });
    engine.dispose();
    expect(engine.alive).toBe(false);
    expect(engine.call('a', 'f', '')).toMatchObject({ error: { code: 'disposed' } });
  });

  it("binds the context's own builtins for speed, but not Date, which a guest runtime replaces after load", async () => {
    using engine = newEngine();
    ok(
      await load(engine, 
        'a',
        `globalThis.same = () => String(JSON === globalThis.JSON && Math === globalThis.Math && [] instanceof Array && Object.getPrototypeOf({}) === globalThis.Object.prototype);
         globalThis.replaceDate = () => { globalThis.Date = { now: () => 42 }; return ''; };
         globalThis.now = () => String(Date.now());`,
      ),
    );
    expect(ok(engine.call('a', 'same', ''))).toBe('true');
    ok(engine.call('a', 'replaceDate', ''));
    expect(ok(engine.call('a', 'now', ''))).toBe('42');
  });

  it('replaces a context loaded again under the same name', async () => {
    using engine = newEngine();
    ok(await load(engine, 'a', 'globalThis.v = () => "one";'));
    ok(await load(engine, 'a', 'globalThis.w = () => typeof globalThis.v;'));
    expect(ok(engine.call('a', 'w', ''))).toBe('undefined');
  });

  it('seeds Math.random with the prelude generator, so a context started twice draws the same numbers', async () => {
    const draw = async (): Promise<string> => {
      using engine = newEngine();
      ok(await load(engine, 'a', 'globalThis.r = () => String(Math.random());'));
      return ok(engine.call('a', 'r', ''));
    };
    expect(await draw()).toBe(await draw());
  });
});
}
