import { describe, expect, it } from 'vitest';
import { TrustedContexts } from './trusted.js';
import type { CallResult } from './sandbox.js';

function ok(r: CallResult): string {
  if ('error' in r) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.ok;
}

describe('TrustedContexts (V8 contexts for trusted code)', () => {
  it('loads a script and calls its globals, one string in and one out', () => {
    using engine = new TrustedContexts();
    ok(engine.load('a', 'globalThis.twice = (s) => s + s;'));
    expect(ok(engine.call('a', 'twice', 'ab'))).toBe('abab');
  });

  it('keeps contexts apart: globals and prototypes are not shared', () => {
    using engine = new TrustedContexts();
    ok(engine.load('a', 'globalThis.x = 1; Array.prototype.poisoned = true; globalThis.read = () => String(globalThis.x);'));
    ok(engine.load('b', 'globalThis.read = () => String(typeof globalThis.x) + String([].poisoned);'));
    expect(ok(engine.call('a', 'read', ''))).toBe('1');
    expect(ok(engine.call('b', 'read', ''))).toBe('undefinedundefined');
  });

  it('offers the host function during a call only, and carries its failures as HostError with their code', () => {
    using engine = new TrustedContexts();
    ok(
      engine.load(
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

  it('callValue: the input itself, and __host_value answering values, during that call only', () => {
    using engine = new TrustedContexts();
    ok(
      engine.load(
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

  it("keeps a call's clones in a write handed over during that call only", () => {
    using engine = new TrustedContexts();
    ok(
      engine.load(
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

  it('passes strings with NUL, lone surrogates and a leading U+0001 through whole, both ways', () => {
    using engine = new TrustedContexts();
    ok(engine.load('a', `globalThis.echo = (s) => s; globalThis.viaHost = (s) => __host_call(s, s);`, { hostCall: true }));
    for (const s of ['a\u0000b', '\ud800x', '\u0001{"not":"json"}', '\u0001"x"', '']) {
      expect(ok(engine.call('a', 'echo', s))).toBe(s);
      expect(ok(engine.call('a', 'viaHost', s, (op, arg) => (op === arg ? arg : 'mismatch')))).toBe(s);
    }
  });

  it('names guest failures as the QuickJS sandbox does', () => {
    using engine = new TrustedContexts();
    ok(
      engine.load(
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

  it('answers load_error for a script that fails and for a name never loaded, and disposed after dispose', () => {
    const engine = new TrustedContexts();
    expect(engine.load('a', 'this is not javascript')).toMatchObject({ error: { code: 'load_error', message: expect.stringContaining('SyntaxError') } });
    expect(engine.load('b', 'throw new Error("at load")')).toMatchObject({ error: { code: 'load_error', message: 'Error: at load' } });
    expect(engine.call('a', 'f', '')).toMatchObject({ error: { code: 'load_error' } });
    engine.dispose();
    expect(engine.alive).toBe(false);
    expect(engine.call('a', 'f', '')).toMatchObject({ error: { code: 'disposed' } });
  });

  it("binds the context's own builtins for speed, but not Date, which a guest runtime replaces after load", () => {
    using engine = new TrustedContexts();
    ok(
      engine.load(
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

  it('replaces a context loaded again under the same name', () => {
    using engine = new TrustedContexts();
    ok(engine.load('a', 'globalThis.v = () => "one";'));
    ok(engine.load('a', 'globalThis.w = () => typeof globalThis.v;'));
    expect(ok(engine.call('a', 'w', ''))).toBe('undefined');
  });

  it('seeds Math.random with the prelude generator, so a context started twice draws the same numbers', () => {
    const draw = (): string => {
      using engine = new TrustedContexts();
      ok(engine.load('a', 'globalThis.r = () => String(Math.random());'));
      return ok(engine.call('a', 'r', ''));
    };
    expect(draw()).toBe(draw());
  });
});
