/**
 * `__host_bytes` at the boundary, in QuickJS and in a trusted realm: offered only with
 * `hostCall` and only by an engine given a `HostBytes`; inputs must be Uint8Arrays; a view
 * crosses as its own bytes; a host failure is a HostError with its code, which the guest catches.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { loadSandboxModule, nodeTrustedRealms, TrustedContexts, WorldSandbox } from './index.js';
import type { GuestEngine, HostBytes } from './index.js';

const seen: number[][] = [];
const echo: HostBytes = (op, arg, inputs) => {
  seen.push(inputs.map((i) => i.length));
  if (op === 'fail') throw Object.assign(new Error('no such thing'), { code: 'bad_data' });
  if (op === 'pair') return [Uint8Array.from(inputs[0] ?? []).reverse(), arg + 1];
  if (op === 'odd') return 'text' as unknown as Uint8Array;
  return Uint8Array.from(inputs.flatMap((i) => [...i]));
};

const SCRIPT = `
  globalThis.kind = () => typeof globalThis.__host_bytes;
  globalThis.join = () => { const r = __host_bytes('join', 0, new Uint8Array([1, 2]), new Uint8Array([9, 8, 7, 6]).subarray(1, 3)); return (r instanceof Uint8Array) + ':' + Array.from(r).join(','); };
  globalThis.pair = () => { const r = __host_bytes('pair', 41, new Uint8Array([1, 2, 3])); return Array.from(r.bytes).join(',') + ':' + r.n; };
  globalThis.fail = () => { try { __host_bytes('fail', 0); return 'no'; } catch (e) { return e.name + '|' + e.code + '|' + e.message; } };
  globalThis.notBytes = () => { try { __host_bytes('join', 0, [1, 2]); return 'no'; } catch (e) { return e.name; } };
  globalThis.badArgs = () => { try { __host_bytes(1, 'x'); return 'no'; } catch (e) { return e.name; } };
  globalThis.odd = () => { try { __host_bytes('odd', 0); return 'no'; } catch (e) { return e.name; } };
`;

const made: GuestEngine[] = [];
afterAll(() => {
  for (const e of made) e.dispose();
});

async function engine(kind: 'quickjs' | 'trusted', hostBytes?: HostBytes): Promise<GuestEngine> {
  const e = kind === 'quickjs' ? WorldSandbox.create(await loadSandboxModule(), {}, hostBytes) : new TrustedContexts(nodeTrustedRealms, hostBytes);
  made.push(e);
  return e;
}

function call(e: GuestEngine, name: string, fn: string): string {
  const r = e.call(name, fn, '', () => 'null');
  if ('error' in r) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.ok;
}

describe.each(['quickjs', 'trusted'] as const)('__host_bytes in %s', (kind) => {
  it('is offered only to contexts loaded with hostCall, by an engine given one', async () => {
    const e = await engine(kind, echo);
    e.load('with', SCRIPT, { hostCall: true });
    e.load('without', SCRIPT);
    expect(call(e, 'with', 'kind')).toBe('function');
    expect(call(e, 'without', 'kind')).toBe('undefined');
    const bare = await engine(kind);
    bare.load('with', SCRIPT, { hostCall: true });
    expect(call(bare, 'with', 'kind')).toBe('undefined');
  });

  it('passes each view as its own bytes and answers the guest Uint8Arrays', async () => {
    const e = await engine(kind, echo);
    e.load('s', SCRIPT, { hostCall: true });
    seen.length = 0;
    expect(call(e, 's', 'join')).toBe('true:1,2,8,7');
    expect(seen).toEqual([[2, 2]]);
    expect(call(e, 's', 'pair')).toBe('3,2,1:42');
  });

  it('makes a host failure a HostError with its code, and refuses what is not bytes', async () => {
    const e = await engine(kind, echo);
    e.load('s', SCRIPT, { hostCall: true });
    expect(call(e, 's', 'fail')).toBe('HostError|bad_data|no such thing');
    expect(call(e, 's', 'notBytes')).toBe('TypeError');
    expect(call(e, 's', 'badArgs')).toBe('TypeError');
    expect(call(e, 's', 'odd')).toBe('HostError');
  });
});
